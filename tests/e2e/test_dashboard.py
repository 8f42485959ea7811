"""A person at the dashboard (/_sandbox/ui) in a real browser: moving the clock past an
expiry, approving a withdrawal in review, redelivering a failed webhook, watching a page
refresh by itself, and the dashboard's own errors and 404 page."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from flask.testing import FlaskClient
from playwright.sync_api import Browser, Dialog, Locator, Page, Route, expect

from svc_sandbox.identity.apps import secret_hash
from svc_sandbox.pages.views import money
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import checkout, published, status_of
from tests.commerce.earnings import earn
from tests.commerce.payout_helpers import withdraw
from tests.e2e.conftest import DESKTOP, LINES_OF, open_page, registered_app
from tests.wallet.helpers import (
    WALLET,
    headers,
    owner_key,
    send_body,
    token_in_process,
    user_id,
)
from tests.webhooks.receiver import Receiver, running_receiver

UI = "/_sandbox/ui"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver(200) as running:
        yield running


def test_advancing_the_clock_past_an_expiry_expires_the_session_live(
    page: Page, browser: Browser, svc_server: RunningServer, api: FlaskClient, auth: dict[str, str]
) -> None:
    product = published(api, auth, title="Workshop")
    session_id = checkout(api, auth, productId=product["_id"])["sessionId"]
    watcher = open_page(browser, svc_server, DESKTOP)  # a second tab, left on the list
    watcher.goto(f"{UI}/checkouts")
    expect(watcher.locator(f"[data-session-status='{session_id}']")).to_contain_text("open")

    page.goto(f"{UI}/clock")
    before = page.locator("#clock-now").inner_text()
    page.get_by_role("button", name="+30 min").click()
    expect(page.locator("#ran")).to_contain_text("checkout.expire")
    expect(page.locator("#clock-now")).not_to_have_text(before)

    # The other tab refreshes its live parts by polling: no reload needed.
    expect(watcher.locator(f"[data-session-status='{session_id}']")).to_contain_text("expired")
    watcher.context.close()
    assert status_of(api, session_id)["status"] == "expired"


def test_a_session_page_says_it_is_gone_after_a_reset_and_turns_its_buttons_off(
    page: Page, api: FlaskClient, auth: dict[str, str]
) -> None:
    """The page polls its own address: once that answers 404 (a reset, another state
    imported) it says so at its top and its Approve and Fail no longer act (it kept showing
    "status open" with working-looking buttons)."""
    session_id = checkout(api, auth, amount=5000, description="Donation")["sessionId"]
    page.goto(f"{UI}/checkouts/{session_id}")
    expect(page.locator("#session")).to_contain_text("open")
    expect(page.locator("#page-stale")).to_have_count(0)
    assert api.post("/_sandbox/reset", json={}).status_code == 200
    expect(page.locator("#page-stale")).to_contain_text("This page is gone")
    expect(page.get_by_role("alert")).to_contain_text("answers 404")
    expect(page.get_by_role("button", name="Approve")).to_be_disabled()
    expect(page.get_by_role("button", name="Fail")).to_be_disabled()


def test_a_refused_filter_page_is_not_called_out_of_date(page: Page) -> None:
    """It polled its own address, met its own 400 and said the page may be out of date."""
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url) if "/ui/requests" in r.url else None)
    page.goto(f"{UI}/requests?status=abc")
    expect(page.locator("#filter-error")).to_be_visible()
    page.wait_for_timeout(2500)  # past one refresh period (dashboard.js REFRESH_MS)
    expect(page.locator("#page-stale")).to_have_count(0)
    assert len(requests) == 1  # the page itself, never polled


def test_a_malformed_custom_duration_is_shown_next_to_the_field_and_kept(
    page: Page, svc_sandbox: Sandbox
) -> None:
    before = svc_sandbox.export()
    page.goto(f"{UI}/clock")
    page.get_by_label("Custom duration").fill("soon")
    page.get_by_role("button", name="Advance", exact=True).click()
    expect(page.locator("#duration-error")).to_contain_text("duration")
    expect(page.get_by_label("Custom duration")).to_have_value("soon")
    expect(page.get_by_label("Custom duration")).to_have_attribute("aria-invalid", "true")
    assert svc_sandbox.export() == before  # the refused request changed nothing

    # A bare number is text from a form field: the hint and the refusal both ask for a unit.
    expect(page.locator("#duration-hint")).to_contain_text("A number with its unit")
    page.get_by_label("Custom duration").fill("90")
    page.get_by_role("button", name="Advance", exact=True).click()
    expect(page.locator("#duration-error")).to_contain_text("such as '90s' for seconds")
    assert svc_sandbox.export() == before

    page.get_by_label("Custom duration").fill("1h30m")
    page.get_by_role("button", name="Advance", exact=True).click()
    expect(page.locator("#clock-now")).to_have_text("2026-01-01T01:30:00.000Z")
    expect(page.locator("#duration-error")).to_have_count(0)


def test_approving_a_withdrawal_in_review(
    page: Page, api: FlaskClient, live_auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    earn(api, live_auth, 2_000_000)
    withdrawal = withdraw(api, live_auth, 1_500_001)  # above 10,000.00 ETB: manual review
    assert withdrawal["status"] == "reviewing"
    page.goto(f"{UI}/payouts")
    row = page.locator(f"#w-{withdrawal['_id']}")
    expect(row).to_contain_text("15,000.01 ETB")  # santim exact
    expect(row).to_contain_text("reviewing")
    page.locator(f"#approve-{withdrawal['_id']}").click()
    expect(row).not_to_contain_text("reviewing")
    expect(page.locator(f"#approve-{withdrawal['_id']}")).to_have_count(0)
    assert svc_sandbox.payouts.find(withdrawal["_id"]).status != "reviewing"


def test_redelivering_a_failed_webhook(
    page: Page, api: FlaskClient, receiver: Receiver, svc_sandbox: Sandbox
) -> None:
    assert api.post("/_sandbox/webhooks/endpoints", json={"url": receiver.url}).status_code == 201
    assert api.post("/_sandbox/webhooks/faults/receiver", json={"count": 1}).status_code == 200
    event = api.post("/_sandbox/events/trigger", json={"type": "order.completed"}).json
    assert event is not None
    event_id = event["event"]["id"]
    assert (
        api.post("/_sandbox/webhooks/flush", json={}).status_code == 200
    )  # the first attempt fails
    page.goto(f"{UI}/webhooks")
    expect(page.locator("#attempts")).to_contain_text("failed")
    page.locator(f"#redeliver-{event_id}").click()
    expect(page.locator("#attempts")).to_contain_text("succeeded")
    expect(page.locator("#deliveries")).to_contain_text("redelivery of")
    assert len(receiver.wait_for(1)) == 1  # the fault failed the first without sending it
    attempts = svc_sandbox.deliveries.query_attempts({"eventId": event_id})
    assert [a.succeeded for a in attempts] == [False, True]


def test_an_action_message_outlives_the_refresh_of_the_part_it_acted_on(
    page: Page, api: FlaskClient, auth: dict[str, str]
) -> None:
    """The message goes to a status region outside the live part: the refresh that removes the
    button (the session is paid now) leaves the message, and focus goes to the page's heading
    rather than to nothing (WCAG 2.4.3, 4.1.3)."""
    product = published(api, auth, title="Paid meanwhile")
    session_id = checkout(api, auth, productId=product["_id"])["sessionId"]
    page.goto(f"{UI}/checkouts/{session_id}")
    approved = api.post(f"/_sandbox/checkout/sessions/{session_id}/approve", json={})
    assert approved.status_code == 200  # in another tab, or by a test
    approve = page.get_by_role("button", name="Approve")
    approve.click()
    message = page.get_by_role("status").filter(has_text="This checkout is already paid")
    expect(message).to_be_visible()
    expect(approve).to_have_count(0)  # the live part was refreshed: paid, no buttons
    expect(message).to_be_visible()
    assert message.evaluate("node => node.closest('[data-live]') === null")
    expect(page.get_by_role("heading", level=1)).to_be_focused()


def test_done_stays_after_the_refresh_until_the_next_action(
    page: Page, api: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(api, live_auth, 4_000_000)
    first = withdraw(api, live_auth, 1_500_001)["_id"]  # both in review
    second = withdraw(api, live_auth, 1_500_002)["_id"]
    page.goto(f"{UI}/payouts")
    page.locator(f"#approve-{first}").click()
    expect(page.locator(f"#approve-{first}")).to_have_count(0)  # refreshed
    page.wait_for_timeout(2_500)  # and polled again
    done = page.get_by_role("status").filter(has_text="Done.")
    expect(done).to_have_text(f"\u2068Approve {first}\u2069: Done.")  # what it was about
    page.locator(f"#approve-{second}").click()
    expect(done).to_have_text(f"\u2068Approve {second}\u2069: Done.")  # the next action's


def test_keyboard_focus_stays_on_its_button_when_the_live_part_changes(
    page: Page, api: FlaskClient, svc_sandbox: Sandbox
) -> None:
    org = next(o for o in svc_sandbox.orgs.all() if o.environment.value == "sandbox")
    page.goto(UI)
    row = page.locator("#orgs tr", has_text="Sandbox Org")
    row.get_by_role("button", name="Create token").focus()
    assert api.post(f"/_sandbox/orgs/{org.id}/tokens", json={}).status_code == 201
    expect(row.get_by_role("button", name="Revoke")).to_have_count(2)  # refreshed
    expect(row.get_by_role("button", name="Create token")).to_be_focused()

    # The focused control gone (its token revoked elsewhere): focus goes to the heading.
    row.get_by_role("button", name="Revoke").last.focus()
    token = svc_sandbox.orgs.tokens_of(org.id)[-1].token
    assert api.delete(f"/_sandbox/tokens/{token}", json={}).status_code == 200
    expect(row.get_by_role("button", name="Revoke")).to_have_count(1)
    expect(page.get_by_role("heading", name="Organizations and tokens")).to_be_focused()


#: A destructive button: set up what it acts on, and say (page path, the button, whether its
#: action was done) from the test client and the Sandbox.
Destructive = Callable[
    [FlaskClient, dict[str, str], dict[str, str], Sandbox],
    tuple[str, Callable[[Page], Locator], Callable[[], bool]],
]


def reset_case(
    api: FlaskClient, auth: dict[str, str], live_auth: dict[str, str], sb: Sandbox
) -> tuple[str, Callable[[Page], Locator], Callable[[], bool]]:
    product = published(api, auth, title="Keep me")["_id"]
    return (
        UI,
        lambda page: page.get_by_role("button", name="Reset the sandbox"),
        lambda: product not in sb.products.products,
    )


def revoke_case(
    api: FlaskClient, auth: dict[str, str], live_auth: dict[str, str], sb: Sandbox
) -> tuple[str, Callable[[Page], Locator], Callable[[], bool]]:
    token = auth["Authorization"].removeprefix("Bearer ")
    return (
        UI,
        lambda page: page.locator(f"form[data-url='/_sandbox/tokens/{token}'] button"),
        lambda: api.get("/api/products", headers=auth).status_code == 401,
    )


def reject_case(
    api: FlaskClient, auth: dict[str, str], live_auth: dict[str, str], sb: Sandbox
) -> tuple[str, Callable[[Page], Locator], Callable[[], bool]]:
    earn(api, live_auth, 2_000_000)
    withdrawal = withdraw(api, live_auth, 1_500_001)["_id"]  # in review
    return (
        f"{UI}/payouts",
        lambda page: page.locator(f"#reject-{withdrawal}"),
        lambda: sb.payouts.find(withdrawal).status == "rejected",
    )


def fail_case(
    api: FlaskClient, auth: dict[str, str], live_auth: dict[str, str], sb: Sandbox
) -> tuple[str, Callable[[Page], Locator], Callable[[], bool]]:
    product = published(api, auth, title="Workshop")
    session_id = checkout(api, auth, productId=product["_id"])["sessionId"]
    return (
        f"{UI}/checkouts/{session_id}",
        lambda page: page.get_by_role("button", name="Fail"),
        lambda: bool(sb.checkout.describe(session_id)["attempts"]),
    )


def clear_report_case(
    api: FlaskClient, auth: dict[str, str], live_auth: dict[str, str], sb: Sandbox
) -> tuple[str, Callable[[Page], Locator], Callable[[], bool]]:
    assert api.get("/api/products", headers=auth).status_code == 200  # the report counts it
    return (
        f"{UI}/conformance",
        lambda page: page.get_by_role("button", name="Clear the commerce report"),
        lambda: sb.conformance.report()["summary"]["requests"] == 0,
    )


def rotate_secret_case(
    api: FlaskClient, auth: dict[str, str], live_auth: dict[str, str], sb: Sandbox
) -> tuple[str, Callable[[Page], Locator], Callable[[], bool]]:
    app = next(a for a in sb.oauth_apps.all() if a.client_type == "confidential")
    secret = app.secret_sha256
    return (
        f"{UI}/identity",
        lambda page: page.locator("#apps tr", has_text=app.client_id).get_by_role(
            "button", name="Rotate secret"
        ),
        lambda: sb.oauth_apps.get(app.client_id).secret_sha256 != secret,
    )


@pytest.mark.parametrize(
    "case",
    [reset_case, revoke_case, reject_case, fail_case, clear_report_case, rotate_secret_case],
    ids=["reset", "revoke", "reject", "fail", "clear-report", "rotate-secret"],
)
def test_a_destructive_button_asks_first_and_sends_nothing_when_cancelled(
    page: Page,
    api: FlaskClient,
    auth: dict[str, str],
    live_auth: dict[str, str],
    svc_sandbox: Sandbox,
    case: Destructive,
) -> None:
    """WCAG 3.3.4: reset, revoke, reject, fail, clear and rotate act only once the person
    confirms."""
    path, button, done = case(api, auth, live_auth, svc_sandbox)
    before = svc_sandbox.export()
    asked: list[str] = []

    def answer(accept: bool) -> Callable[[Dialog], None]:
        def on_dialog(dialog: Dialog) -> None:
            asked.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()

        return on_dialog

    page.goto(path)
    page.once("dialog", answer(False))
    button(page).click()
    page.wait_for_timeout(500)  # what a request would take on loopback, many times over
    assert len(asked) == 1 and "?" in asked[0]
    assert svc_sandbox.export() == before and not done()

    page.once("dialog", answer(True))
    button(page).click()
    expect(page.get_by_role("status").filter(has_text="Done.")).to_be_visible()
    assert len(asked) == 2 and done()


@pytest.mark.parametrize("url", [f"{UI}/nothing", f"{UI}/checkouts/{'0' * 24}"])
def test_unknown_dashboard_pages_are_a_404_page(page: Page, url: str) -> None:
    response = page.goto(url)
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", level=1)).to_have_text("Not found")
    expect(page.get_by_role("navigation")).to_be_visible()


def test_adding_a_webhook_endpoint_with_a_bad_url_then_a_good_one(
    page: Page, svc_sandbox: Sandbox, receiver: Receiver
) -> None:
    before = svc_sandbox.export()
    page.goto(f"{UI}/webhooks")
    page.get_by_label("Organization").select_option(label="Production Org")
    page.get_by_label("URL").fill("ftp://example.com/hooks")
    page.get_by_role("button", name="Add endpoint").click()
    expect(page.locator("#ep-url-error")).to_contain_text("url must be an absolute http(s) URL")
    expect(page.get_by_label("URL")).to_have_value("ftp://example.com/hooks")
    assert svc_sandbox.export() == before

    page.get_by_label("URL").fill(receiver.url)
    page.get_by_role("button", name="Add endpoint").click()
    expect(page.locator("#endpoints")).to_contain_text(receiver.url)
    expect(page.locator("#endpoints")).to_contain_text("Production Org")
    expect(page.locator("#ep-url-error")).to_have_count(0)


def test_creating_and_revoking_a_token_from_the_overview(page: Page, svc_sandbox: Sandbox) -> None:
    org = next(o for o in svc_sandbox.orgs.all() if o.environment.value == "sandbox")
    page.goto(UI)
    row = page.locator("#orgs tr", has_text="Sandbox Org")
    row.get_by_role("button", name="Create token").click()
    expect(row.get_by_role("button", name="Revoke")).to_have_count(2)
    tokens = svc_sandbox.orgs.tokens_of(org.id)
    assert len(tokens) == 2
    # The label is isolated (FSI ... PDI): a typed name's direction override stays in it.
    created = f"\u2068Create token for Sandbox Org\u2069: Done. New token: {tokens[-1].token}"
    expect(page.locator("#orgs-status")).to_have_text(created)  # not only "Done."
    page.once("dialog", lambda dialog: dialog.accept())  # "Revoke the token …?"
    row.get_by_role("button", name="Revoke").last.click()
    expect(row.get_by_role("button", name="Revoke")).to_have_count(1)
    expect(row).to_contain_text("revoked")
    assert [t.revoked for t in svc_sandbox.orgs.tokens_of(org.id)] == [False, True]


def test_funding_a_wallet_from_the_dashboard_changes_its_balance(
    page: Page, api: FlaskClient, svc_sandbox: Sandbox
) -> None:
    before = api.get("/_sandbox/wallets/tigist").get_json()  # a seeded user
    page.goto(f"{UI}/wallets")
    available = page.locator("[data-available='tigist']")
    expect(available).to_have_text(money(before["availableMinor"]))

    page.get_by_label("Fund tigist (santim)").fill("12345")
    page.locator(f"#fund-{before['userId']}-note").fill("pocket money")
    page.locator(f"#fund-{before['userId']}").get_by_role("button", name="Fund").click()
    expect(available).to_have_text(money(before["availableMinor"] + 12_345))  # santim exact
    ledger = page.locator(f"#wallet-{before['userId']}-ledger")
    expect(ledger).to_contain_text("funding")
    expect(ledger).to_contain_text("pocket money")
    after = api.get("/_sandbox/wallets/tigist").get_json()
    assert after["availableMinor"] == before["availableMinor"] + 12_345
    assert after["totalMinor"] == before["totalMinor"] + 12_345


@pytest.mark.parametrize("amount", ["0", "1.5"])
def test_a_bad_funding_amount_is_shown_next_to_the_field_and_changes_nothing(
    page: Page, svc_sandbox: Sandbox, amount: str
) -> None:
    before = svc_sandbox.export()
    page.goto(f"{UI}/wallets")
    field = page.get_by_label("Fund abebe (santim)")
    field.fill(amount)
    field.locator("xpath=ancestor::form").get_by_role("button", name="Fund").click()
    expect(page.locator(".field-error").first).to_contain_text("amountMinor")
    expect(field).to_have_value(amount)
    assert svc_sandbox.export() == before


def test_a_hostile_name_and_note_show_as_text_in_the_wallets_section(
    page: Page, api: FlaskClient
) -> None:
    hostile = "<script>alert('name')</script>"  # handles are plain; a name is anything
    user = api.post("/_sandbox/users", json={"handle": "mallory", "name": hostile})
    assert user.status_code == 201
    note = '<img src=x onerror="alert(1)">'
    funding = {"amountMinor": 1, "note": note}
    funded = api.post(f"/_sandbox/wallets/{user.get_json()['id']}/fund", json=funding)
    assert funded.status_code == 200
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{UI}/wallets")
    body = page.locator("main").inner_text()
    assert hostile in body and note in body
    assert page.locator("main script, main img").count() == 0
    user_id = user.get_json()["id"]
    page.locator(f"#fund-{user_id}-amount").fill("100")
    page.locator(f"#fund-{user_id}-amount").press("Enter")
    balance = page.locator(f"#wallet-{user_id}-balance")
    expect(balance).to_contain_text(money(funded.get_json()["availableMinor"] + 100))
    assert dialogs == []


def test_a_transfer_shows_in_both_wallets_with_the_other_handle(
    page: Page, api: FlaskClient, svc_sandbox: Sandbox
) -> None:
    abebe = headers(token_in_process(api, svc_sandbox, "abebe"), owner_key(svc_sandbox))
    sent = api.post(WALLET + "/send", json=send_body("tigist", 2_501), headers=abebe)
    assert sent.status_code == 201
    transfer_id = sent.get_json()["transfer"]["id"]
    page.goto(f"{UI}/wallets")
    for handle, direction, other, available in (
        ("abebe", "sent", "tigist", 1_000_000 - 2_501),
        ("tigist", "received", "abebe", 1_000_000 + 2_501),
    ):
        wallet_id = user_id(svc_sandbox, handle)
        row = page.locator(f"#wallet-{wallet_id}-transfers tr", has_text=transfer_id)
        expect(row).to_contain_text(direction)
        expect(row).to_contain_text(other)
        expect(row).to_contain_text("25.01 ETB")
        expect(row).to_contain_text("completed")
        expect(page.locator(f"[data-available='{handle}']")).to_have_text(money(available))
        entry = "transfer_out" if direction == "sent" else "transfer_in"
        ledger = page.locator(f"#wallet-{wallet_id}-ledger tr", has_text=entry)
        expect(ledger).to_contain_text("-25.01 ETB" if direction == "sent" else "25.01 ETB")


LONG = "W" * 120  # the longest organization name, title and description the API takes
#: Every dashboard list whose rows carry an organization's name or a typed title.
LISTS = ["", "/products", "/checkouts", "/orders", "/payouts", "/webhooks", "/identity"]


@pytest.fixture
def long_names(
    api: FlaskClient, auth: dict[str, str], live_auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """Both seeded organizations named with 120 letters and no space, and a row of each
    list: a product, a paid custom-amount checkout, a withdrawal in review, an event, an
    app, a token."""
    for org in svc_sandbox.orgs.orgs.values():
        assert api.patch(f"/_sandbox/orgs/{org.id}", json={"name": LONG}).status_code == 200
    published(api, auth, title=LONG)
    checkout(api, auth, amount=500, description=LONG)
    earn(api, live_auth, 2_000_000)
    assert withdraw(api, live_auth, 1_500_001)["status"] == "reviewing"
    assert api.post("/_sandbox/events/trigger", json={"type": "order.completed"}).status_code == 201
    app = {"name": LONG, "redirectUris": ["https://app.example/cb"], "scopes": ["openid"]}
    assert api.post("/_sandbox/apps", json=app).status_code == 201
    org_id = next(iter(svc_sandbox.orgs.orgs))
    token = {"name": LONG[:80]}  # the longest token name
    assert api.post(f"/_sandbox/orgs/{org_id}/tokens", json=token).status_code == 201


@pytest.mark.usefixtures("long_names")
@pytest.mark.parametrize("section", LISTS)
def test_long_names_wrap_and_leave_every_column_and_button_on_screen(
    page: Page, section: str
) -> None:
    """A 120-letter organization name (and title, description, token name) pushed Approve,
    Reject, Redeliver, Disable and the amount columns past 2,000 px at 1280 px."""
    page.set_viewport_size(DESKTOP)  # type: ignore[arg-type]
    page.goto(f"{UI}{section}")
    wraps = page.locator(".table-wrap")
    assert wraps.count() > 0
    overflow = wraps.evaluate_all("ws => ws.map(w => w.scrollWidth - w.clientWidth)")
    assert max(overflow) <= 0, overflow
    width = page.evaluate("window.innerWidth")
    for button in page.locator("table button").all():
        box = button.bounding_box()
        assert box is not None and box["x"] + box["width"] <= width, button.inner_text()


def test_sending_what_is_due_on_a_frozen_clock_from_the_webhooks_page(
    page: Page, api: FlaskClient, receiver: Receiver
) -> None:
    """On a frozen clock an attempt waits for a call that sends (an advance, run-due,
    flush): the page had no such button. The endpoint's signing secret is shown too."""
    created = api.post("/_sandbox/webhooks/endpoints", json={"url": receiver.url}).json
    assert created is not None
    assert api.post("/_sandbox/events/trigger", json={"type": "order.completed"}).status_code == 201
    page.goto(f"{UI}/webhooks")
    expect(page.locator("#endpoints")).to_contain_text(created["secret"])
    page.get_by_role("button", name="Send what is due now").click()
    expect(page.locator("#attempts")).to_contain_text("succeeded")
    assert len(receiver.wait_for(1)) == 1


