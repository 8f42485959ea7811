"""The contract's HTTP edge: validates every commerce request (conformance recording) and,
in strict mode, every response; serves the contract at {base_url}/openapi.json.

app.py calls ``install`` once, ``validate_request`` from its before-request hook (after the
request id) and ``check_response`` from its after-request hook, after the request id is
stamped, so that the response is checked exactly as the client gets it.
"""

from __future__ import annotations

import json
import logging

from flask import Blueprint, Flask, Request, Response, g

from svc_sandbox.contract.conformance import Exchange
from svc_sandbox.contract.document import served_contract
from svc_sandbox.contract.validation import Operation, Violation
from svc_sandbox.web import json_response, sandbox, sandbox_of

log = logging.getLogger("svc_sandbox.contract")

blueprint = Blueprint("contract", __name__)

CONTRACT_ROUTE = "/openapi.json"


@blueprint.get(CONTRACT_ROUTE)
def openapi_document() -> Response:
    return json_response(served_contract(sandbox().settings.root("base_url")))


#: Where the edge keeps, per request, the operation matched and the request's violations.
MATCH_KEY = "svc_sandbox.contract"


def install(app: Flask) -> None:
    """Mounts /openapi.json under {base_url}; app.py calls ``validate_request`` per request."""
    base_path = sandbox_of(app).settings.path_of("base_url")
    app.register_blueprint(blueprint, url_prefix=base_path)


def validate_request(req: Request, base_path: str) -> None:
    """Matches a request to {base_url} with its operation and checks it (before the view)."""
    path = req.path
    if not path.startswith(base_path + "/"):
        return
    relative = path[len(base_path) :]
    if relative == CONTRACT_ROUTE:
        return
    contract = sandbox().conformance.contract
    match = contract.find(req.method, relative)
    if match is None:
        req.environ[MATCH_KEY] = (None, [])
        return
    operation, path_params = match
    req.environ[MATCH_KEY] = (
        operation,
        contract.validate_request(
            operation,
            path_params,
            req.args.to_dict(flat=False) if operation.reads_query else {},
            dict(req.headers) if operation.reads_headers else {},
            req.content_type if operation.takes_body else None,
            req.get_data(cache=True) if operation.takes_body else b"",
        ),
    )


def check_response(req: Request, response: Response, request_id: str) -> Response:
    """Records the exchange; in strict mode a response that breaks the contract becomes a
    500 naming every violation and its schema path (and is logged as an error)."""
    matched = req.environ.get(MATCH_KEY)
    if matched is None:
        return response
    operation: Operation | None = matched[0]
    violations: list[Violation] = list(matched[1])
    sb = sandbox()
    exchange = Exchange(request_id, req.method, req.path, response.status_code)
    if operation is not None and sb.settings.strict:
        broken = sb.conformance.contract.validate_response(
            operation,
            response.status_code,
            dict(response.headers),
            response.content_type,
            response.get_data(),
        )
        if broken:
            violations += broken
            sb.conformance.record(exchange, operation, violations, g.get("contract_notices"))
            return strict_failure(response, operation, broken, request_id)
    sb.conformance.record(exchange, operation, violations, g.get("contract_notices"))
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
