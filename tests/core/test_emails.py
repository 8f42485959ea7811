"""One rule for when two email addresses are one (core/emails.py ``email_key``): without
case (Unicode's caseless match: ``groß`` is ``GROSS``) and in one Unicode form (``josé``
typed as NFC or NFD). Customers and users follow it alike: customers compared with
``lower()``, users with ``casefold()``, and neither normalized."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from svc_sandbox.core.emails import email_key
from tests.helpers import create_product

SAME = {
    "case": ("Abebe@Example.com", "abebe@example.com"),
    "sharp s": ("GROSS@example.com", "gro\u00df@example.com"),
    "NFC and NFD": ("jos\u00e9@example.com", "jose\u0301@example.com"),
    "NFD in capitals": ("JOSE\u0301@example.com", "jos\u00e9@example.com"),
    "final sigma": ("\u03a3\u0399\u03a3\u03a5\u03a6\u039f\u03a3@x.gr", "σισυφος@x.gr"),
}
DIFFERENT = {
    "accent": ("jose@example.com", "jos\u00e9@example.com"),
    "letter": ("a@example.com", "b@example.com"),
}


@pytest.mark.parametrize(("one", "other"), SAME.values(), ids=SAME.keys())
def test_addresses_that_are_one(one: str, other: str) -> None:
    assert email_key(one) == email_key(other)


@pytest.mark.parametrize(("one", "other"), DIFFERENT.values(), ids=DIFFERENT.keys())
def test_addresses_that_are_two(one: str, other: str) -> None:
    assert email_key(one) != email_key(other)


@pytest.mark.parametrize(("one", "other"), SAME.values(), ids=SAME.keys())
def test_a_user_and_a_customer_follow_it_alike(
    svc_http: FlaskClient, auth: dict[str, str], one: str, other: str
) -> None:
    assert svc_http.post("/_sandbox/users", json={"handle": "u1", "email": one}).status_code == 201
    taken = svc_http.post("/_sandbox/users", json={"handle": "u2", "email": other})
    assert taken.status_code == 409 and taken.json["error"] == f"email {other} is taken"  # type: ignore[index]
    product = create_product(svc_http, auth, pricingModel="free", price={}, status="published")
    customers = set()
    for email in (one, other):
        order_id = svc_http.post(
            "/api/checkout",
            json={"productId": product["product"]["checkoutToken"], "customer": {"email": email}},
            headers=auth,
        ).json["orderId"]  # type: ignore[index]
        order = svc_http.get("/api/orders?limit=100", headers=auth).json
        customers |= {
            o["customerId"]["_id"]
            for o in order["items"]
            if o["_id"] == order_id  # type: ignore[index]
        }
    assert len(customers) == 1
