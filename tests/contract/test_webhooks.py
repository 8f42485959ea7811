"""The webhooks section of the contract fits the envelope the event log produces."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.contract.validation import commerce_contract
from svc_sandbox.sandbox import Sandbox
from tests.helpers import create_product

SESSION = "0123456789abcdef01234567"
ORDER_DATA: dict[str, Any] = {
    "sessionId": SESSION,
    "orderId": "89abcdef0123456789abcdef",
    "metadata": {"cart": "42"},
    "description": None,
    "amount": 5000,
    "currency": "ETB",
    "customerExternalId": None,
}


@pytest.mark.parametrize(
    ("event_type", "data"),
    [
        ("order.created", ORDER_DATA),
        ("order.completed", {**ORDER_DATA, "paidAt": "2026-01-01T00:01:00.000Z"}),
        (
            "checkout.session.expired",
            {"sessionId": SESSION, "failure": {"code": "session_expired", "message": "Expired"}},
        ),
    ],
)
def test_each_event_envelope_fits_its_webhook_schema(
    svc_sandbox: Sandbox, event_type: str, data: dict[str, Any]
) -> None:
    org = svc_sandbox.orgs.all()[0]
    event = svc_sandbox.events.emit(org.id, org.environment, event_type, data)
    assert commerce_contract().validate_webhook(event_type, event.envelope()) == []


@pytest.mark.parametrize(
    ("event_type", "data", "schema_path"),
    [
        (
            "order.completed",
            ORDER_DATA,  # no paidAt
            "#/components/schemas/OrderCompletedEventData/allOf/1/required",
        ),
        (
            "checkout.session.expired",
            {"sessionId": SESSION},
            "#/components/schemas/SessionExpiredEventData/required",
        ),
    ],
)
def test_an_event_missing_a_field_breaks_its_webhook_schema(
    svc_sandbox: Sandbox, event_type: str, data: dict[str, Any], schema_path: str
) -> None:
    org = svc_sandbox.orgs.all()[0]
    event = svc_sandbox.events.emit(org.id, org.environment, event_type, data)
    (violation,) = commerce_contract().validate_webhook(event_type, event.envelope())
    assert violation.schema_path == schema_path


def test_the_events_of_real_checkouts_fit_the_webhooks_section(
    svc_http: FlaskClient, svc_sandbox: Sandbox, auth: dict[str, str]
) -> None:
    token = create_product(svc_http, auth, status="published")["product"]["checkoutToken"]
    customer = {"email": "buyer@example.com", "externalId": "u1"}
    for body in (
        {
            "productId": token,
            "gateway": "telebirr",
            "customer": {**customer, "phone": "251900000001"},
        },
        {
            "amount": 500,
            "description": "Tip",
            "gateway": "mpesa",
            "customer": {**customer, "phone": "251900000002"},
        },
        {"productId": token},  # a payment link nobody pays: expires
    ):
        assert svc_http.post("/api/checkout", json=body, headers=auth).status_code == 200
    svc_sandbox.advance(timedelta(minutes=31))
    events = svc_sandbox.events.events
    assert {e.type for e in events} == {
        "order.created",
        "order.completed",
        "checkout.session.expired",
    }
    for event in events:
        assert commerce_contract().validate_webhook(event.type, event.envelope()) == [], event.type
