"""End to end: real checkouts emit the three event types, delivered to a real receiver."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import checkout, published, push_checkout
from tests.helpers import token_of
from tests.webhooks.conftest import (
    DOCUMENTED_DATA,
    SECRET,
    add_endpoint,
    advance,
    call,
    flush,
    setup_endpoint,
)
from tests.webhooks.receiver import Receiver


def arrived(receiver: Receiver) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in receiver.received]


def assert_signed(receiver: Receiver) -> None:
    for request in receiver.received:
        t, v1 = (part.split("=", 1)[1] for part in request.headers["X-Svc-Signature"].split(","))
        expected = hmac.new(SECRET.encode(), f"{t}.".encode() + request.body, hashlib.sha256)
        assert v1 == expected.hexdigest()


def test_a_paid_checkout_delivers_order_created_then_order_completed(
    svc_http: FlaskClient, auth: dict[str, str], receiver: Receiver
) -> None:
    add_endpoint(svc_http, receiver.url)
    product = published(svc_http, auth, metadata={"sku": "B-1"})
    session = push_checkout(svc_http, auth, "251900000001", product_id=product["_id"])
    assert receiver.received == []  # frozen clock: sent at the next advance or flush
    made = flush(svc_http)
    created, completed = arrived(receiver)
    assert [created["type"], completed["type"]] == ["order.created", "order.completed"]
    assert {a["outcome"] for a in made} == {"succeeded"}
    for document in (created, completed):
        assert set(document["data"]) == DOCUMENTED_DATA[document["type"]]
        assert document["data"]["sessionId"] == session["sessionId"]
        assert document["data"]["amount"] == 5000
        assert document["data"]["currency"] == "ETB"
        assert document["data"]["description"] is None  # a product checkout
        assert document["environment"] == "sandbox"
    assert created["data"]["orderId"] == completed["data"]["orderId"]
    assert completed["data"]["paidAt"]
    assert_signed(receiver)


def test_a_custom_amount_checkout_carries_its_description_and_metadata(
    svc_http: FlaskClient, auth: dict[str, str], receiver: Receiver
) -> None:
    add_endpoint(svc_http, receiver.url, eventTypes=["order.completed"])
    buyer = {"email": "buyer@example.com", "phone": "251900000001"}
    checkout(
        svc_http,
        auth,
        amount=12345,
        description="Consulting, 1 hour",
        metadata={"invoice": "INV-7"},
        gateway="telebirr",
        customer=buyer,
    )
    flush(svc_http)
    [completed] = arrived(receiver)
    data = completed["data"]
    assert (data["amount"], data["description"]) == (12345, "Consulting, 1 hour")
    assert data["metadata"] == {"invoice": "INV-7"}


def test_an_unpaid_session_expires_and_is_delivered_after_30_minutes_with_nobody_polling(
    svc_http: FlaskClient, auth: dict[str, str], receiver: Receiver
) -> None:
    add_endpoint(svc_http, receiver.url, eventTypes=["checkout.session.expired"])
    product = published(svc_http, auth)
    # A payment link that nobody opens, pays or polls.
    session = checkout(svc_http, auth, productId=product["_id"])
    advance(svc_http, "29m")
    flush(svc_http)
    assert receiver.received == []
    advance(svc_http, "1m")
    [expired] = arrived(receiver)
    assert expired["type"] == "checkout.session.expired"
    assert expired["created"] == "2026-01-01T00:30:00.000Z"
    assert expired["data"]["sessionId"] == session["sessionId"]
    assert expired["data"]["failure"]["code"] == "session_expired"
    assert set(expired["data"]) == DOCUMENTED_DATA["checkout.session.expired"]
    assert receiver.received[0].headers["X-Svc-Signature"].startswith("t=1767227400,")
    assert_signed(receiver)


def test_the_envelope_environment_is_the_sessions_not_the_organizations_now(
    svc_http: FlaskClient, auth: dict[str, str], receiver: Receiver
) -> None:
    # docs/webhooks.md: the environment of the checkout session the event is about.
    endpoint = add_endpoint(svc_http, receiver.url)
    org = endpoint["organizationId"]
    session = checkout(svc_http, auth, amount=100, description="x")
    switched = svc_http.patch(f"/_sandbox/orgs/{org}", json={"environment": "production"})
    assert switched.status_code == 200
    advance(svc_http, "30m")
    svc_http.post("/_sandbox/events/trigger", json={"type": "order.created", "orgId": org})
    flush(svc_http)
    expired, triggered = arrived(receiver)
    assert (expired["type"], expired["data"]["sessionId"]) == (
        "checkout.session.expired",
        session["sessionId"],
    )
    assert expired["environment"] == "sandbox"  # the session's
    assert (triggered["type"], triggered["environment"]) == ("order.created", "production")


def test_a_failed_push_expires_with_its_reason(
    svc_http: FlaskClient, auth: dict[str, str], receiver: Receiver
) -> None:
    add_endpoint(svc_http, receiver.url, eventTypes=["checkout.session.expired"])
    push_checkout(svc_http, auth, "251900000002")
    flush(svc_http)
    [expired] = arrived(receiver)
    assert expired["type"] == "checkout.session.expired"
    assert expired["data"]["failure"]["code"] == "payment_failed"


def test_exactly_once_fulfilment_can_be_tested_with_a_receiver_outcome_fault(
    svc_http: FlaskClient, auth: dict[str, str], receiver: Receiver
) -> None:
    add_endpoint(svc_http, receiver.url, eventTypes=["order.completed"])
    svc_http.post("/_sandbox/webhooks/faults/receiver", json={"count": 1, "send": True})
    push_checkout(svc_http, auth, "251900000001")
    flush(svc_http)
    advance(svc_http, "1m")
    first, again = arrived(receiver)
    assert first == again  # same event id and bytes: the receiver must fulfil once


@pytest.mark.parametrize("svc_sandbox", ["real"], indirect=True)
def test_post_checkout_is_not_held_up_by_a_hanging_receiver(
    svc_server: RunningServer, hanging_receiver: Receiver
) -> None:
    setup_endpoint(svc_server, hanging_receiver)
    call(svc_server, "POST", "/_sandbox/events/trigger", {"type": "order.created"})
    assert hanging_receiver.hanging.wait(10)  # the delivery worker is stuck

    auth = {"Authorization": f"Bearer {token_of(svc_server.sandbox)}"}
    product = call(
        svc_server,
        "POST",
        "/api/products",
        {
            "title": "Book",
            "pricingModel": "fixed",
            "price": {"amount": 5000},
            "status": "published",
        },
        **auth,
    )
    body = {
        "productId": product["product"]["_id"],
        "gateway": "telebirr",
        "customer": {"email": "buyer@example.com", "phone": "251900000001"},
    }
    session = call(svc_server, "POST", "/api/checkout", body, **auth)
    status = call(svc_server, "GET", f"/api/checkout/{session['sessionId']}", **auth)
    assert status["status"] == "completed"
    assert not hanging_receiver.release.is_set()
    assert len(hanging_receiver.received) == 1

    hanging_receiver.release.set()
    received = hanging_receiver.wait_for(3)
    assert [json.loads(r.body)["type"] for r in received] == [
        "order.created",
        "order.created",
        "order.completed",
    ]


def test_checkout_webhooks_are_identical_across_runs_with_one_seed(receiver: Receiver) -> None:
    from svc_sandbox.app import create_app

    def run() -> list[tuple[bytes, str]]:
        before = len(receiver.received)
        sandbox = Sandbox(clock_mode="frozen", seed=3, port=0)
        client = create_app(sandbox).test_client()
        auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
        add_endpoint(client, receiver.url)
        push_checkout(client, auth, "251900000001")
        push_checkout(client, auth)
        advance(client, "31m")
        return [(r.body, r.headers["X-Svc-Signature"]) for r in receiver.received[before:]]

    first, second = run(), run()
    assert len(first) == 4  # created + completed, created + expired
    assert first == second
