"""Control-plane routes of the checkout family: decide payments, configure the provider,
inject faults, create checkout links and checkout fields.

Every route is documented with an example in docs/control-plane.md.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from svc_sandbox.commerce import checkout_input as rules
from svc_sandbox.control.api import render_error
from svc_sandbox.control.checkout_schemas import (
    CheckoutFieldBody,
    CheckoutFieldUpdateBody,
    CheckoutLinkBody,
    CheckoutLinkUpdateBody,
    FailBody,
    FaultsBody,
    ProviderBody,
)
from svc_sandbox.core.errors import SandboxError
from svc_sandbox.core.validation import parse
from svc_sandbox.web import json_body, json_response, parse_body, sandbox, takes_no_body

blueprint = Blueprint("control_checkout", __name__)
blueprint.register_error_handler(SandboxError, render_error)


# --- deciding payments ----------------------------------------------------------------------


@blueprint.get("/checkout/sessions/<session_id>")
def describe_session(session_id: str) -> Response:
    return json_response(sandbox().checkout.describe(session_id))


@blueprint.post("/checkout/sessions/<session_id>/approve")
@takes_no_body
def approve_session(session_id: str) -> Response:
    sb = sandbox()
    with sb.lock:
        sb.checkout.get(session_id)
        sb.payments.approve(session_id)
        return json_response(sb.checkout.describe(session_id))


@blueprint.post("/checkout/sessions/<session_id>/fail")
def fail_session(session_id: str) -> Response:
    body = parse(FailBody, json_body(optional=True))
    sb = sandbox()
    with sb.lock:
        sb.checkout.get(session_id)
        sb.payments.fail(session_id, body.code, body.message)
        return json_response(sb.checkout.describe(session_id))


@blueprint.post("/payments/attempts/<attempt_id>/approve")
@takes_no_body
def approve_attempt(attempt_id: str) -> Response:
    sb = sandbox()
    with sb.lock:
        sb.payments.get(attempt_id)
        return json_response(sb.payments.approve(attempt_id).to_public())


@blueprint.post("/payments/attempts/<attempt_id>/fail")
def fail_attempt(attempt_id: str) -> Response:
    body = parse(FailBody, json_body(optional=True))
    sb = sandbox()
    with sb.lock:
        sb.payments.get(attempt_id)
        return json_response(sb.payments.fail(attempt_id, body.code, body.message).to_public())


# --- provider settings and faults -----------------------------------------------------------


@blueprint.get("/payments/provider")
def read_provider() -> Response:
    return json_response(sandbox().payments.config.to_public())


@blueprint.patch("/payments/provider")
def configure_provider() -> Response:
    body = parse_body(ProviderBody)
    config = sandbox().payments.configure(
        body.productionPushOutcome, body.productionPushDelaySeconds
    )
    return json_response(config.to_public())


@blueprint.get("/faults")
def read_faults() -> Response:
    return json_response(sandbox().payments.config.to_public())


@blueprint.post("/faults")
def set_faults() -> Response:
    body = parse_body(FaultsBody)
    sent = body.model_fields_set  # a field not sent is left as it is
    config = sandbox().payments.set_faults(
        body.refuseCheckouts if "refuseCheckouts" in sent else None,
        body.refuseMessage,
        list(body.initiateFailures) if "initiateFailures" in sent else None,
    )
    return json_response(config.to_public())


@blueprint.delete("/faults")
def clear_faults() -> Response:
    return json_response(sandbox().payments.clear_faults().to_public())


# --- checkout links and fields --------------------------------------------------------------


def link_metadata(raw: Any) -> dict[str, str] | None:
    return None if raw is None else rules.metadata(raw)


@blueprint.post("/orgs/<org_id>/checkout-links")
def create_checkout_link(org_id: str) -> Response:
    body = parse_body(CheckoutLinkBody)
    link = sandbox().checkout_config.create_link(
        org_id,
        body.productIds,
        metadata=link_metadata(body.metadata),
        success_url=body.successUrl,
        active=body.active,
        name=body.name,
    )
    return json_response(link.to_public(), 201)


@blueprint.get("/orgs/<org_id>/checkout-links")
def list_checkout_links(org_id: str) -> Response:
    sb = sandbox()
    sb.orgs.get(org_id)
    return json_response({"items": [x.to_public() for x in sb.checkout_config.links_of(org_id)]})


@blueprint.patch("/checkout-links/<link_id>")
def update_checkout_link(link_id: str) -> Response:
    body = parse_body(CheckoutLinkUpdateBody)
    sent = body.model_fields_set  # null clears successUrl and metadata; left out: unchanged
    link = sandbox().checkout_config.update_link(
        link_id,
        active=body.active,
        metadata=(link_metadata(body.metadata) or {}) if "metadata" in sent else None,
        success_url=body.successUrl if "successUrl" in sent else False,
        product_refs=body.productIds,
    )
    return json_response(link.to_public())


@blueprint.post("/orgs/<org_id>/checkout-fields")
def create_checkout_field(org_id: str) -> Response:
    body = parse_body(CheckoutFieldBody)
    created = sandbox().checkout_config.create_field(
        org_id,
        body.label,
        body.type,
        required=body.required,
        product_refs=body.productIds,
        options=body.options,
    )
    return json_response(created.to_public(), 201)


@blueprint.get("/orgs/<org_id>/checkout-fields")
def list_checkout_fields(org_id: str) -> Response:
    sb = sandbox()
    sb.orgs.get(org_id)
    return json_response({"items": [f.to_public() for f in sb.checkout_config.fields_of(org_id)]})


@blueprint.patch("/checkout-fields/<field_id>")
def update_checkout_field(field_id: str) -> Response:
    body = parse_body(CheckoutFieldUpdateBody)
    changed = sandbox().checkout_config.update_field(
        field_id,
        label=body.label,
        type_=body.type,
        required=body.required,
        product_refs=body.productIds,
        options=body.options,
    )
    return json_response(changed.to_public())


@blueprint.delete("/checkout-fields/<field_id>")
def delete_checkout_field(field_id: str) -> Response:
    return json_response(sandbox().checkout_config.delete_field(field_id).to_public())
