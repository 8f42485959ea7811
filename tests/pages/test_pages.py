"""Hosted pages (server-rendered, no JavaScript): the payment-link page, the simulator page
and the product page, driven the way a browser without scripts would (GET, form POST)."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from svc_sandbox.commerce.payments import FAILURE_MESSAGES, PROVIDER_FAILURE_CODES
from svc_sandbox.exposure import FormTokens
from svc_sandbox.exposure_api import EXTENSION as FORM_TOKENS
from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import (
    BUYER,
    PROMPT_MODES,
    checkout,
    org_id,
    path,
    published,
    push_checkout,
    session_of_mode,
    status_of,
)
from tests.pages.forms import csrf_of, submit


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


def test_the_phone_the_checkout_named_is_filled_in(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """As on the provider page: the number the merchant sent is the one the buyer likely pays
    from (the payment-link form left it empty)."""
    _, url = _link(svc_http, auth, customer={"name": "Bob", "phone": "0911000000"})
    assert 'name="phone" type="tel" value="251911000000"' in _text(svc_http, url)
    _, bare = _link(svc_http, auth)
    assert 'name="phone" type="tel" value=""' in _text(svc_http, bare)


def test_custom_amount_page_shows_the_description(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    result = checkout(svc_http, auth, amount=12345, description="Invoice 42")
    html = _text(svc_http, path(result["checkoutUrl"]))
    assert "Invoice 42" in html and "123.45 ETB" in html


@pytest.mark.parametrize(
    ("phone", "lands_on", "state"),
    [
        ("0900000001", "pay", "paid"),
        ("0900000002", "pay", "failed"),
        ("251900000001", "pay", "paid"),
        ("251900000002", "pay", "failed"),
        ("0911223344", "simulate", "in-flight"),
    ],
)
def test_each_trigger_phone_on_the_payment_link_page(
    svc_http: FlaskClient, auth: dict[str, str], phone: str, lands_on: str, state: str
) -> None:
    """§8: the two trigger numbers pay or fail on the page; any other number opens the
    simulator page with approve and fail buttons."""
    session_id, url = _link(svc_http, auth)
    response = submit(svc_http, url, {"gateway": "telebirr", "phone": phone, "email": "a@b.co"})
    assert response.status_code == 303
    landed = path(response.headers["Location"])
    assert landed == (url if lands_on == "pay" else f"/simulate/{session_id}")
    html = _text(svc_http, landed)
    assert f'data-state="{state}"' in html
    if state == "failed":
        assert FAILURE_MESSAGES["payment_failed"] in html
    if state == "in-flight":
        assert 'id="approve"' in html and 'value="payment_failed"' in html
        assert "Back to the payment page" in html
        back = _text(svc_http, url)  # the payment page still offers the simulator
        assert "Open the sandbox simulator" in back and ">Refresh</a>" in back
        # WCAG 2.2.1 (F41): no refresh the person cannot stop (every 3 s without script, it
        # closed the retry form and wiped what was being typed); the page says to refresh.
        assert 'http-equiv="refresh"' not in back
        assert "Without JavaScript it does not: press Refresh" in back


@pytest.mark.parametrize(
    ("trigger", "lands_on"),
    [
        ({"outcome": "wait"}, "simulate"),
        ({"outcome": "approve", "decisionDelaySeconds": 30}, "pay"),
        ({"outcome": "fail"}, "pay"),
    ],
)
def test_a_custom_trigger_opens_the_simulator_only_when_it_waits_for_it(
    svc_http: FlaskClient, auth: dict[str, str], trigger: dict[str, object], lands_on: str
) -> None:
    added = svc_http.post("/_sandbox/triggers", json={"phone": "0911000111", **trigger})
    assert added.status_code == 201, added.json
    session_id, url = _link(svc_http, auth)
    fields = {"gateway": "telebirr", "phone": "0911000111", "email": "a@b.co"}
    landed = path(submit(svc_http, url, fields).headers["Location"])
    assert landed == (url if lands_on == "pay" else f"/simulate/{session_id}")
    assert ("Open the sandbox simulator" in _text(svc_http, url)) is (lands_on == "simulate")


def test_a_json_attempt_still_answers_the_status(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """API clients of POST /pay keep their answer: 200 CheckoutStatus, no redirect."""
    session_id, url = _link(svc_http, auth)
    body = {"gateway": "telebirr", "phone": "0911223344", "email": "a@b.co"}
    response = svc_http.post(url, json=body)
    assert response.status_code == 200 and "Location" not in response.headers
    assert response.json == status_of(svc_http, session_id)
    assert response.json["attempt"] == {"inFlight": True, "lastFailure": None}


def test_the_page_shows_a_refused_retry_and_bad_input(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    _, url = _link(svc_http, auth)
    bad = submit(svc_http, url, {"gateway": "telebirr", "phone": "12", "email": "a@b.co"})
    assert bad.status_code == 400 and "phone must be a phone number" in bad.get_data(as_text=True)
    token = csrf_of(svc_http, url)
    submit(svc_http, url, {"gateway": "telebirr", "phone": "0911223344", "email": "a@b.co"})
    again = svc_http.post(url, data={"gateway": "telebirr", "phone": "0911223344", "csrf": token})
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
    submit(svc_http, url, {"gateway": "cbe", "phone": "0900000001", "email": "a@b.co"})
    assert f'href="https://shop.example/done/{session_id}"' in _text(svc_http, url)


@pytest.mark.parametrize(
    "url",
    [
        "/pay/cs_" + "0" * 24,
        "/pay/nothing",
        "/simulate/" + "0" * 24,
        "/p/p_missing",
        # A page root itself (a link cut short) is a person's page too.
        *("/pay", "/pay/", "/simulate", "/p", "/provider", "/provider/"),
    ],
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


def test_a_direction_override_in_a_title_stays_inside_it_where_no_markup_can_go(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """A page's <title> and an image's alt text are plain text: an unclosed U+202E in a
    product's title turned the words after it around there ("xobdnas-cvs · ..."). The title is
    isolated (FSI ... PDI), never changed."""
    title = "\u202eLIAM"
    product = published(svc_http, auth, title=title, media=["https://cdn.example/a.png"])
    paid = checkout(svc_http, auth, productId=product["_id"])
    pushed = push_checkout(svc_http, auth, product_id=product["_id"])
    pages = {
        f"/p/{product['checkoutToken']}": f"{_isolated(title)} · svc-sandbox",
        path(paid["checkoutUrl"]): f"Pay 50.00 ETB — {_isolated(title)} · svc-sandbox",
        path(pushed["checkoutUrl"]): f"Simulator — {_isolated(title)} · svc-sandbox",
    }
    for url, wanted in pages.items():
        assert _title(_text(svc_http, url)) == wanted
    product_page = _text(svc_http, f"/p/{product['checkoutToken']}")
    assert f'alt="Picture of {_isolated(title)}"' in product_page


def test_the_payment_link_page_is_titled_by_the_sessions_state(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """A paid or ended page kept "Pay 50.00 ETB" in its title (WCAG 2.4.2); the deadline was
    the API's timestamp, milliseconds and all."""
    session_id, url = _link(svc_http, auth)
    html = _text(svc_http, url)
    deadline = svc_sandbox.checkout.get(session_id).expires_at
    assert f">{deadline:%d %b %Y, %H:%M} UTC</time>" in html
    assert _title(html) == "Pay 50.00 ETB — \u2068Concert <ticket>\u2069 · svc-sandbox"
    svc_sandbox.payments.approve(session_id)
    assert _title(_text(svc_http, url)) == "Paid — \u2068Concert <ticket>\u2069 · svc-sandbox"
    _, ended_url = _link(svc_http, auth)
    svc_sandbox.advance(timedelta(minutes=31))
    assert _title(_text(svc_http, ended_url)).startswith("Ended — ")


