"""The contract's HTTP edge: validates every commerce, identity and wallet request
(conformance recording) and, in strict mode, every response; serves each contract at its
root: {base_url}/openapi.json, {auth_url}/openapi.json and {wallet_base_url}/openapi.json.

app.py calls ``install`` once and ``check_response`` from its after-request hook, after the
request id is stamped, so that the response is checked exactly as the client gets it.
"""

from __future__ import annotations

import json
import logging

from flask import Blueprint, Flask, Response, g, request

from svc_sandbox.contract.conformance import ConformanceRecorder, Exchange
from svc_sandbox.contract.document import COMMERCE, IDENTITY, WALLET, served_contract
from svc_sandbox.contract.validation import Operation, Violation
from svc_sandbox.web import json_response, sandbox, sandbox_of

log = logging.getLogger("svc_sandbox.contract")

CONTRACT_ROUTE = "/openapi.json"
#: Each contract and the settings root it is served under.
ROOTS = ((COMMERCE, "base_url"), (IDENTITY, "auth_url"), (WALLET, "wallet_base_url"))


def document_blueprint(name: str, root: str) -> Blueprint:
    """GET <root>/openapi.json: the contract ``name`` with its server set to this root."""
    served = Blueprint(f"contract_{root}", __name__)

    @served.get(CONTRACT_ROUTE)
    def openapi_document() -> Response:
        return json_response(served_contract(sandbox().settings.root(root), name))

    return served


def relative_path(path: str, root_path: str) -> str | None:
    """``path`` relative to a root (the root itself is ``/``), None when outside it."""
    if path == root_path:
        return "/"
    if path.startswith(root_path + "/"):
        return path[len(root_path) :]
    return None


def install(app: Flask) -> None:
    """Mounts /openapi.json under each root and validates each request to a contract root."""
    settings = sandbox_of(app).settings
    roots = [(name, settings.path_of(root)) for name, root in ROOTS]
    for name, root in ROOTS:
        app.register_blueprint(document_blueprint(name, root), url_prefix=settings.path_of(root))

    @app.before_request
    def validate_request() -> None:
        for name, root_path in roots:
            relative = relative_path(request.path, root_path)
            if relative is not None and relative != CONTRACT_ROUTE:
                recorder = sandbox().recorders[name]
                if relative == "/" and recorder.contract.find(request.method, "/") is None:
                    return  # the bare root of a contract without a "/" operation
                validate(recorder, relative)
                return


def validate(recorder: ConformanceRecorder, relative: str) -> None:
    contract = recorder.contract
    g.contract_recorder = recorder
    match = contract.find(request.method, relative)
    g.contract_operation = None if match is None else match[0]
    if match is None:
        return
    operation, path_params = match
    g.contract_violations = contract.validate_request(
        operation,
        path_params,
        # Only what the operation declares is read (most read neither query nor headers).
        request.args.to_dict(flat=False) if operation.reads_query else {},
        dict(request.headers) if operation.reads_headers else {},
        request.content_type if operation.takes_body else None,
        request.get_data(cache=True) if operation.takes_body else b"",
    )


def check_response(response: Response, request_id: str) -> Response:
    """Records the exchange; in strict mode a response that breaks the contract becomes a
    500 naming every violation and its schema path (and is logged as an error)."""
    if "contract_operation" not in g:
        return response
    operation: Operation | None = g.contract_operation
    violations: list[Violation] = list(g.get("contract_violations", []))
    recorder: ConformanceRecorder = g.contract_recorder
    sb = sandbox()
    exchange = Exchange(request_id, request.method, request.path, response.status_code)
    if operation is not None and sb.settings.strict:
        broken = recorder.contract.validate_response(
            operation,
            response.status_code,
            dict(response.headers),
            response.content_type,
            response.get_data(),
        )
        if broken:
            violations += broken
            recorder.record(exchange, operation, violations, g.get("contract_notices"))
            return strict_failure(response, operation, broken, request_id)
    recorder.record(exchange, operation, violations, g.get("contract_notices"))
    return response


def notice(location: str, message: str) -> None:
    """Notes in the conformance report something this request did that had no effect."""
    g.setdefault("contract_notices", []).append({"location": location, "message": message})


def strict_failure(
    original: Response, operation: Operation, broken: list[Violation], request_id: str
) -> Response:
    details = [v.to_json() for v in broken]
    first = broken[0]
    message = (
        f"strict mode: the {original.status_code} response of {operation.label} breaks the "
        f"contract at {first.schema_path} ({first.location}: {first.message})"
    )
    log.error("%s [request %s]; all violations: %s", message, request_id, json.dumps(details))
    failure = json_response(
        {"error": message, "status": original.status_code, "violations": details}, 500
    )
    failure.headers["X-Request-Id"] = request_id
    return failure
