"""Hosted pages (server-rendered, no JavaScript): the payment-link page, the simulator page
and the product page, driven the way a browser without scripts would (GET, form POST)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from flask.testing import FlaskClient

from svc_sandbox.commerce.payments import FAILURE_CODES, FAILURE_MESSAGES
from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import (
    BUYER,
    checkout,
    org_id,
    path,
    published,
    push_checkout,
    status_of,
)


def _link(client: FlaskClient, auth: dict[str, str], **body: object) -> tuple[str, str]:
    product = published(client, auth, title="Concert <ticket>")
    result = checkout(client, auth, productId=product["_id"], **body)
    return result["sessionId"], path(result["checkoutUrl"])


def _text(client: FlaskClient, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    return response.get_data(as_text=True)


def test_the_payment_link_page_shows_the_locked_amount_and_title_escaped(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    _, url = _link(svc_http, auth)
    html = _text(svc_http, url)
    assert "50.00 ETB" in html
    assert "Concert &lt;ticket&gt;" in html and "<ticket>" not in html
    for gateway in ("telebirr", "mpesa", "cbe"):
        assert f'value="{gateway}"' in html
    assert 'name="email"' in html and 'name="amount"' not in html


def test_email_is_not_asked_when_the_checkout_named_the_customer(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    _, url = _link(svc_http, auth, customer={"email": "a@b.co"})
    assert 'name="email"' not in _text(svc_http, url)


def test_custom_amount_page_shows_the_description(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    result = checkout(svc_http, auth, amount=12345, description="Invoice 42")
    html = _text(svc_http, path(result["checkoutUrl"]))
    assert "Invoice 42" in html and "123.45 ETB" in html


@pytest.mark.parametrize(
    ("phone", "state"),
    [
        ("0900000001", "paid"),
        ("0900000002", "failed"),
        ("251900000001", "paid"),
        ("251900000002", "failed"),
        ("0911223344", "in-flight"),
    ],
)
def test_each_trigger_phone_on_the_payment_link_page(
    svc_http: FlaskClient, auth: dict[str, str], phone: str, state: str
) -> None:
    _, url = _link(svc_http, auth)
    response = svc_http.post(url, data={"gateway": "telebirr", "phone": phone, "email": "a@b.co"})
    assert response.status_code == 303
    html = _text(svc_http, path(response.headers["Location"]))
    assert f'data-state="{state}"' in html
    if state == "failed":
        assert FAILURE_MESSAGES["payment_failed"] in html
    if state == "in-flight":
        assert "Open the sandbox simulator" in html and 'http-equiv="refresh"' in html


def test_the_page_shows_a_refused_retry_and_bad_input(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    _, url = _link(svc_http, auth)
    bad = svc_http.post(url, data={"gateway": "telebirr", "phone": "12", "email": "a@b.co"})
    assert bad.status_code == 400 and "phone must be a phone number" in bad.get_data(as_text=True)
    svc_http.post(url, data={"gateway": "telebirr", "phone": "0911223344", "email": "a@b.co"})
    again = svc_http.post(url, data={"gateway": "telebirr", "phone": "0911223344"})
    assert again.status_code == 409 and again.headers["Retry-After"] == "150"


def test_the_page_shows_expiry(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    _, url = _link(svc_http, auth)
    svc_sandbox.advance(timedelta(minutes=30))
    html = _text(svc_http, url)
    assert 'data-state="expired"' in html and FAILURE_MESSAGES["session_expired"] in html


def test_paid_page_links_to_the_success_url(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    session_id, url = _link(svc_http, auth, successUrl="https://shop.example/done/{CHECKOUT_ID}")
    svc_http.post(url, data={"gateway": "cbe", "phone": "0900000001", "email": "a@b.co"})
    assert f'href="https://shop.example/done/{session_id}"' in _text(svc_http, url)


@pytest.mark.parametrize(
    "url", ["/pay/cs_" + "0" * 24, "/pay/nothing", "/simulate/" + "0" * 24, "/p/p_missing"]
)
def test_unknown_pages_are_404_html(svc_http: FlaskClient, url: str) -> None:
    response = svc_http.get(url)
    assert response.status_code == 404 and response.mimetype == "text/html"


def test_a_simulator_session_has_no_payment_link_page(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    product = published(svc_http, auth)
    result = checkout(svc_http, auth, productId=product["_id"], gateway="cbe", customer=BUYER)
    assert svc_http.get(f"/pay/cs_{result['sessionId']}").status_code == 404


# --- simulator page -----------------------------------------------------------------------------


def _simulated(
    client: FlaskClient, auth: dict[str, str], phone: str = "0911223344"
) -> tuple[str, str]:
    result = push_checkout(client, auth, phone)
    return result["sessionId"], path(result["checkoutUrl"])


def test_the_simulator_page_offers_approve_and_every_failure_code(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    _, url = _simulated(svc_http, auth)
    html = _text(svc_http, url)
    assert 'id="approve"' in html
    for code in FAILURE_CODES:
        assert f'value="{code}"' in html


def test_approve_button(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    session_id, url = _simulated(svc_http, auth)
    response = svc_http.post(url + "/approve")
    assert response.status_code == 303
    assert 'data-state="paid"' in _text(svc_http, path(response.headers["Location"]))
    assert status_of(svc_http, session_id)["status"] == "completed"


@pytest.mark.parametrize("code", FAILURE_CODES)
def test_fail_buttons(svc_http: FlaskClient, auth: dict[str, str], code: str) -> None:
    session_id, url = _simulated(svc_http, auth)
    svc_http.post(url + "/fail", data={"code": code})
    status = status_of(svc_http, session_id)
    assert (status["status"], status["failure"]["code"]) == ("expired", code)
    assert FAILURE_MESSAGES[code] in _text(svc_http, url)


@pytest.mark.parametrize(
    ("phone", "state"), [("251900000001", "paid"), ("251900000002", "expired")]
)
def test_trigger_phones_on_the_simulator_page(
    svc_http: FlaskClient, auth: dict[str, str], phone: str, state: str
) -> None:
    _, url = _simulated(svc_http, auth, phone)
    assert f'data-state="{state}"' in _text(svc_http, url)


def test_the_simulator_decides_a_payment_link_prompt(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    session_id, url = _link(svc_http, auth)
    svc_http.post(url, data={"gateway": "mpesa", "phone": "0911223344", "email": "a@b.co"})
    svc_http.post(f"/simulate/{session_id}/fail", data={"code": "payment_canceled"})
    assert status_of(svc_http, session_id)["attempt"]["lastFailure"]["code"] == "payment_canceled"
    svc_http.post(url, data={"gateway": "mpesa", "phone": "0911223344"})
    svc_http.post(f"/simulate/{session_id}/approve")
    assert status_of(svc_http, session_id)["status"] == "completed"


# --- product page ---------------------------------------------------------------------------------


def test_the_product_page_starts_a_hosted_checkout(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth, description="A good book")
    url = f"/p/{product['checkoutToken']}"
    html = _text(svc_http, url)
    assert "A good book" in html and "50.00 ETB" in html
    response = svc_http.post(url, data={"email": "a@b.co", "name": "Abebe"})
    assert response.status_code == 303
    pay = path(response.headers["Location"])
    assert pay.startswith("/pay/cs_")
    assert svc_sandbox.checkout.get(pay[len("/pay/cs_") :]).mode.value == "hosted"
    assert 'name="email"' not in _text(svc_http, pay)


def test_a_pwyw_product_page_takes_an_amount_in_etb(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    product = published(
        svc_http, auth, pricingModel="pwyw", price={"minimumAmount": 1000, "defaultAmount": 1500}
    )
    url = f"/p/{product['checkoutToken']}"
    assert 'value="15.00"' in _text(svc_http, url)
    low = svc_http.post(url, data={"email": "a@b.co", "amount": "9.99"})
    assert low.status_code == 400 and "amount must be at least 1000" in low.get_data(as_text=True)
    ok = svc_http.post(url, data={"email": "a@b.co", "amount": "12.50"})
    assert "12.50 ETB" in _text(svc_http, path(ok.headers["Location"]))


def test_a_free_product_page_gives_the_order(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    product = published(svc_http, auth, pricingModel="free", price=None)
    response = svc_http.post(f"/p/{product['checkoutToken']}", data={"email": "a@b.co"})
    assert response.status_code == 200 and 'data-state="paid"' in response.get_data(as_text=True)


@pytest.mark.parametrize("status", ["draft", "archived"])
def test_only_published_products_have_a_page(
    svc_http: FlaskClient, auth: dict[str, str], status: str
) -> None:
    product = published(svc_http, auth)
    svc_http.patch(f"/api/products/{product['_id']}", json={"status": status}, headers=auth)
    assert svc_http.get(f"/p/{product['checkoutToken']}").status_code == 404


def test_the_product_page_asks_the_checkout_fields(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth)
    field = svc_http.post(
        f"/_sandbox/orgs/{org_id(svc_sandbox)}/checkout-fields",
        json={"label": "Seat", "required": True},
    ).json["id"]  # type: ignore[index]
    url = f"/p/{product['checkoutToken']}"
    assert f'name="field_{field}"' in _text(svc_http, url)
    missing = svc_http.post(url, data={"email": "a@b.co"})
    assert missing.status_code == 400
    ok = svc_http.post(url, data={"email": "a@b.co", f"field_{field}": "A7"})
    session_id = path(ok.headers["Location"])[len("/pay/cs_") :]
    assert svc_sandbox.checkout.get(session_id).collected_fields == {field: "A7"}
