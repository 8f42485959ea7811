"""The contract's HTTP edge: validates every commerce and identity request (conformance
recording) and, in strict mode, every response; serves the contracts at
{base_url}/openapi.json and {auth_url}/openapi.json.

app.py calls ``install`` once and ``check_response`` from its after-request hook, after the
request id is stamped, so that the response is checked exactly as the client gets it.
"""

from __future__ import annotations

import json
import logging

from flask import Blueprint, Flask, Response, g, request

from svc_sandbox.contract.conformance import ConformanceRecorder, Exchange
from svc_sandbox.contract.document import IDENTITY, served_contract
from svc_sandbox.contract.validation import Operation, Violation
from svc_sandbox.web import json_response, sandbox, sandbox_of

log = logging.getLogger("svc_sandbox.contract")

blueprint = Blueprint("contract", __name__)
identity_blueprint = Blueprint("identity_contract", __name__)

CONTRACT_ROUTE = "/openapi.json"


@blueprint.get(CONTRACT_ROUTE)
def openapi_document() -> Response:
    return json_response(served_contract(sandbox().settings.root("base_url")))


@identity_blueprint.get(CONTRACT_ROUTE)
def identity_openapi_document() -> Response:
    return json_response(served_contract(sandbox().settings.issuer, IDENTITY))


def recorder_for(path: str) -> tuple[ConformanceRecorder, str] | None:
    """The conformance recorder of the family serving ``path`` and the path within its root."""
    sb = sandbox()
    for root, recorder in (
        ("base_url", sb.conformance),
        ("auth_url", sb.identity_conformance),
    ):
        prefix = sb.settings.path_of(root)
        if path.startswith(prefix + "/"):
            return recorder, path[len(prefix) :]
    return None


def install(app: Flask) -> None:
    """Mounts /openapi.json under {base_url} and {auth_url}; validates each request of both."""
    settings = sandbox_of(app).settings
    app.register_blueprint(blueprint, url_prefix=settings.path_of("base_url"))
    app.register_blueprint(identity_blueprint, url_prefix=settings.path_of("auth_url"))

    @app.before_request
    def validate_request() -> None:
        found = recorder_for(request.path)
        if found is None:
            return
        recorder, relative = found
        if relative == CONTRACT_ROUTE:
            return
        g.contract_recorder = recorder
        contract = recorder.contract
        match = contract.find(request.method, relative)
        g.contract_operation = None if match is None else match[0]
        if match is None:
            return
        operation, path_params = match
        g.contract_violations = contract.validate_request(
            operation,
            path_params,
            request.args.to_dict(flat=False),
            dict(request.headers),
            request.content_type,
            request.get_data(cache=True),
        )


def check_response(response: Response, request_id: str) -> Response:
    """Records the exchange; in strict mode a response that breaks the contract becomes a
    500 naming every violation and its schema path (and is logged as an error)."""
    if "contract_operation" not in g:
        return response
    operation: Operation | None = g.contract_operation
    violations: list[Violation] = list(g.get("contract_violations", []))
    sb = sandbox()
    recorder: ConformanceRecorder = g.contract_recorder
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
