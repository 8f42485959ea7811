"""GET /orders (spec §2 Order, §4) and the order events of §6."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import BUYER, checkout, events, published, push_checkout


def _orders(client: FlaskClient, auth: dict[str, str], query: str = "") -> dict[str, Any]:
    response = client.get(f"/api/orders{query}", headers=auth)
    assert response.status_code == 200, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result


def test_a_paid_product_order_has_every_field(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth)
    customer = {**BUYER, "name": "Abebe", "externalId": "user-7"}
    result = checkout(
        svc_http, auth, productId=product["_id"], gateway="telebirr", customer=customer
    )
    svc_sandbox.advance(timedelta(seconds=30))
    svc_sandbox.payments.approve(result["sessionId"])
    order = _orders(svc_http, auth)["items"][0]
    assert order == {
        "_id": order["_id"],
        "checkoutSessionId": result["sessionId"],
        "productId": {"_id": product["_id"], "title": "Book"},
        "customerId": {"_id": order["customerId"]["_id"], "email": BUYER["email"], "name": "Abebe"},
        "amount": 5000,
        "currency": "ETB",
        "status": "paid",
        "environment": "sandbox",
        "metadata": {},
        "paidAt": "2026-01-01T00:00:30.000Z",
        "createdAt": "2026-01-01T00:00:00.000Z",
    }
    created, completed = events(svc_sandbox, session_id=result["sessionId"])
    base = {
        "sessionId": result["sessionId"],
        "orderId": order["_id"],
        "metadata": {},
        "description": None,
        "amount": 5000,
        "currency": "ETB",
        "customerExternalId": "user-7",
    }
    assert (created.type, created.data) == ("order.created", base)
    assert (completed.type, completed.data) == (
        "order.completed",
        {**base, "paidAt": "2026-01-01T00:00:30.000Z"},
    )


def test_a_custom_amount_order_uses_the_placeholder_and_description(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    first = checkout(svc_http, auth, amount=700, description="Donation", customer=BUYER)
    second = checkout(svc_http, auth, amount=800, description="Donation 2", customer=BUYER)
    for result in (first, second):
        svc_sandbox.payments.approve(result["sessionId"])
    items = _orders(svc_http, auth)["items"]
    assert [o["description"] for o in items] == ["Donation 2", "Donation"]
    assert items[0]["productId"]["title"] == "Custom payment"
    assert items[0]["productId"] == items[1]["productId"]
    assert events(svc_sandbox, "order.completed")[0].data["description"] == "Donation"


def test_checkout_status_shows_the_order_id_only_once_paid(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth)
    result = checkout(svc_http, auth, productId=product["_id"], gateway="cbe", customer=BUYER)
    status = svc_http.get(f"/api/checkout/{result['sessionId']}").json
    assert (status["orderId"], status["orderStatus"]) == (None, "pending")  # type: ignore[index]
    assert _orders(svc_http, auth, "?status=pending")["total"] == 1


def test_list_filters_pages_and_is_newest_first(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth)
    ids = []
    for phone in ["0900000001", "0900000002", "0900000001"]:
        svc_sandbox.advance(timedelta(seconds=1))
        result = push_checkout(svc_http, auth, phone, "mpesa", product["_id"])
        ids.append(result["sessionId"])
    every = _orders(svc_http, auth)
    assert [o["checkoutSessionId"] for o in every["items"]] == ids[::-1]
    assert _orders(svc_http, auth, "?status=paid")["total"] == 2
    assert _orders(svc_http, auth, "?status=failed")["total"] == 1
    page = _orders(svc_http, auth, "?page=2&limit=2")
    assert (page["total"], page["page"], page["limit"], len(page["items"])) == (3, 2, 2, 1)


@pytest.mark.parametrize(
    "query", ["?status=done", "?page=0", "?limit=101", "?limit=%2020", "?page=1%20"]
)
def test_bad_list_queries_are_400(svc_http: FlaskClient, auth: dict[str, str], query: str) -> None:
    response = svc_http.get(f"/api/orders{query}", headers=auth)
    assert response.status_code == 400


def test_orders_are_per_organization_and_need_a_token(
    svc_http: FlaskClient, auth: dict[str, str], live_auth: dict[str, str]
) -> None:
    product = published(svc_http, auth, pricingModel="free", price=None)
    checkout(svc_http, auth, productId=product["_id"], customer=BUYER)
    assert _orders(svc_http, live_auth)["total"] == 0
    assert svc_http.get("/api/orders").status_code == 403


def test_paid_total_adds_up_paid_orders(
    svc_http: FlaskClient, live_auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, live_auth)
    checkout(svc_http, live_auth, productId=product["_id"], gateway="telebirr", customer=BUYER)
    checkout(svc_http, live_auth, amount=300, description="Tip", customer=BUYER)
    svc_sandbox.advance(timedelta(seconds=10))
    org = next(o for o in svc_sandbox.orgs.all() if o.environment.value == "production")
    assert svc_sandbox.orders.paid_total(org.id, "production") == 5000
