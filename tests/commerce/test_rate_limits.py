"""The checkout rate limits of §8 on the sandbox clock, and their switch."""

from __future__ import annotations

from datetime import timedelta

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from svc_sandbox.app import create_app
from svc_sandbox.commerce.limits import PAY_LIMITED
from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import BUYER, checkout, path, published


def _post(client: FlaskClient, auth: dict[str, str] | None, body: dict[str, object]) -> int:
    return client.post("/api/checkout", json=body, headers=auth or {}).status_code


def test_token_bucket_burst_200_refill_20_per_second(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    body = {"amount": 100, "description": "x"}
    assert {_post(svc_http, auth, body) for _ in range(200)} == {200}
    response = svc_http.post("/api/checkout", json=body, headers=auth)
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "1"
    assert response.json == {
        "error": "Too many checkout requests: slow down and retry after 1 second"
    }
    svc_sandbox.advance(timedelta(seconds=1))
    assert [_post(svc_http, auth, body) for _ in range(21)] == [200] * 20 + [429]


def test_no_token_40_per_5_minutes_per_ip(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth)
    body = {"productId": product["_id"], "customer": BUYER}
    assert {_post(svc_http, None, body) for _ in range(40)} == {200}
    response = svc_http.post("/api/checkout", json=body)
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "300"
    assert _post(svc_http, auth, body) == 200  # a token has its own bucket
    svc_sandbox.advance(timedelta(minutes=5))
    assert _post(svc_http, None, body) == 200


def test_pay_30_attempts_per_5_minutes_per_ip(svc_http: FlaskClient) -> None:
    statuses = [svc_http.post("/pay/cs_" + "0" * 24, json={}).status_code for _ in range(31)]
    assert statuses == [404] * 30 + [429]


def _pay_attempt(client: FlaskClient, auth: dict[str, str]) -> TestResponse:
    """One POST /pay/{payToken} on a new sandbox payment link."""
    link = checkout(client, auth, productId=published(client, auth)["_id"])
    body = {"gateway": "telebirr", "phone": "0911223344", "email": "a@b.co"}
    return client.post(path(link["checkoutUrl"]), json=body)


def _provider_confirm(client: FlaskClient, live_auth: dict[str, str]) -> TestResponse:
    """One confirmation on the emulated provider page of a new production no-token checkout."""
    product = published(client, live_auth)
    hosted = checkout(client, None, productId=product["checkoutToken"], customer=BUYER)
    return client.post(f"{path(hosted['checkoutUrl'])}/confirm", json={"phone": "0911223344"})


ATTEMPTS = {"pay": _pay_attempt, "provider": _provider_confirm}


@pytest.mark.parametrize(("used_up", "other"), [("pay", "provider"), ("provider", "pay")])
def test_the_provider_page_and_payment_links_have_a_window_each(
    svc_http: FlaskClient,
    auth: dict[str, str],
    live_auth: dict[str, str],
    svc_sandbox: Sandbox,
    used_up: str,
    other: str,
) -> None:
    """§8 limits POST /pay/{payToken}; the provider's page (not a payment link) has its own
    window with the same numbers, 30 per 5 minutes per IP."""
    merchant = {"pay": auth, "provider": live_auth}
    attempt = ATTEMPTS[used_up]
    assert {attempt(svc_http, merchant[used_up]).status_code for _ in range(30)} == {200}
    assert ATTEMPTS[other](svc_http, merchant[other]).status_code == 200  # its own budget
    refused = attempt(svc_http, merchant[used_up])
    assert (refused.status_code, refused.headers["Retry-After"]) == (429, "300")
    assert refused.json == {"error": PAY_LIMITED.format(wait="300 seconds")}
    svc_sandbox.advance(timedelta(minutes=5))
    assert attempt(svc_http, merchant[used_up]).status_code == 200


def test_rate_limits_can_be_switched_off() -> None:
    sandbox = Sandbox(clock_mode="frozen", rate_limits=False)
    client = create_app(sandbox).test_client()
    statuses = {client.post("/pay/cs_" + "0" * 24, json={}).status_code for _ in range(40)}
    assert statuses == {404}
