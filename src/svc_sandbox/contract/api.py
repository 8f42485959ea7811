"""The contract's HTTP edge: validates every commerce, identity and wallet request
(conformance recording) and, in strict mode, every response; serves each contract at its
root: {base_url}/openapi.json, {auth_url}/openapi.json and {wallet_base_url}/openapi.json.

app.py calls ``install`` once, ``validate_request`` from its before-request hook and
``check_response`` from its after-request hook, after the request id is stamped, so that the
response is checked exactly as the client gets it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flask import Blueprint, Flask, Request, Response, request

from svc_sandbox.contract.conformance import ConformanceRecorder, Exchange
from svc_sandbox.contract.document import COMMERCE, IDENTITY, WALLET, served_contract
from svc_sandbox.contract.validation import Operation, Violation
from svc_sandbox.web import CONTRACT_CHECK, json_response, sandbox, sandbox_of

if TYPE_CHECKING:
    from svc_sandbox.sandbox import Sandbox

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


ROOTS_EXTENSION = "svc_sandbox.contract_roots"


@dataclass(slots=True)
class ContractCheck:
    """One request's conformance: what ``validate_request`` found, completed by
    ``check_response`` and recorded then (one object per request, in its environ)."""

    recorder: ConformanceRecorder
    operation: Operation | None
    violations: list[Violation] = field(default_factory=list)
    notices: list[dict[str, str]] = field(default_factory=list)


def install(app: Flask) -> None:
    """Mounts /openapi.json under each root; app.py's request hooks call ``validate_request``
    and ``check_response`` for the requests under a contract root."""
    settings = sandbox_of(app).settings
    app.extensions[ROOTS_EXTENSION] = [(name, settings.path_of(root)) for name, root in ROOTS]
    for name, root in ROOTS:
        app.register_blueprint(document_blueprint(name, root), url_prefix=settings.path_of(root))


def validate_request(app: Flask, sb: Sandbox, current: Request) -> None:
    """Checks a request to a contract root against its contract (the violations are recorded
    with the response); requests elsewhere are not checked."""
    path = current.path
    for name, root_path in app.extensions[ROOTS_EXTENSION]:
        relative = relative_path(path, root_path)
        if relative is not None and relative != CONTRACT_ROUTE:
            recorder = sb.recorders[name]
            if relative == "/" and recorder.contract.find(current.method, "/") is None:
                return  # the bare root of a contract without a "/" operation
            current.environ[CONTRACT_CHECK] = validate(recorder, current, relative)
            return


def validate(recorder: ConformanceRecorder, current: Request, relative: str) -> ContractCheck:
    contract = recorder.contract
    match = contract.find(current.method, relative)
    if match is None:
        return ContractCheck(recorder, None)
    operation, path_params = match
    violations = contract.validate_request(
        operation,
        path_params,
        # Only what the operation declares is read (most read neither query nor headers).
        current.args.to_dict(flat=False) if operation.reads_query else {},
        dict(current.headers) if operation.reads_headers else {},
        # The header as the server put it (``current.content_type`` builds a headers view).
        current.environ.get("CONTENT_TYPE") if operation.takes_body else None,
        current.get_data(cache=True) if operation.takes_body else b"",
    )
    return ContractCheck(recorder, operation, violations)


def check_response(sb: Sandbox, current: Request, response: Response, request_id: str) -> Response:
    """Records the exchange; in strict mode a response that breaks the contract becomes a
    500 naming every violation and its schema path (and is logged as an error)."""
    check: ContractCheck | None = current.environ.pop(CONTRACT_CHECK, None)
    if check is None:
        return response
    operation, recorder, violations = check.operation, check.recorder, check.violations
    exchange = Exchange(request_id, current.method, current.path, response.status_code)
    if operation is not None and sb.settings.strict:
        broken = recorder.contract.validate_response(
            operation,
            response.status_code,
            response.headers,
            response.content_type,
            response.get_data(),
        )
        if broken:
            recorder.record(exchange, operation, [*violations, *broken], check.notices)
            return strict_failure(response, operation, broken, request_id)
    recorder.record(exchange, operation, violations, check.notices)
    return response


def notice(location: str, message: str) -> None:
    """Notes in the conformance report something this request did that had no effect."""
    check: ContractCheck | None = request.environ.get(CONTRACT_CHECK)
    if check is not None:
        check.notices.append({"location": location, "message": message})


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
