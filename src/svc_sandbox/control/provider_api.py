"""Control-plane routes of provider realism: the trigger registry and custom triggers,
notification faults (late, lost, duplicate, out of order), the latency fault, and a session's
provider timeline.

Every route is documented with an example in docs/control-plane.md.
"""

from __future__ import annotations

from flask import Blueprint, Response

from svc_sandbox.commerce.triggers import parse_trigger
from svc_sandbox.control.api import render_error
from svc_sandbox.core.errors import SandboxError
from svc_sandbox.web import json_body, json_response, query_values, sandbox, takes_query

blueprint = Blueprint("control_provider", __name__)
blueprint.register_error_handler(SandboxError, render_error)


# --- triggers -------------------------------------------------------------------------------


@blueprint.get("/triggers")
def list_triggers() -> Response:
    return json_response({"items": sandbox().triggers.registry()})


@blueprint.post("/triggers")
def add_trigger() -> Response:
    trigger = sandbox().triggers.add(parse_trigger(json_body()))
    return json_response(trigger.to_public(), 201)


@blueprint.delete("/triggers")
def clear_triggers() -> Response:
    sb = sandbox()
    sb.triggers.clear()
    return json_response({"items": sb.triggers.registry()})


@blueprint.delete("/triggers/<phone>")
@takes_query("environment")
def remove_trigger(phone: str) -> Response:
    environment = query_values().get("environment", "sandbox")
    return json_response(sandbox().triggers.remove(phone, environment).to_public())


# --- notification faults --------------------------------------------------------------------


@blueprint.get("/faults/notifications")
def list_notification_faults() -> Response:
    return json_response({"items": sandbox().notice_faults.listing()})


@blueprint.post("/faults/notifications")
def add_notification_fault() -> Response:
    return json_response(sandbox().notice_faults.add(json_body()).to_public(), 201)


@blueprint.delete("/faults/notifications")
def clear_notification_faults() -> Response:
    sb = sandbox()
    sb.notice_faults.clear()
    return json_response({"items": sb.notice_faults.listing()})


@blueprint.delete("/faults/notifications/<rule_id>")
def remove_notification_fault(rule_id: str) -> Response:
    return json_response(sandbox().notice_faults.remove(rule_id).to_public())


# --- latency --------------------------------------------------------------------------------


@blueprint.get("/faults/latency")
def list_latency_faults() -> Response:
    return json_response({"items": sandbox().latency.listing()})


@blueprint.post("/faults/latency")
def add_latency_fault() -> Response:
    return json_response(sandbox().latency.add(json_body()).to_public(), 201)


@blueprint.delete("/faults/latency")
def clear_latency_faults() -> Response:
    sb = sandbox()
    sb.latency.clear()
    return json_response({"items": sb.latency.listing()})


@blueprint.delete("/faults/latency/<rule_id>")
def remove_latency_fault(rule_id: str) -> Response:
    return json_response(sandbox().latency.remove(rule_id).to_public())


# --- the provider timeline of a session -----------------------------------------------------


@blueprint.get("/checkout/sessions/<session_id>/timeline")
def session_timeline(session_id: str) -> Response:
    sb = sandbox()
    with sb.lock:
        sb.checkout.get(session_id)
        return json_response(
            {"sessionId": session_id, "items": sb.payments.timeline_of(session_id)}
        )
