"""A buyer in a real browser: the payment link with each trigger phone and a number that
waits (it opens the simulator; the 150 s refusal, then the retry), the simulator's approve and
fail, and the product page's buy form, with the errors shown next to the field that caused
them."""

from __future__ import annotations

import contextlib
from datetime import timedelta

import pytest
from flask.testing import FlaskClient
from playwright.sync_api import APIResponse, Browser, Page, Route, expect
from playwright.sync_api import Error as PlaywrightError

from svc_sandbox.app import create_app
from svc_sandbox.commerce.payments import FAILURE_MESSAGES
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.server import ServerThread
from tests.commerce.checkout_helpers import checkout, path, published, push_checkout, status_of
from tests.e2e.conftest import DESKTOP, STEP_TIMEOUT_MS, open_page
from tests.helpers import token_of


def payment_link(api: FlaskClient, auth: dict[str, str], **body: object) -> tuple[str, str]:
    """A payment link for a 50.00 ETB product: (session id, page path)."""
    product = published(api, auth, title="Concert ticket")
    result = checkout(api, auth, productId=product["_id"], **body)
    return result["sessionId"], path(result["checkoutUrl"])


def fill_and_pay(page: Page, phone: str, email: str | None = "buyer@example.com") -> None:
    page.get_by_label("M-Pesa").check()
    page.get_by_label("Phone number").fill(phone)
    if email is not None:
        page.get_by_label("Email (for your receipt)").fill(email)
    page.get_by_role("button", name="Pay 50.00 ETB").click()


@pytest.mark.parametrize(
    ("phone", "state", "says"),
    [
        ("0900000001", "paid", "Thank you, your payment went through."),
        ("0900000002", "failed", FAILURE_MESSAGES["payment_failed"]),
    ],
)
def test_a_buyer_pays_with_each_trigger_phone(
    page: Page, api: FlaskClient, auth: dict[str, str], phone: str, state: str, says: str
) -> None:
    session_id, url = payment_link(api, auth)
    page.goto(url)
    expect(page.locator("#amount")).to_have_text("50.00 ETB")
    fill_and_pay(page, phone)
    expect(page.locator("#state")).to_have_attribute("data-state", state)
    expect(page.locator("#state")).to_contain_text(says)
    assert status_of(api, session_id)["status"] == ("completed" if state == "paid" else "open")