def test_running_what_is_due_from_the_clock_page(
    page: Page, api: FlaskClient, receiver: Receiver
) -> None:
    """Run-due runs the work due by now without moving the clock, and sends what is due."""
    assert api.post("/_sandbox/webhooks/endpoints", json={"url": receiver.url}).status_code == 201
    assert api.post("/_sandbox/events/trigger", json={"type": "order.completed"}).status_code == 201
    page.goto(f"{UI}/clock")
    now = page.locator("#clock-now").inner_text()
    page.get_by_role("button", name="Run what is due now").click()
    assert len(receiver.wait_for(1)) == 1
    expect(page.locator("#clock-now")).to_have_text(now)


def test_failing_a_payment_with_a_chosen_code(
    page: Page, api: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """The Fail button sent payment_failed only; the page now offers every §7 code a
    provider can give."""
    product = published(api, auth, title="Workshop")
    session_id = checkout(api, auth, productId=product["_id"])["sessionId"]
    page.goto(f"{UI}/checkouts/{session_id}")
    page.get_by_label("Failure code").select_option("payment_canceled")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Fail").click()
    expect(page.get_by_role("status").filter(has_text="Done.")).to_be_visible()
    [attempt] = svc_sandbox.checkout.describe(session_id)["attempts"]
    assert attempt["failure"]["code"] == "payment_canceled"
    expect(page.locator("#session")).to_contain_text("payment_canceled")


def test_a_requests_details_stay_open_while_the_journal_refreshes(
    page: Page, api: FlaskClient, auth: dict[str, str]
) -> None:
    """The journal is a live part (it grows by polling); a request opened to read what it sent
    stays open as new requests arrive above it."""
    assert api.post("/api/checkout", json={"amount": 0}, headers=auth).status_code == 400
    page.goto(f"{UI}/requests?method=POST")
    page.locator("#journal summary").first.click()
    opened = page.locator("#journal details").first
    expect(opened).to_have_attribute("open", "")
    expect(opened).to_contain_text('"amount": 0')
    assert api.post("/api/checkout", json={"amount": 1}, headers=auth).status_code == 400
    expect(page.locator("#journal details")).to_have_count(2)  # refreshed: the new one on top
    expect(page.locator("#journal details").nth(1)).to_have_attribute("open", "")
    expect(page.locator("#journal details").first).not_to_have_attribute("open", "")


def test_filtering_the_requests_from_the_form(page: Page, api: FlaskClient) -> None:
    assert api.get("/api/nowhere").status_code == 404
    assert api.get("/_sandbox").status_code == 200
    page.goto(f"{UI}/requests")
    page.get_by_label("Status").fill("4xx")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"status=4xx"))
    expect(page.locator("#journal tbody tr")).to_have_count(1)
    expect(page.locator("#journal")).to_contain_text("/api/nowhere")
    page.get_by_label("Status").fill("nope")
    page.get_by_role("button", name="Filter").click()
    expect(page.get_by_role("alert")).to_have_text(
        "status must be a status code such as 404, or a class such as 4xx"
    )
    expect(page.get_by_label("Status")).to_have_value("nope")


