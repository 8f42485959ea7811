"""Commerce input that once slipped through: phone numbers with non-ASCII digits, and a clock
set backwards that locked a client out of checkout for a day."""

from __future__ import annotations

from datetime import timedelta

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import BUYER, published
from tests.helpers import assert_unharmed


@pytest.mark.parametrize(
    "phone",
    [
        "09\u0661\u0661\u0662\u0662\u0663\u0663\u0664\u0664",  # Arabic-Indic digits
        "09\u0967\u0967\u0968\u0968\u0969\u0969\u096a\u096a",  # Devanagari digits
        "09\uff11\uff11\uff12\uff12\uff13\uff13\uff14\uff14",  # full-width digits
    ],
)
def test_only_ascii_digits_make_a_phone(
    svc_http: FlaskClient, auth: dict[str, str], phone: str
) -> None:
    product = published(svc_http, auth)
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post(
        "/api/checkout",
        json={"productId": product["_id"], "customer": {**BUYER, "phone": phone}},
        headers=auth,
    )
    assert response.status_code == 400
    assert response.json["error"].startswith("customer.phone")  # type: ignore[index]
    assert_unharmed(svc_http, before)


def test_setting_the_clock_back_never_locks_a_client_out_longer_than_the_window(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth)
    body = {"productId": product["_id"], "customer": BUYER}
    for _ in range(40):
        assert svc_http.post("/api/checkout", json=body).status_code == 200
    svc_sandbox.set_time(svc_sandbox.now() - timedelta(days=1))
    refused = svc_http.post("/api/checkout", json=body)
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) <= 300
    svc_sandbox.advance(timedelta(seconds=300))
    assert svc_http.post("/api/checkout", json=body).status_code == 200
