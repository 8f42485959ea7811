"""The webhooks section of the contract fits the envelope the event log produces."""

from __future__ import annotations

from typing import Any

import pytest

from svc_sandbox.contract.validation import commerce_contract
from svc_sandbox.sandbox import Sandbox

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