def test_adding_a_user_then_signing_in_as_them(page: Page, svc_sandbox: Sandbox) -> None:
    page.goto(f"{UI}/identity")
    page.get_by_label("Handle").fill("a b")
    page.get_by_role("button", name="Add user").click()
    expect(page.locator("#user-handle-error")).to_contain_text("handle must be 2 to 30")
    assert svc_sandbox.users.by_handle("a b") is None
    page.get_by_label("Handle").fill("selam")
    page.get_by_label("Password").fill("selam-pass")
    page.get_by_label("KYC").select_option("pending")
    page.get_by_role("button", name="Add user").click()
    expect(page.locator("#users")).to_contain_text("selam-pass")  # refreshed
    user = svc_sandbox.users.by_handle("selam")
    assert user is not None and user.kyc == "pending"


def test_disabling_an_app_and_rotating_its_secret(page: Page, svc_sandbox: Sandbox) -> None:
    app = next(a for a in svc_sandbox.oauth_apps.all() if a.client_type == "confidential")
    page.goto(f"{UI}/identity")
    row = page.locator("#apps tr", has_text=app.client_id)
    row.get_by_role("button", name="Disable").click()
    expect(row.get_by_role("button", name="Enable")).to_be_visible()
    assert svc_sandbox.oauth_apps.get(app.client_id).disabled
    row.get_by_role("button", name="Enable").click()
    expect(row.get_by_role("button", name="Disable")).to_be_visible()
    assert not svc_sandbox.oauth_apps.get(app.client_id).disabled

    page.once("dialog", lambda dialog: dialog.accept())  # "Rotate the client secret …?"
    row.get_by_role("button", name="Rotate secret").click()
    status = page.locator("#apps-status")
    rotated = f"\u2068Rotate secret {app.client_id}\u2069: Done. New client secret: "
    expect(status).to_contain_text(rotated)
    secret = status.inner_text().rsplit(": ", 1)[1]
    assert secret_hash(secret) == svc_sandbox.oauth_apps.get(app.client_id).secret_sha256


