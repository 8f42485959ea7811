"""Control-plane routes of the webhooks family: endpoints, the event log, test events, the
delivery journal, redelivery, flush and the receiver-outcome fault.

Every route is documented with an example in docs/control-plane.md (Webhooks).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from svc_sandbox.control.api import render_error
from svc_sandbox.core.errors import NotFound, SandboxError
from svc_sandbox.core.validation import parse
from svc_sandbox.orgs.organizations import Environment, Organization
from svc_sandbox.web import (
    json_body,
    json_response,
    parse_body,
    query_values,
    sandbox,
    takes_no_body,
    takes_query,
)
from svc_sandbox.webhooks.delivery import Attempt
from svc_sandbox.webhooks.events import check_event_type
from svc_sandbox.webhooks.schemas import (
    AttemptQuery,
    DeliveryQuery,
    EndpointCreateBody,
    EndpointQuery,
    EndpointUpdateBody,
    EventLogQuery,
    ReceiverFaultBody,
    RedeliverBody,
    TriggerBody,
)

blueprint = Blueprint("control_webhooks", __name__)
blueprint.register_error_handler(SandboxError, render_error)


def _query(model: Any) -> Any:
    query = parse(model, dict(query_values()))
    for name in ("eventType", "type"):
        value = getattr(query, name, None)
        if value is not None:
            check_event_type(value, name)
    return query


#: Query parameters whose field in the public views has another name.
VIEW_FIELDS = {"orgId": "organizationId"}


def _filters(query: Any, *, skip: tuple[str, ...] = ("limit",)) -> dict[str, str | None]:
    """A query as filters over the public views (``orgId`` filters ``organizationId``)."""
    return {VIEW_FIELDS.get(k, k): v for k, v in query.model_dump().items() if k not in skip}


def _org(org_id: str | None) -> Organization:
    """The named organization, or the default sandbox one."""
    orgs = sandbox().orgs
    if org_id is not None:
        return orgs.get(org_id)
    for org in orgs.all():
        if org.environment is Environment.SANDBOX:
            return org
    raise NotFound("no sandbox organization: pass orgId")


def _attempts(attempts: list[Attempt]) -> list[dict[str, Any]]:
    return [a.to_public() for a in attempts]


# --- endpoints ----------------------------------------------------------------------------


@blueprint.get("/webhooks/endpoints")
@takes_query(EndpointQuery)
def list_endpoints() -> Response:
    query = _query(EndpointQuery)
    endpoints = sandbox().webhook_endpoints.list_for(query.orgId)
    return json_response({"items": [e.to_public() for e in endpoints]})


@blueprint.post("/webhooks/endpoints")
def create_endpoint() -> Response:
    body = parse_body(EndpointCreateBody)
    org = _org(body.orgId)
    endpoint = sandbox().webhook_endpoints.create(
        org.id, body.url, body.secret, body.eventTypes, body.enabled, body.description
    )
    return json_response(endpoint.to_public(), 201)


@blueprint.get("/webhooks/endpoints/<endpoint_id>")
def get_endpoint(endpoint_id: str) -> Response:
    return json_response(sandbox().webhook_endpoints.get(endpoint_id).to_public())


@blueprint.patch("/webhooks/endpoints/<endpoint_id>")
def update_endpoint(endpoint_id: str) -> Response:
    body = parse_body(EndpointUpdateBody)
    description = body.description
    if description is None and "description" in body.model_fields_set:
        description = ""  # null clears the description
    endpoint = sandbox().webhook_endpoints.update(
        endpoint_id,
        url=body.url,
        secret=body.secret,
        event_types=body.eventTypes,
        enabled=body.enabled,
        description=description,
    )
    return json_response(endpoint.to_public())


@blueprint.post("/webhooks/endpoints/<endpoint_id>/rotate-secret")
@takes_no_body
def rotate_secret(endpoint_id: str) -> Response:
    return json_response(sandbox().webhook_endpoints.rotate_secret(endpoint_id).to_public())


@blueprint.delete("/webhooks/endpoints/<endpoint_id>")
def delete_endpoint(endpoint_id: str) -> Response:
    return json_response(sandbox().webhook_endpoints.delete(endpoint_id).to_public())


# --- the event log and test events ---------------------------------------------------------


@blueprint.get("/events")
@takes_query(EventLogQuery)
def event_log() -> Response:
    """The events the sandbox emitted, oldest first; filters ``type``, ``sessionId``, ``orgId``."""
    query = _query(EventLogQuery)
    events = sandbox().events.query(
        org_id=query.orgId, type_=query.type, session_id=query.sessionId
    )
    return json_response({"items": [e.envelope() for e in events], "total": len(events)})


@blueprint.post("/events/trigger")
def trigger_event() -> Response:
    body = parse_body(TriggerBody)
    sb = sandbox()
    org = _org(body.orgId)
    with sb.lock:
        event = sb.events.trigger(org.id, org.environment.value, body.type, body.data)
        deliveries = sb.deliveries.of_new_event(event.id)
    view = {"event": event.envelope(), "deliveries": [d.to_public() for d in deliveries]}
    return json_response(view, 201)


# --- deliveries and attempts --------------------------------------------------------------


@blueprint.get("/webhooks/deliveries")
@takes_query(DeliveryQuery)
def list_deliveries() -> Response:
    deliveries = sandbox().deliveries.query(_filters(_query(DeliveryQuery)))
    return json_response({"items": [d.to_public() for d in deliveries]})


@blueprint.get("/webhooks/deliveries/<delivery_id>")
def get_delivery(delivery_id: str) -> Response:
    deliveries = sandbox().deliveries
    view = deliveries.get(delivery_id).to_public()
    view["attemptLog"] = _attempts(deliveries.query_attempts({"deliveryId": delivery_id}))
    return json_response(view)


@blueprint.get("/webhooks/attempts")
@takes_query(AttemptQuery)
def list_attempts() -> Response:
    query = _query(AttemptQuery)
    attempts = sandbox().deliveries.query_attempts(_filters(query))
    return json_response({"items": _attempts(attempts[-query.limit :])})


def _run_and_report(action: Any) -> tuple[Any, list[Attempt]]:
    """Does ``action`` then sends what is due now; returns its result and the attempts made."""
    sb = sandbox()
    mark = sb.deliveries.attempts_made
    result = action()
    sb.run_due()
    return result, sb.deliveries.attempts_since(mark)


@blueprint.post("/webhooks/events/<event_id>/redeliver")
def redeliver(event_id: str) -> Response:
    body = parse(RedeliverBody, json_body(optional=True))
    deliveries, attempts = _run_and_report(
        lambda: sandbox().deliveries.redeliver(event_id, body.endpointId)
    )
    view = {
        "deliveries": [sandbox().deliveries.get(d.id).to_public() for d in deliveries],
        "attempts": _attempts(attempts),
    }
    return json_response(view, 201)


@blueprint.post("/webhooks/flush")
@takes_no_body
def flush() -> Response:
    _, attempts = _run_and_report(lambda: None)
    return json_response({"attempts": _attempts(attempts)})


# --- faults -------------------------------------------------------------------------------


@blueprint.get("/webhooks/faults/receiver")
def read_receiver_fault() -> Response:
    return json_response(sandbox().deliveries.fault.to_public())


@blueprint.post("/webhooks/faults/receiver")
def set_receiver_fault() -> Response:
    body = parse_body(ReceiverFaultBody)
    return json_response(sandbox().deliveries.set_fault(body.count, body.send).to_public())