def _title(html: str) -> str:
    return unescape(html.split("<title>")[1].split("</title>")[0])


def _isolated(text: str) -> str:
    return f"\u2068{text}\u2069"


# --- simulator page -----------------------------------------------------------------------------


def _simulated(
    client: FlaskClient, auth: dict[str, str], phone: str = "0911223344"
) -> tuple[str, str]:
    result = push_checkout(client, auth, phone)
    return result["sessionId"], path(result["checkoutUrl"])


def test_the_simulator_page_offers_approve_and_every_failure_code(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """Every code a provider decides; not session_expired, the session's own 30 minutes."""
    _, url = _simulated(svc_http, auth)
    html = _text(svc_http, url)
    assert 'id="approve"' in html
    for code in PROVIDER_FAILURE_CODES:
        assert f'value="{code}"' in html
    assert 'value="session_expired"' not in html


def test_approve_button(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    session_id, url = _simulated(svc_http, auth)
    response = submit(svc_http, url, action=url + "/approve")
    assert response.status_code == 303
    assert 'data-state="paid"' in _text(svc_http, path(response.headers["Location"]))
    assert status_of(svc_http, session_id)["status"] == "completed"


@pytest.mark.parametrize("code", PROVIDER_FAILURE_CODES)
def test_fail_buttons(svc_http: FlaskClient, auth: dict[str, str], code: str) -> None:
    session_id, url = _simulated(svc_http, auth)
    submit(svc_http, url, {"code": code}, url + "/fail")
    status = status_of(svc_http, session_id)
    assert (status["status"], status["failure"]["code"]) == ("expired", code)
    page = _text(svc_http, url)
    assert FAILURE_MESSAGES[code] in page
    # §3: a failed push ends its session; nothing on the page can be tried again.
    assert "<strong>Ended.</strong>" in page and "try again" not in page.lower()


def test_a_link_that_ended_after_a_failed_attempt_invites_no_retry(
    svc_http: FlaskClient, svc_sandbox: Sandbox, auth: dict[str, str]
) -> None:
    """The last attempt's reason stays (§6); the session has ended, so no "try again"."""
    session_id, url = _link(svc_http, auth)
    submit(svc_http, url, {"gateway": "telebirr", "phone": "0900000002", "email": "a@b.co"})
    assert "You can try again." in _text(svc_http, url)  # open: the buyer may retry (§3)
    svc_sandbox.advance(timedelta(minutes=31))
    page = _text(svc_http, url)
    assert status_of(svc_http, session_id)["failure"]["code"] == "payment_failed"
    assert "This checkout has ended." in page and FAILURE_MESSAGES["payment_failed"] in page
    assert "try again" not in page.lower()


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
    submit(svc_http, url, {"gateway": "mpesa", "phone": "0911223344", "email": "a@b.co"})
    sim = f"/simulate/{session_id}"
    submit(svc_http, sim, {"code": "payment_canceled"}, sim + "/fail")
    assert status_of(svc_http, session_id)["attempt"]["lastFailure"]["code"] == "payment_canceled"
    submit(svc_http, url, {"gateway": "mpesa", "phone": "0911223344"})
    submit(svc_http, sim, action=sim + "/approve")
    assert status_of(svc_http, session_id)["status"] == "completed"


#: Every simulator route, as the page's forms send it (with the token the page issues for the
#: session) and as a script sends it (JSON).
SIMULATOR_ROUTES = [
    ("GET", "", None),
    ("POST", "/approve", "form"),
    ("POST", "/approve", "json"),
    ("POST", "/fail", "form"),
    ("POST", "/fail", "json"),
]


def _simulator_request(
    client: FlaskClient, session_id: str, route: tuple[str, str, str | None]
) -> TestResponse:
    method, action, body = route
    url = f"/simulate/{session_id}{action}"
    if body == "json":
        return client.open(url, method=method, json={"code": "payment_failed"})
    if body == "form":
        tokens: FormTokens = client.application.extensions[FORM_TOKENS]
        fields = {"code": "payment_failed", "csrf": tokens.issue(session_id)}
        return client.open(url, method=method, data=fields)
    return client.open(url, method=method)


@pytest.mark.parametrize("mode", PROMPT_MODES)
@pytest.mark.parametrize("route", SIMULATOR_ROUTES, ids=lambda r: f"{r[0]}{r[1]}-{r[2]}")
def test_the_simulator_answers_404_for_a_production_session(
    svc_http: FlaskClient, live_auth: dict[str, str], mode: str, route: tuple[str, str, str | None]
) -> None:
    """It is the sandbox's simulator (§1): a production prompt is decided by the provider
    settings and the control plane, never by a page anyone on the network can reach."""
    session_id = session_of_mode(svc_http, live_auth, mode)
    before = svc_http.get("/_sandbox/state").data
    refused = _simulator_request(svc_http, session_id, route)
    unknown = _simulator_request(svc_http, "0" * 24, route)
    assert refused.status_code == 404
    assert refused.mimetype == ("application/json" if route[2] == "json" else "text/html")
    assert refused.get_data(as_text=True) == unknown.get_data(as_text=True)  # nothing tells
    assert "Checkout session not found" in refused.get_data(as_text=True)
    assert svc_http.get("/_sandbox/state").data == before
    assert status_of(svc_http, session_id)["status"] == "open"


# --- product page ---------------------------------------------------------------------------------


def test_the_product_page_starts_a_hosted_checkout_on_the_simulator(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """Sandbox, no token, no gateway: no payment link; telebirr on the simulator (§4)."""
    product = published(svc_http, auth, description="A good book")
    url = f"/p/{product['checkoutToken']}"
    html = _text(svc_http, url)
    assert "A good book" in html and "50.00 ETB" in html and "telebirr" in html
    response = submit(svc_http, url, {"email": "a@b.co", "name": "Abebe"})
    assert response.status_code == 303
    simulator = path(response.headers["Location"])
    session_id = simulator[len("/simulate/") :]
    session = svc_sandbox.checkout.get(session_id)
    assert (session.mode.value, session.gateway) == ("hosted", "telebirr")
    assert svc_http.get(f"/pay/cs_{session_id}").status_code == 404
    submit(svc_http, simulator, action=simulator + "/approve")
    assert status_of(svc_http, session_id)["status"] == "completed"


def _production_hosted(client: FlaskClient, live_auth: dict[str, str], **data: str) -> str:
    product = published(client, live_auth)
    page = f"/p/{product['checkoutToken']}"
    response = submit(client, page, {"email": "a@b.co", **data})
    assert response.status_code == 303
    provider = path(response.headers["Location"])
    assert provider.startswith("/provider/")
    return provider


def test_a_production_product_page_sends_the_buyer_to_the_provider_page(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    provider = _production_hosted(svc_http, live_auth, phone="0911223344")
    html = _text(svc_http, provider)
    assert "telebirr" in html and 'value="251911223344"' in html and 'id="confirm"' in html
    confirmed = submit(svc_http, provider, {"phone": "0911223344"}, provider + "/confirm")
    assert confirmed.status_code == 303
    assert 'data-state="paid"' in _text(svc_http, provider)
    assert status_of(svc_http, provider[len("/provider/") :])["status"] == "completed"


def test_cancel_on_the_provider_page_ends_the_session(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    provider = _production_hosted(svc_http, live_auth)
    submit(svc_http, provider, action=provider + "/cancel")
    status = status_of(svc_http, provider[len("/provider/") :])
    assert (status["status"], status["failure"]["code"]) == ("expired", "payment_canceled")
    assert "attempt" not in status  # not a payment link


@pytest.mark.parametrize("button", ["/approve", "/fail"])
def test_a_simulator_button_of_an_earlier_state_shows_the_session_as_it_is_now(
    svc_http: FlaskClient, auth: dict[str, str], button: str
) -> None:
    """A second tab, opened before the first approved: its buttons led to the dead-end error
    page ("Something went wrong", no way back)."""
    session_id, url = _simulated(svc_http, auth)
    second_tab = csrf_of(svc_http, url)
    submit(svc_http, url, action=url + "/approve")
    again = svc_http.post(url + button, data={"csrf": second_tab, "code": "payment_failed"})
    assert again.status_code == 409
    assert 'data-state="paid"' in again.text and 'id="error" role="alert"' in again.text
    assert "Something went wrong" not in again.text
    assert status_of(svc_http, session_id)["status"] == "completed"


def test_a_refused_gateway_takes_the_focus_to_the_first_choice(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    _, url = _link(svc_http, auth)
    sent = {"gateway": "bogus", "phone": "0911223344", "email": "a@b.co"}
    refused = submit(svc_http, url, sent)
    assert refused.status_code == 400 and 'id="gateway-error"' in refused.text
    assert refused.text.count("autofocus") == 1
    assert re.search(r'value="telebirr"[^>]*required autofocus>', refused.text)


def test_a_fail_refused_for_its_code_says_why_on_the_simulator_page(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """A script's code: the page said only "Please correct the field marked below." and
    marked no field (the button's value has none)."""
    session_id, url = _simulated(svc_http, auth)
    refused = submit(svc_http, url, {"code": "session_expired"}, url + "/fail")
    assert refused.status_code == 400
    message = unescape(refused.text.split('id="error" role="alert" tabindex="-1" autofocus>')[1])
    assert message.startswith("code must not be session_expired")
    assert status_of(svc_http, session_id)["status"] == "open"


def test_cancel_from_a_tab_of_an_earlier_state_shows_the_payment_done(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    provider = _production_hosted(svc_http, live_auth, phone="0911223344")
    second_tab = csrf_of(svc_http, provider)
    submit(svc_http, provider, {"phone": "0911223344"}, provider + "/confirm")
    cancelled = svc_http.post(provider + "/cancel", data={"csrf": second_tab})
    assert cancelled.status_code == 409
    assert 'data-state="paid"' in cancelled.text and 'id="error" role="alert"' in cancelled.text
    assert status_of(svc_http, provider[len("/provider/") :])["status"] == "completed"


def test_a_page_of_live_state_is_fetched_again_from_history(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """Back after paying showed a paid session's Pay form. A page is never stored; the page
    of a refused form (a POST's answer: storing it spares a "Confirm Form Resubmission")
    names its address for forms.js to fetch instead."""
    _, url = _link(svc_http, auth)
    shown = svc_http.get(url)
    assert shown.headers["Cache-Control"] == "no-store"
    assert svc_http.head(url).headers["Cache-Control"] == "no-store"  # RFC 9110 §9.3.2
    assert _body_of(shown.text) == (url, False)
    refused = submit(svc_http, url, {"phone": "12"})
    assert refused.status_code == 400 and "Cache-Control" not in refused.headers
    assert _body_of(refused.text) == (url, True)


def _body_of(html: str) -> tuple[str, bool]:
    """The path of the page a page names as its own (data-page), and whether it was posted."""
    found = re.search(r'<body data-page="([^"]+)"( data-posted)?>', html)
    assert found is not None
    return path(unescape(found.group(1))), found.group(2) is not None


def test_the_provider_page_refuses_a_bad_phone_and_keeps_the_session_open(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    provider = _production_hosted(svc_http, live_auth)
    bad = submit(svc_http, provider, {"phone": "12"}, provider + "/confirm")
    assert bad.status_code == 400 and "phone" in bad.get_data(as_text=True)
    assert status_of(svc_http, provider[len("/provider/") :])["status"] == "open"


def test_a_sandbox_session_has_no_provider_page(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    session_id, _ = _link(svc_http, auth)
    assert svc_http.get(f"/provider/{session_id}").status_code == 404


def test_a_pwyw_product_page_takes_an_amount_in_etb(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    product = published(
        svc_http, auth, pricingModel="pwyw", price={"minimumAmount": 1000, "defaultAmount": 1500}
    )
    url = f"/p/{product['checkoutToken']}"
    assert 'value="15.00"' in _text(svc_http, url)
    ok = submit(svc_http, url, {"email": "a@b.co", "amount": "12.50"})
    assert "12.50 ETB" in _text(svc_http, path(ok.headers["Location"]))


@pytest.mark.parametrize("amount", ["50", "50.00", " 50 ", "\t50.0\n"])
def test_the_product_page_reads_an_amount_in_ascii_digits(
    svc_http: FlaskClient, auth: dict[str, str], amount: str
) -> None:
    """ASCII whitespace a browser or a hand leaves around the figure is not part of it."""
    product = published(svc_http, auth, pricingModel="pwyw", price={"minimumAmount": 1000})
    ok = submit(svc_http, f"/p/{product['checkoutToken']}", {"email": "a@b.co", "amount": amount})
    assert "50.00 ETB" in _text(svc_http, path(ok.headers["Location"]))


#: Texts Python's Decimal() reads as 50 that are no ASCII decimal text.
NOT_ASCII_DECIMAL_50 = [
    "\u0665\u0660",  # Arabic-Indic digits
    "\uff15\uff10",  # full-width digits
    "\u0665\u0660.\u0660\u0660",
    "5_0",
    "5e1",
    "0.5e2",
    "1e999997",
    "+50",
    "\u200950\u2009",  # thin spaces around
    "\u00a050",  # a no-break space before
]


@pytest.mark.parametrize(
    ("amount", "says"),
    [
        ("9.99", "amount must be at least 10.00 ETB (the product&#39;s minimum)"),
        ("-5", "amount must be at least 10.00 ETB (the product&#39;s minimum)"),
        ("1000000000.01", "amount must be at most 1,000,000,000.00 ETB"),
        ("9" * 100_000, "amount must be at most 1,000,000,000.00 ETB"),  # no huge int()
        ("NaN", "amount must be an amount in ETB such as 50.00"),
        ("-Infinity", "amount must be an amount in ETB such as 50.00"),
        ("sNaN", "amount must be an amount in ETB such as 50.00"),
        ("12.345", "amount must have at most two decimals"),
        ("ten", "amount must be an amount in ETB such as 50.00"),
        # ASCII decimal text only (core/numbers.py): Decimal() reads each of these as 50.
        *((text, "amount must be an amount in ETB such as 50.00") for text in NOT_ASCII_DECIMAL_50),
    ],
)
def test_the_product_page_words_a_refused_amount_in_etb_as_it_asks_it(
    svc_http: FlaskClient, auth: dict[str, str], amount: str, says: str
) -> None:
    """The form asks "Amount (ETB)": its refusals name ETB figures, never santim."""
    product = published(svc_http, auth, pricingModel="pwyw", price={"minimumAmount": 1000})
    before = svc_http.get("/_sandbox/state").data
    refused = submit(
        svc_http, f"/p/{product['checkoutToken']}", {"email": "a@b.co", "amount": amount}
    )
    assert refused.status_code == 400
    assert f'<p class="field-error" id="amount-error">{says}</p>' in refused.get_data(as_text=True)
    assert svc_http.get("/_sandbox/state").data == before


def _thank_you(client: FlaskClient, response: TestResponse) -> str:
    """The page a buy with nothing to pay redirects to (303), as a browser follows it."""
    assert response.status_code == 303, response.get_data(as_text=True)
    html = _text(client, path(response.headers["Location"]))
    assert "<h1>Thank you</h1>" in html and 'data-state="paid"' in html
    return html


def test_a_free_product_page_gives_the_order_once_however_often_its_page_is_reloaded(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """The thank-you page answered the POST itself: a reload sent the form again and made a
    second order. Now the POST redirects (303) to the order's page, as the paid flows do."""
    product = published(svc_http, auth, pricingModel="free", price=None)
    response = submit(svc_http, f"/p/{product['checkoutToken']}", {"email": "a@b.co"})
    [order] = svc_http.get("/api/orders", headers=auth).json["items"]  # type: ignore[index]
    done = path(response.headers["Location"])
    assert done == f"/p/{product['checkoutToken']}/orders/{order['_id']}"
    for _ in range(2):
        assert f'<code id="order">{order["_id"]}</code>' in _thank_you(svc_http, response)
    assert svc_http.get("/api/orders", headers=auth).json["total"] == 1  # type: ignore[index]


def test_an_order_page_under_another_product_is_not_found(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    free = published(svc_http, auth, pricingModel="free", price=None)
    other = published(svc_http, auth, pricingModel="free", price=None)
    response = submit(svc_http, f"/p/{free['checkoutToken']}", {"email": "a@b.co"})
    order_id = path(response.headers["Location"]).rsplit("/", 1)[1]
    for url in (
        f"/p/{other['checkoutToken']}/orders/{order_id}",
        f"/p/{free['checkoutToken']}/orders/{'0' * 24}",
    ):
        answer = svc_http.get(url)
        assert answer.status_code == 404 and answer.mimetype == "text/html"


@pytest.mark.parametrize(
    ("product_fields", "form"),
    [
        ({"pricingModel": "fixed", "price": {"amount": 0}}, {}),
        ({"pricingModel": "pwyw", "price": {"minimumAmount": 0}}, {"amount": "0"}),
        ({"pricingModel": "free", "price": None}, {}),
    ],
    ids=["fixed-0", "pwyw-0", "free"],
)
def test_with_nothing_to_pay_the_product_page_neither_needs_nor_checks_a_phone(
    svc_http: FlaskClient,
    auth: dict[str, str],
    product_fields: dict[str, Any],
    form: dict[str, str],
) -> None:
    """A checkout of 0 ETB gives the order at once: a phone (a browser's autofill, say) is
    for a payment that never comes, so a wrong one blocks nothing."""
    product = published(svc_http, auth, **product_fields)
    data = {**form, "email": "a@b.co", "phone": "not a phone"}
    _thank_you(svc_http, submit(svc_http, f"/p/{product['checkoutToken']}", data))


def test_a_fixed_price_of_0_reads_as_a_free_product_page(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    zero = published(svc_http, auth, pricingModel="fixed", price={"amount": 0})
    free = published(svc_http, auth, pricingModel="free", price=None)
    pages = [_text(svc_http, f"/p/{p['checkoutToken']}") for p in (zero, free)]
    for html in pages:
        assert '<p class="amount" id="price">Free</p>' in html
        assert 'name="phone"' not in html and "telebirr" not in html
        assert ">Get it</button>" in html


def test_a_pwyw_page_with_a_minimum_of_0_says_the_phone_is_for_a_paid_amount(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    product = published(svc_http, auth, pricingModel="pwyw", price={"minimumAmount": 0})
    url = f"/p/{product['checkoutToken']}"
    html = _text(svc_http, url)
    assert 'name="amount"' in html and 'name="phone"' in html
    assert "Only to pay an amount above 0" in html
    before = svc_http.get("/_sandbox/state").data
    paid = submit(svc_http, url, {"amount": "1.00", "email": "a@b.co", "phone": "not a phone"})
    assert paid.status_code == 400  # an amount to pay: the phone is checked
    assert 'id="phone-error"' in paid.get_data(as_text=True)
    assert svc_http.get("/_sandbox/state").data == before


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
    missing = submit(svc_http, url, {"email": "a@b.co"})
    assert missing.status_code == 400
    # Beside its input, the buyer reads the field's label, not the API's path and id.
    for sent in ({"email": "a@b.co"}, {"email": "a@b.co", f"field_{field}": ""}):
        page = submit(svc_http, url, sent).get_data(as_text=True)
        assert f'<p class="field-error" id="field_{field}-error">Seat is required</p>' in page
        assert "collectedFields" not in page and field not in page.replace(f"field_{field}", "")
    no_email = submit(svc_http, url, {"email": "", f"field_{field}": "A7"}).get_data(as_text=True)
    assert '<p class="field-error" id="email-error">email is required</p>' in no_email
    assert "customer." not in no_email
    ok = submit(svc_http, url, {"email": "a@b.co", f"field_{field}": "A7"})
    session_id = path(ok.headers["Location"])[len("/simulate/") :]
    assert svc_sandbox.checkout.get(session_id).collected_fields == {field: "A7"}


@pytest.mark.parametrize(("required", "first"), [(True, "Choose one"), (False, "None")])
def test_a_select_field_starts_with_an_option_that_says_what_it_is(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, required: bool, first: str
) -> None:
    """Its empty first option had no text: a screen reader read "blank"."""
    product = published(svc_http, auth)
    body = {"label": "Size", "type": "select", "options": ["S", "M"], "required": required}
    field = svc_http.post(f"/_sandbox/orgs/{org_id(svc_sandbox)}/checkout-fields", json=body)
    assert field.status_code == 201, field.json
    html = _text(svc_http, f"/p/{product['checkoutToken']}")
    assert f'<option value="">{first}</option><option>S</option><option>M</option>' in html


def test_a_form_with_a_nul_is_refused_and_changes_nothing(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    _, url = _link(svc_http, auth)
    before = svc_http.get("/_sandbox/state").data
    refused = submit(
        svc_http,
        url,
        {"gateway": "telebirr", "phone": "0911223344", "name": "a\x00b", "email": "a@b.co"},
    )
    assert refused.status_code == 400
    assert "name must not contain NUL characters" in refused.get_data(as_text=True)
    assert svc_http.get("/_sandbox/state").data == before


def test_a_buyer_told_to_wait_reads_how_long(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """A 429 gives the buy and pay forms back, as typed, saying the wait in seconds (a person
    never sees the Retry-After header); the API's JSON says the same words."""
    svc_sandbox.settings.rate_limits = True
    product = published(svc_http, auth, pricingModel="free", price=None)
    url = f"/p/{product['checkoutToken']}"
    for _ in range(40):  # §8: 40 checkouts without a token per 5 minutes per IP
        assert submit(svc_http, url, {"email": "a@b.co"}).status_code == 303
    svc_sandbox.advance(timedelta(seconds=100))
    refused = submit(svc_http, url, {"email": "a@b.co"})
    text = refused.get_data(as_text=True)
    assert (refused.status_code, refused.headers["Retry-After"]) == (429, "200")
    # The form again, with what was typed: the buyer waits and submits it again.
    assert 'id="buy"' in text and 'value="a@b.co"' in text
    assert "Too many checkout requests: slow down and retry after 200 seconds" in text
    links = [_link(svc_http, auth)[1] for _ in range(31)]
    attempt = {"gateway": "telebirr", "phone": "0900000001", "email": "a@b.co"}
    for link in links[:30]:  # §8: 30 attempts per 5 minutes per IP
        assert submit(svc_http, link, attempt).status_code == 303
    refused = submit(svc_http, links[30], attempt)
    assert (refused.status_code, refused.headers["Retry-After"]) == (429, "300")
    text = refused.get_data(as_text=True)
    assert "Too many payment attempts: retry after 300 seconds" in text
    assert 'value="0900000001"' in text and 'value="a@b.co"' in text  # the form, as typed
    answer = svc_http.post(links[30], json={"gateway": "telebirr", "phone": "0900000001"})
    assert answer.json == {"error": "Too many payment attempts: retry after 300 seconds"}


def test_the_origin_answers_the_browsers_favicon_request_with_the_pages_icon(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    """Browsers ask /favicon.ico of every origin; a 404 is a console error on a first load."""
    icon = svc_http.get("/favicon.ico")
    assert (icon.status_code, icon.mimetype) == (200, "image/svg+xml")
    assert icon.data.startswith(b"<svg")
    assert all(e["path"] != "/favicon.ico" for e in svc_sandbox.journal.recent(10))


def test_the_simulator_shows_a_new_prompt_after_a_failed_attempt(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """The prompt out is what the simulator decides, whatever the attempt before it did
    (the payment page says the same: "Check your phone")."""
    session_id, url = _link(svc_http, auth)
    first = {"gateway": "telebirr", "phone": "0900000002", "email": "a@b.co"}
    assert submit(svc_http, url, first).status_code == 303  # the failure trigger
    again = submit(svc_http, url, {**first, "phone": "0911223344"})
    assert path(again.headers["Location"]) == f"/simulate/{session_id}"
    html = _text(svc_http, f"/simulate/{session_id}")
    assert 'data-state="in-flight"' in html and "Last attempt failed" not in html
    assert 'data-state="in-flight"' in _text(svc_http, url)


@pytest.mark.parametrize("action", ["/simulate/{id}/approve", "/simulate/{id}/fail"])
def test_a_form_address_opened_as_a_page_is_an_html_page(
    svc_http: FlaskClient, auth: dict[str, str], action: str
) -> None:
    """A person who opens (GET) where a form is sent lands on the message page, not JSON;
    the 405 still names the methods the address takes (RFC 9110 §15.5.6)."""
    session_id, _ = _link(svc_http, auth)
    answer = svc_http.get(action.format(id=session_id))
    assert answer.status_code == 405 and answer.mimetype == "text/html"
    assert "POST" in answer.headers["Allow"]
    assert "where a form is sent" in answer.get_data(as_text=True)


def test_another_method_on_a_page_that_takes_its_own_form_says_to_open_it(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """/pay/cs_... is the page (GET) and where its form is sent (POST): a PUT there is not
    told the address is only a form's."""
    _, url = _link(svc_http, auth)
    answer = svc_http.put(url)
    assert answer.status_code == 405 and answer.mimetype == "text/html"
    assert {"GET", "POST"} <= set(answer.headers["Allow"].split(", "))
    page = answer.get_data(as_text=True)
    assert f"{url} is a page: open it, and use its form" in page
    assert "where a form is sent" not in page


@pytest.mark.parametrize(
    ("environment", "next_page", "said"),
    [
        ("sandbox", "/simulate/", "approve or fail the payment on the sandbox's simulator page"),
        ("production", "/provider/", "pay with telebirr on the payment provider's page"),
    ],
)
def test_the_product_page_says_where_buy_leads(
    svc_http: FlaskClient,
    auth: dict[str, str],
    live_auth: dict[str, str],
    environment: str,
    next_page: str,
    said: str,
) -> None:
    """A sandbox product's checkout goes to the simulator, a production one's to the
    provider's page: the page's hints say which, and Buy leads there."""
    owner = auth if environment == "sandbox" else live_auth
    url = f"/p/{published(svc_http, owner, title='Book')['checkoutToken']}"
    page = unescape(" ".join(_text(svc_http, url).split()))
    assert said in page
    # The provider's page asks for the phone again; the simulator asks for none.
    assert ("You can also enter it on the next page." in page) == (environment == "production")
    bought = submit(svc_http, url, {"email": "a@b.co"})
    assert bought.status_code == 303 and next_page in bought.headers["Location"]