def test_a_direction_override_in_an_apps_name_stays_inside_the_confirm_question(
    page: Page, api: FlaskClient
) -> None:
    """window.confirm takes no markup: an app named with U+202E turned "? The current secret
    stops working at once." around. The name is isolated (FSI ... PDI) in the question."""
    app = registered_app(api, "\u202eppA knaB", "confidential")
    asked: list[str] = []
    page.goto(f"{UI}/identity")
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    row = page.locator("#apps tr", has_text=app["clientId"])
    row.get_by_role("button", name="Rotate secret").click()  # returns once the dialog is shut
    assert asked == [
        "Rotate the client secret of \u2068\u202eppA knaB\u2069? "
        "The current secret stops working at once."
    ]


def test_rotating_the_signing_key_from_the_dashboard(page: Page, svc_sandbox: Sandbox) -> None:
    first = svc_sandbox.signing_keys.active().kid
    page.goto(f"{UI}/identity")
    page.get_by_role("button", name="Rotate the signing key").click()
    expect(page.locator("#keys tbody tr")).to_have_count(2)
    assert svc_sandbox.signing_keys.active().kid != first


def test_a_direction_override_in_an_organizations_name_stays_in_the_message(
    page: Page, api: FlaskClient, svc_sandbox: Sandbox
) -> None:
    """The status message is built from the button's label ("Create token for <name>"): a
    name holding U+202E ran on over ": Done. New token: ...", drawn right to left."""
    org = next(o for o in svc_sandbox.orgs.all() if o.environment.value == "sandbox")
    assert api.patch(f"/_sandbox/orgs/{org.id}", json={"name": "\u202eemcA"}).status_code == 200
    page.goto(UI)
    row = page.locator("#orgs tr", has_text="emcA")
    row.get_by_role("button", name="Create token").click()
    expect(page.locator("#orgs-status")).to_contain_text("Done. New token:")
    name_right, done_left = page.evaluate(
        """() => {
            const status = document.getElementById("orgs-status");
            const walker = document.createTreeWalker(status, NodeFilter.SHOW_TEXT);
            const text = walker.nextNode();
            const at = (start, end) => {
                const range = document.createRange();
                range.setStart(text, start);
                range.setEnd(text, end);
                return range.getBoundingClientRect();
            };
            const name = text.data.indexOf("emcA");
            const done = text.data.indexOf("Done");
            return [at(name, name + 4).right, at(done, done + 4).left];
        }"""
    )
    assert done_left >= name_right - 1, (name_right, done_left)


