"""A session opened while its product was published, after the product is archived or put
back to draft (spec §3 lists no effect on open sessions): it stays payable until it expires or
ends, as archiving a Stripe product leaves its open Checkout Sessions payable. Only new
checkouts see the product's new status (docs/spec-gaps.md, "Open sessions of a product that
is archived or set to draft")."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.commerce.checkout_helpers import BUYER, checkout, published, status_of


def open_session(
    client: FlaskClient, auth: dict[str, str], product: dict[str, Any], mode: str
) -> str:
    if mode == "push":  # sandbox: the simulator decides
        result = checkout(
            client, auth, productId=product["_id"], gateway="telebirr", customer=BUYER
        )
    elif mode == "link":  # a payment link: the buyer pays on {pay_url}
        result = checkout(client, auth, productId=product["_id"])
    else:  # no token: the provider's hosted page
        result = checkout(client, None, productId=product["checkoutToken"], customer=BUYER)
    return str(result["sessionId"])


def pay(client: FlaskClient, session_id: str, mode: str) -> None:
    if mode == "link":
        body = {"gateway": "telebirr", "phone": "0900000001", "email": "b@example.com"}
        response = client.post(f"/pay/cs_{session_id}", json=body)  # pays instantly (§8)
    else:
        response = client.post(f"/_sandbox/checkout/sessions/{session_id}/approve", json={})
    assert response.status_code == 200, response.json


def archive(client: FlaskClient, auth: dict[str, str], product_id: str) -> None:
    assert client.delete(f"/api/products/{product_id}", headers=auth).status_code == 200


def to_draft(client: FlaskClient, auth: dict[str, str], product_id: str) -> None:
    response = client.patch(f"/api/products/{product_id}", json={"status": "draft"}, headers=auth)
    assert response.status_code == 200


@pytest.mark.parametrize("mode", ["push", "link", "hosted"])
@pytest.mark.parametrize("change", [archive, to_draft], ids=["archived", "draft"])
def test_an_open_session_stays_payable_after_its_product_is_unpublished(
    svc_http: FlaskClient, auth: dict[str, str], mode: str, change: Any
) -> None:
    product = published(svc_http, auth, title="Old edition")
    session_id = open_session(svc_http, auth, product, mode)
    change(svc_http, auth, product["_id"])
    assert status_of(svc_http, session_id)["status"] == "open"
    # A new checkout without a token sees the change: only published products sell there.
    refused = svc_http.post(
        "/api/checkout", json={"productId": product["checkoutToken"], "customer": BUYER}
    )
    assert refused.status_code == 404
    pay(svc_http, session_id, mode)
    assert status_of(svc_http, session_id)["status"] == "completed"
    orders = svc_http.get("/api/orders", headers=auth).json["items"]  # type: ignore[index]
    assert [(o["productId"]["title"], o["status"]) for o in orders] == [("Old edition", "paid")]
