"""``GET /_sandbox/scenario``: the request journal as a replayable YAML scenario."""

from __future__ import annotations

from flask import Blueprint, Response

from svc_sandbox.core.errors import SandboxError, ValidationFailed
from svc_sandbox.core.validation import query_integer
from svc_sandbox.web import error_response, query_values, sandbox, takes_query

blueprint = Blueprint("control_scenarios", __name__)


@blueprint.errorhandler(SandboxError)
def render_error(error: SandboxError) -> Response:
    return error_response(error, {"error": error.message, "code": error.code})


@blueprint.get("/scenario")
@takes_query("name", "limit")
def recorded_scenario() -> Response:
    query = query_values()
    name = query.get("name", "recorded flow").strip()
    if not 1 <= len(name) <= 200:
        raise ValidationFailed("name must be 1 to 200 characters")
    limit = query_integer(query.get("limit"), "limit", 1000, 1000)
    # The recorder (and PyYAML) load on the first recording, not at every start-up.
    from svc_sandbox.scenarios.recorder import NOT_RECORDED_HEADER, dump, last_start, record

    sb = sandbox()
    entries = list(reversed(sb.journal.recent(limit)))
    text = dump(record(entries, sb.info(), name, sb.last_import))
    response = Response(text, 200, mimetype="application/yaml")
    # Requests of the session the recording does not hold: before the oldest one read (past
    # ``limit``, or pushed out of the journal), when no reset or import starts it.
    left_out = sb.journal.count() - len(entries) + sb.journal.dropped
    if left_out and last_start(entries) is None:
        response.headers[NOT_RECORDED_HEADER] = str(left_out)
    return response