def test_ids_in_the_lists_are_drawn_on_one_line_at_desktop_width(
    page: Page, api: FlaskClient, auth: dict[str, str]
) -> None:
    """A code that may break anywhere counts as one letter wide: the table squeezed every
    24-digit id of Checkouts and Orders onto two lines though it had room."""
    # A long title wants the width: the table gives each column its narrowest first.
    product = published(api, auth, title=" ".join(["Workshop"] * 13))
    for _ in range(3):
        checkout(api, auth, productId=product["_id"])
    page.goto(f"{UI}/checkouts")
    ids = page.locator("td code").filter(has_text=re.compile(r"^[0-9a-f]{24}$"))
    expect(ids.first).to_be_visible()
    lines = ids.evaluate_all(f"codes => codes.map({LINES_OF})")
    assert len(lines) >= 3 and set(lines) == {1}, lines


def test_a_double_click_on_a_dashboard_button_sends_it_once(
    page: Page, svc_sandbox: Sandbox
) -> None:
    """A double click on "+1 min" moved the clock 2 minutes (and Fund credited twice): the
    second press is dropped until the first is answered. The first answer is held at the
    browser until both presses were made."""
    held: list[Route] = []
    page.route("**/_sandbox/clock/advance", lambda route: held.append(route))
    page.goto(f"{UI}/clock")
    before = svc_sandbox.clock.now()
    page.locator("#advance-1m").dblclick()
    page.wait_for_timeout(500)  # room for a second request, were it sent
    assert len(held) == 1
    held[0].continue_()
    expect(page.locator("#clock-state")).to_contain_text("Mode")
    expect(page.get_by_role("status").filter(has_text="Done.")).to_be_visible()
    assert svc_sandbox.clock.now() - before == timedelta(minutes=1)
