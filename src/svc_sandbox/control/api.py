"""Core control-plane routes: info, reset, state export/import, clock, organizations, tokens.

Every route is documented with an example in docs/control-plane.md.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from svc_sandbox.control.schemas import (
    AdvanceBody,
    JournalQuery,
    OrganizationCreateBody,
    OrganizationUpdateBody,
    SetClockBody,
    TokenCreateBody,
    control_limit,
)
from svc_sandbox.core.clock import out_of_range, parse_instant
from svc_sandbox.core.durations import parse_duration
from svc_sandbox.core.errors import SandboxError, ValidationFailed
from svc_sandbox.core.scheduler import RanEntry
from svc_sandbox.core.validation import parse
from svc_sandbox.orgs.organizations import Organization
from svc_sandbox.web import (
    REQUEST_ID,
    error_response,
    json_body,
    json_response,
    parse_body,
    query_values,
    sandbox,
    takes_no_body,
    takes_query,
)

blueprint = Blueprint("control", __name__)


@blueprint.errorhandler(SandboxError)
def render_error(error: SandboxError) -> Response:
    return error_response(error, {"error": error.message, "code": error.code})


@blueprint.get("")
@blueprint.get("/")
def info() -> Response:
    return json_response(sandbox().info())


@blueprint.post("/reset")
@takes_no_body
def reset() -> Response:
    sandbox().reset()
    return json_response(sandbox().info())


@blueprint.get("/state")
def export_state() -> Response:
    return json_response(sandbox().export())


@blueprint.put("/state")
def import_state() -> Response:
    # The state route's own body limit (a setting), read before the body is: exports grow
    # past the 1 MiB every other route takes.
    request.max_content_length = sandbox().settings.max_state_bytes
    sb = sandbox()
    sb.restore(json_body())
    # Kept as sent (not as parsed: a fraction of the memory) for a recording to replay.
    sb.last_import = (request.environ.get(REQUEST_ID, ""), request.get_data(cache=True))
    return json_response(sb.info())


@blueprint.get("/state/schema")
def state_schema() -> Response:
    """The export format as JSON Schema (what PUT /_sandbox/state validates against)."""
    return json_response(sandbox().state_schema())


# --- clock --------------------------------------------------------------------------------


def clock_report(ran: list[RanEntry]) -> dict[str, Any]:
    sb = sandbox()
    return {"clock": sb.clock.describe(), "ran": [r.to_json() for r in ran]}


@blueprint.get("/clock")
@takes_query("limit")
def read_clock() -> Response:
    """The clock, how many entries are queued, and the next ``limit`` of them (default 100):
    never a sort of the whole queue (see docs/control-plane.md)."""
    limit = control_limit(query_values().get("limit"))
    sb = sandbox()
    with sb.lock:
        upcoming = [e.to_json() for e in sb.scheduler.upcoming(limit)]
        count = sb.scheduler.count()
    return json_response(
        {"clock": sb.clock.describe(), "scheduledCount": count, "scheduled": upcoming}
    )


@blueprint.post("/clock/advance")
def advance_clock() -> Response:
    body = parse_body(AdvanceBody)
    if (body.duration is None) == (body.seconds is None):
        raise ValidationFailed("send exactly one of duration or seconds")
    field, raw = (
        ("seconds", body.seconds) if body.seconds is not None else ("duration", body.duration)
    )
    return json_response(clock_report(sandbox().advance(parse_duration(raw, field), field)))


@blueprint.post("/clock/set")
def set_clock() -> Response:
    body = parse_body(SetClockBody)
    try:
        instant = parse_instant(body.now)
    except ValueError:
        raise ValidationFailed("now must be an ISO 8601 date-time") from None
    problem = out_of_range(instant)
    if problem:
        raise ValidationFailed(f"now {problem}")
    return json_response(clock_report(sandbox().set_time(instant)))


@blueprint.post("/clock/run-due")
@takes_no_body
def run_due() -> Response:
    return json_response(clock_report(sandbox().run_due()))


# --- organizations and tokens -------------------------------------------------------------


def org_view(org: Organization) -> dict[str, Any]:
    view = org.to_public()
    view["tokens"] = [t.to_public() for t in sandbox().orgs.tokens_of(org.id)]
    return view


@blueprint.get("/orgs")
def list_orgs() -> Response:
    return json_response({"items": [org_view(o) for o in sandbox().orgs.all()]})


@blueprint.post("/orgs")
def create_org() -> Response:
    body = parse_body(OrganizationCreateBody)
    orgs = sandbox().orgs
    with sandbox().lock:
        org = orgs.create(body.name, body.environment, body.developerMode, body.kyc)
        if body.withToken:
            orgs.create_token(org.id)
    return json_response(org_view(org), 201)


@blueprint.get("/orgs/<org_id>")
def get_org(org_id: str) -> Response:
    return json_response(org_view(sandbox().orgs.get(org_id)))


@blueprint.patch("/orgs/<org_id>")
def update_org(org_id: str) -> Response:
    raw = json_body()
    body = parse(OrganizationUpdateBody, raw)
    fee: Any = body.customFeeRate if "customFeeRate" in body.model_fields_set else False
    org = sandbox().orgs.update(
        org_id,
        name=body.name,
        environment=body.environment,
        developer_mode=body.developerMode,
        kyc=body.kyc,
        custom_fee_rate=fee,
        redirect_urls=body.redirectUrls,
    )
    return json_response(org_view(org))


@blueprint.post("/orgs/<org_id>/tokens")
def create_token(org_id: str) -> Response:
    body = parse(TokenCreateBody, json_body(optional=True))
    return json_response(sandbox().orgs.create_token(org_id, body.name).to_public(), 201)


@blueprint.delete("/tokens/<token>")
def revoke_token(token: str) -> Response:
    return json_response(sandbox().orgs.revoke_token(token).to_public())


# --- request journal ----------------------------------------------------------------------


@blueprint.get("/requests")
@takes_query(JournalQuery)
def request_journal() -> Response:
    """The newest entries (``limit``, default 100) matching ``method``, ``status`` (``404`` or
    ``4xx``) and ``path`` (text the path contains)."""
    query = parse(JournalQuery, dict(query_values()))
    limit = control_limit(query.limit)
    return json_response({"items": sandbox().journal.recent(limit, query.only())})