def test_a_waiting_number_is_refused_for_150_seconds_then_the_buyer_retries(
    page: Page, api: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    session_id, url = payment_link(api, auth)
    page.goto(url)
    fill_and_pay(page, "0911223344")
    expect(page).to_have_url(f"{svc_sandbox.settings.root('simulate_url')}/{session_id}")
    page.get_by_role("link", name="Back to the payment page").click()
    expect(page.locator("#state")).to_have_attribute("data-state", "in-flight")
    expect(page.locator("#state")).to_contain_text(
        "A payment prompt was sent to 251911223344 (M-Pesa)."  # the gateway as the form names it
    )

    page.get_by_text("Entered the wrong number? Try again").click()
    fill_and_pay(page, "0900000001", email=None)
    expect(page.locator("#error")).to_contain_text(
        "A payment prompt is already out: answer it on the phone or try again in 150 seconds"
    )
    expect(page.get_by_label("Phone number")).to_have_value("0900000001")  # kept as typed

    page.goto(url)
    svc_sandbox.advance(timedelta(seconds=150))  # nobody answers: the prompt times out
    # pay-status.js polls the session and reloads the page once the prompt is decided.
    expect(page.locator("#state")).to_have_attribute("data-state", "failed")
    fill_and_pay(page, "0900000001", email=None)
    expect(page.locator("#state")).to_have_attribute("data-state", "paid")
    assert status_of(api, session_id)["orderId"] is not None


def test_a_second_press_on_pay_while_the_page_is_leaving_sends_nothing(
    page: Page, api: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """A second press after the first attempt was sent made it again: the buyer landed on
    its 409 ("A payment prompt is already out") instead of the simulator (forms.js). Each
    POST reaches the server at once, and its answer is held at the browser until the second
    press is made."""
    session_id, url = payment_link(api, auth)
    held: list[tuple[Route, APIResponse]] = []

    def hold(route: Route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        held.append((route, route.fetch(max_redirects=0)))  # the server answers now

    page.route(f"**{url}", hold)
    page.goto(url)
    page.get_by_label("M-Pesa").check()
    page.get_by_label("Phone number").fill("0911223344")
    page.get_by_label("Email (for your receipt)").fill("buyer@example.com")
    box = page.get_by_role("button", name="Pay 50.00 ETB").bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.click(x, y)  # the mouse, as a person: a locator waits for the navigation
    for _ in range(STEP_TIMEOUT_MS // 20):
        if held:
            break
        page.wait_for_timeout(20)
    assert held, "the first press sent nothing"
    page.mouse.click(x, y)
    page.wait_for_timeout(500)  # room for a second POST, were it sent
    for route, answer in held:
        with contextlib.suppress(PlaywrightError):  # a request the browser gave up for another
            route.fulfill(response=answer)
    sent = [e["status"] for e in svc_sandbox.journal.recent(50) if e["path"] == url]
    assert sent == [303, 200], sent  # newest first: one attempt after the page
    expect(page).to_have_url(f"{svc_sandbox.settings.root('simulate_url')}/{session_id}")


def test_a_buyer_typing_a_retry_keeps_it_when_the_prompt_is_decided(
    page: Page, api: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """pay-status.js reloaded the page once the prompt was decided, wiping a number being
    typed in the retry form; now it says so and links the result."""
    session_id, url = payment_link(api, auth)
    page.goto(url)
    fill_and_pay(page, "0911223344")
    page.goto(url)
    expect(page.locator("#state")).to_have_attribute("data-state", "in-flight")
    page.get_by_text("Entered the wrong number? Try again").click()
    page.get_by_label("Phone number").fill("0922")
    approved = api.post(f"/_sandbox/checkout/sessions/{session_id}/approve", json={})
    assert approved.status_code == 200
    expect(page.locator("#decided")).to_have_text("The payment prompt was answered. See the result")
    expect(page.get_by_label("Phone number")).to_have_value("0922")  # not reloaded
    page.get_by_role("link", name="See the result").click()
    expect(page.locator("#state")).to_have_attribute("data-state", "paid")


def test_any_other_number_opens_the_simulator_where_the_buyer_approves(
    page: Page, api: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """§8: on a payment-link page any number but the two triggers opens the simulator page
    with approve and fail buttons."""
    session_id, url = payment_link(api, auth)
    page.goto(url)
    fill_and_pay(page, "0911223344")
    expect(page).to_have_url(f"{svc_sandbox.settings.root('simulate_url')}/{session_id}")
    expect(page.locator("#state")).to_have_attribute("data-state", "in-flight")
    expect(page.get_by_role("button", name="payment_failed")).to_be_visible()
    page.get_by_role("button", name="Approve payment").click()
    expect(page.locator("#state")).to_have_attribute("data-state", "paid")
    expect(page.get_by_role("button", name="Approve payment")).to_have_count(0)  # settled
    page.goto(url)
    expect(page.locator("#state")).to_have_attribute("data-state", "paid")
    assert status_of(api, session_id)["status"] == "completed"


def test_the_simulator_fails_a_push_with_a_chosen_code(
    page: Page, api: FlaskClient, auth: dict[str, str]
) -> None:
    session_id = push_checkout(api, auth)["sessionId"]
    page.goto(f"/simulate/{session_id}")
    page.get_by_role("button", name="payment_canceled").click()
    expect(page.locator("#state")).to_have_attribute("data-state", "expired")
    expect(page.locator("#state")).to_contain_text(FAILURE_MESSAGES["payment_canceled"])
    assert status_of(api, session_id)["failure"]["code"] == "payment_canceled"


def test_a_buyer_buys_from_the_product_page_paying_what_they_want_to_the_santim(
    page: Page, api: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(
        api, auth, title="Tip jar", pricingModel="pwyw", price={"minimumAmount": 1000}
    )
    page.goto(path(product_url(svc_sandbox, product["checkoutToken"])))
    expect(page.locator("#price")).to_contain_text("at least 10.00 ETB")
    page.get_by_label("Amount (ETB)").fill("12.345")
    page.get_by_label("Email").fill("buyer@example.com")
    page.get_by_role("button", name="Buy").click()
    # The error sits next to its field and what was typed stays.
    expect(page.locator("#amount-error")).to_have_text("amount must have at most two decimals")
    expect(page.get_by_label("Amount (ETB)")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Amount (ETB)")).to_have_value("12.345")
    expect(page.get_by_label("Email")).to_have_value("buyer@example.com")

    page.get_by_label("Amount (ETB)").fill("12.34")
    page.get_by_role("button", name="Buy").click()
    # A sandbox checkout without a token goes to the simulator, santim exact.
    expect(page.locator("#amount")).to_have_text("12.34 ETB")
    page.get_by_role("button", name="Approve payment").click()
    expect(page.locator("#state")).to_have_attribute("data-state", "paid")


def test_a_buyer_gets_a_product_priced_0_as_a_free_one(
    page: Page, api: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """A fixed price of 0 has nothing to pay: the page reads as a free product's (no phone,
    no provider page) and gives the order at once."""
    product = published(api, auth, title="Sample chapter", price={"amount": 0})
    page.goto(path(product_url(svc_sandbox, product["checkoutToken"])))
    expect(page.locator("#price")).to_have_text("Free")
    expect(page.get_by_label("telebirr phone number")).to_have_count(0)
    expect(page.locator("body")).not_to_contain_text("payment provider")
    page.get_by_label("Email").fill("buyer@example.com")
    page.get_by_role("button", name="Get it").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Thank you")
    expect(page.locator("#state")).to_have_attribute("data-state", "paid")


def test_a_production_buyer_confirms_on_the_provider_page(
    page: Page, api: FlaskClient, live_auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(api, live_auth, title="Concert ticket")
    page.goto(path(product_url(svc_sandbox, product["checkoutToken"])))
    expect(page.locator("#price")).to_have_text("50.00 ETB")
    page.get_by_label("Email").fill("buyer@example.com")
    page.get_by_role("button", name="Buy").click()
    expect(page.locator("body")).to_contain_text("Emulated payment provider page")
    page.get_by_label("Phone number").fill("12")
    page.get_by_role("button", name="Confirm payment of 50.00 ETB").click()
    expect(page.locator("#phone-error")).to_contain_text("phone")
    expect(page.get_by_label("Phone number")).to_have_value("12")
    page.get_by_label("Phone number").fill("0900000001")
    page.get_by_role("button", name="Confirm payment of 50.00 ETB").click()
    expect(page.locator("#state")).to_have_attribute("data-state", "paid")


def test_the_provider_page_waits_for_its_prompt_without_reloading_then_shows_the_outcome(
    page: Page, api: FlaskClient, live_auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """A production push nobody answers yet: the page polls, and stays as it is while the
    prompt is out (it reloaded itself every poll: the poll of a session that is no payment
    link has no ``attempt``), then shows the outcome once the prompt is decided."""
    held = {"productionPushOutcome": "none"}
    assert api.patch("/_sandbox/payments/provider", json=held).status_code == 200
    product = published(api, live_auth, title="Concert ticket")
    page.goto(path(product_url(svc_sandbox, product["checkoutToken"])))
    page.get_by_label("Email").fill("buyer@example.com")
    page.get_by_role("button", name="Buy").click()
    page.get_by_label("Phone number").fill("0911223344")
    page.get_by_role("button", name="Confirm payment of 50.00 ETB").click()
    expect(page.locator("#state")).to_have_attribute("data-state", "in-flight")
    session_id = page.url.rsplit("/", 1)[1]
    page.evaluate("window.loadedOnce = true")  # gone if the page loads again
    for _ in range(3):  # three polls (one every 1.5 s), each asking the page too
        with page.expect_response(lambda r: r.url.endswith(f"/provider/{session_id}")):
            pass
    assert page.evaluate("window.loadedOnce === true")

    approved = api.post(f"/_sandbox/checkout/sessions/{session_id}/approve", json={})
    assert approved.status_code == 200, approved.json
    expect(page.locator("#state")).to_have_attribute("data-state", "paid")


def product_url(sandbox: Sandbox, token: str) -> str:
    return f"{sandbox.settings.root('product_page_url')}/{token}"


@pytest.mark.parametrize(
    ("phone", "message"),
    [
        ("", "phone"),
        ("12", "phone must be a phone number"),
        ("0" * 200, "phone"),
    ],
)
def test_a_bad_phone_is_shown_next_to_the_field_and_kept(
    page: Page, api: FlaskClient, auth: dict[str, str], phone: str, message: str
) -> None:
    _, url = payment_link(api, auth)
    page.goto(url)
    fill_and_pay(page, phone)
    expect(page.locator("#phone-error")).to_contain_text(message)
    expect(page.get_by_label("Phone number")).to_have_value(phone[:20])  # maxlength 20
    expect(page.get_by_label("Email (for your receipt)")).to_have_value("buyer@example.com")
    # WCAG 3.3.1: the person lands on the field at fault, and the title says so first (focus
    # was on the page, the first Tab on "Skip to content").
    expect(page.get_by_label("Phone number")).to_be_focused()
    expect(page).to_have_title("Error: Pay 50.00 ETB — \u2068Concert ticket\u2069 · svc-sandbox")


def test_a_refusal_of_no_one_field_takes_the_focus_to_its_message(
    page: Page, api: FlaskClient, auth: dict[str, str]
) -> None:
    _, url = payment_link(api, auth)
    page.goto(url)
    fill_and_pay(page, "0911223344")  # a prompt waits on the simulator
    page.goto(url)
    page.get_by_text("Entered the wrong number? Try again").click()
    fill_and_pay(page, "0900000001", email=None)
    expect(page.locator("#error")).to_contain_text("A payment prompt is already out")
    expect(page.locator("#error")).to_be_focused()


@pytest.mark.parametrize("url", ["/pay/cs_" + "0" * 24, "/simulate/nothing", "/p/p_missing"])
def test_unknown_ids_show_a_404_page(page: Page, url: str) -> None:
    response = page.goto(url)
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", level=1)).to_have_text("Page not found")
    expect(page.locator("body")).not_to_contain_text("Traceback")


def test_the_keyboard_reaches_the_payment_form_in_reading_order(
    phone_page: Page, api: FlaskClient, auth: dict[str, str]
) -> None:
    _, url = payment_link(api, auth)
    phone_page.goto(url)
    order = []
    for _ in range(6):
        phone_page.keyboard.press("Tab")
        order.append(
            phone_page.evaluate(
                "document.activeElement.name || document.activeElement.textContent.trim()"
            )
        )
    # The skip link, one stop for the gateway radios, then each field, then the button.
    assert order == ["Skip to content", "gateway", "phone", "email", "name", "Pay 50.00 ETB"]
    phone_page.keyboard.press("Enter")  # the form can be sent from the keyboard
    expect(phone_page.locator("#phone-error")).to_contain_text("phone")


def test_a_stale_form_says_so_and_changes_nothing(
    page: Page, api: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    _, url = payment_link(api, auth)
    page.goto(url)
    page.locator("input[name=csrf]").evaluate("input => input.value = 'from-another-page'")
    before = svc_sandbox.export()
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        fill_and_pay(page, "0900000001")
    assert answer.value.status == 403
    expect(page.locator("#error")).to_contain_text("This form is out of date")
    assert svc_sandbox.export() == before


def test_a_server_on_port_0_opened_through_localhost_takes_the_payment_and_polls(
    browser: Browser,
) -> None:
    """`serve --port 0` (the app built before the port is picked), opened through another
    name of the server: the form posts to the roots' absolute URL (CSP form-action names the
    picked port) and the waiting page's poll reaches the session (a same-origin path)."""
    sandbox = Sandbox(clock_mode="frozen", seed=1, port=0, rate_limits=False)
    app = create_app(sandbox)
    server = ServerThread(app, sandbox.settings).start()
    api = app.test_client()
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    context = browser.new_context(base_url=f"http://localhost:{server.port}")
    context.set_default_timeout(STEP_TIMEOUT_MS)
    blocked: list[str] = []
    try:
        page = context.new_page()
        page.on("console", lambda m: blocked.append(m.text) if m.type == "error" else None)
        session_id, url = payment_link(api, auth)
        page.goto(url)
        fill_and_pay(page, "0911223344")  # waits: the simulator page
        expect(page).to_have_url(f"{sandbox.settings.root('simulate_url')}/{session_id}")
        page.goto(url)  # back through localhost, the prompt still out
        expect(page.locator("#state")).to_have_attribute("data-state", "in-flight")
        sandbox.advance(timedelta(seconds=150))  # unanswered: the poll sees the failure
        expect(page.locator("#state")).to_have_attribute("data-state", "failed")
        fill_and_pay(page, "0900000001", email=None)
        expect(page.locator("#state")).to_have_attribute("data-state", "paid")
        assert status_of(api, session_id)["status"] == "completed"
        assert not [m for m in blocked if "Content Security Policy" in m or "CORS" in m]
    finally:
        context.close()
        server.close()


def test_back_to_a_refused_form_after_paying_shows_the_session_paid(
    page: Page, api: FlaskClient, auth: dict[str, str]
) -> None:
    """The history entry of a refused form is a POST's answer, which the browser keeps: Back
    after paying showed its open Pay form and its old alert for a paid session."""
    session_id, url = payment_link(api, auth)
    page.goto(url)
    page.get_by_role("button", name="Pay 50.00 ETB").click()  # nothing filled in: refused
    expect(page.locator("#error")).to_be_visible()
    fill_and_pay(page, "0900000001")
    expect(page.locator("#state")).to_have_attribute("data-state", "paid")
    page.go_back()
    expect(page.locator("#state")).to_have_attribute("data-state", "paid")
    expect(page.locator("#error")).to_have_count(0)
    expect(page.get_by_role("button", name="Pay 50.00 ETB")).to_have_count(0)
    assert status_of(api, session_id)["status"] == "completed"


def test_back_from_the_simulator_with_the_back_forward_cache_shows_the_session_paid(
    cached_browser: Browser, svc_server: RunningServer, api: FlaskClient, auth: dict[str, str]
) -> None:
    """A person's Chrome keeps pages in its back/forward cache: the payment page came back
    from it with the Pay form of a session the simulator had paid."""
    tab = open_page(cached_browser, svc_server, DESKTOP)
    try:
        _, url = payment_link(api, auth)
        tab.goto(url)
        fill_and_pay(tab, "0911223344")  # any other number: the simulator
        tab.get_by_role("button", name="Approve payment").click()
        expect(tab.locator("#state")).to_have_attribute("data-state", "paid")
        tab.go_back()  # the simulator before approving
        tab.go_back()  # the payment page
        expect(tab).to_have_url(svc_server.url + url)
        expect(tab.locator("#state")).to_have_attribute("data-state", "paid")
        expect(tab.get_by_role("button", name="Pay 50.00 ETB")).to_have_count(0)
    finally:
        tab.context.close()
