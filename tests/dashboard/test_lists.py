"""The dashboard's lists: a prompt out on every kind of session, lists cut to their newest
rows say so, the empty products list names its real address, and every page has its time."""

from __future__ import annotations

import re

from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.dashboard.views import ROWS
from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import checkout, push_checkout
from tests.helpers import token_of

PROMPT_OUT = '<span class="badge pending">prompt out</span>'


def status_cell(html: str, session_id: str) -> str:
    found = re.search(rf'<td data-session-status="{session_id}">(.*?)</td>', html)
    assert found is not None, session_id
    return found.group(1)


def test_a_direct_push_waiting_for_its_prompt_shows_prompt_out(
    svc_http: FlaskClient, live_auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """The poll's attempt is for payment links only (spec §2): the badge read it, and a
    production push (or the simulator's prompt) never showed it."""
    held = {"productionPushOutcome": "none"}
    assert svc_http.patch("/_sandbox/payments/provider", json=held).status_code == 200
    session_id = push_checkout(svc_http, live_auth)["sessionId"]
    html = svc_http.get("/_sandbox/ui/checkouts").get_data(as_text=True)
    assert PROMPT_OUT in status_cell(html, session_id)
    approved = svc_http.post(f"/_sandbox/checkout/sessions/{session_id}/approve", json={})
    assert approved.status_code == 200
    html = svc_http.get("/_sandbox/ui/checkouts").get_data(as_text=True)
    assert PROMPT_OUT not in status_cell(html, session_id)


def test_a_list_cut_to_its_newest_rows_says_how_many_of_how_many() -> None:
    sandbox = Sandbox(clock_mode="frozen", rate_limits=False)  # ROWS + 1 checkouts at once
    http = create_app(sandbox).test_client()
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    for _ in range(ROWS + 1):
        checkout(http, auth, amount=500, description="Tea")
    html = http.get("/_sandbox/ui/checkouts").get_data(as_text=True)
    assert f"Showing the newest {ROWS} of {ROWS + 1}: every one through" in html
    assert html.count("data-session-status=") == ROWS
    assert "Showing the newest" not in http.get("/_sandbox/ui/orders").get_data(as_text=True)


def test_a_cut_list_of_products_or_orders_names_the_real_address_of_the_api() -> None:
    """It said "every one through GET {base_url}/orders", the placeholder as it stood."""
    sandbox = Sandbox(clock_mode="frozen", rate_limits=False)
    http = create_app(sandbox).test_client()
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    for n in range(ROWS + 1):
        made = http.post(
            "/api/products",
            json={"title": f"Gift {n}", "pricingModel": "free", "status": "published"},
            headers=auth,
        )
        assert made.status_code in (200, 201), made.json
        buyer = {"email": f"buyer{n}@example.com"}
        checkout(http, auth, productId=made.json["product"]["_id"], customer=buyer)  # free order
    base = sandbox.settings.root("base_url")
    for name in ("products", "orders"):
        html = http.get(f"/_sandbox/ui/{name}").get_data(as_text=True)
        assert f"every one through GET {base}/{name} (per organization)." in html, name
        assert "{base_url}" not in html


def test_the_empty_products_list_names_the_real_address(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    html = svc_http.get("/_sandbox/ui/products").get_data(as_text=True)
    url = svc_sandbox.settings.root("base_url") + "/products"
    assert f"No products yet. Create one with <code>POST {url}</code>." in html
    assert "{base_url}" not in html


def test_the_session_page_shows_the_sandbox_time_as_every_page_does(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    session_id = checkout(svc_http, auth, amount=500, description="Tea")["sessionId"]
    html = svc_http.get(f"/_sandbox/ui/checkouts/{session_id}").get_data(as_text=True)
    assert '<span data-live id="footer-now">2026-01-01T00:00:00.000Z</span>' in html


def test_an_order_of_a_custom_amount_checkout_shows_its_description(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """Spec §7: the description "replaces a product title on the ... dashboard, orders"; the
    orders page showed the placeholder product's title, "Custom payment"."""
    session_id = checkout(svc_http, auth, amount=500, description="Consulting hour")["sessionId"]
    approved = svc_http.post(f"/_sandbox/checkout/sessions/{session_id}/approve", json={})
    assert approved.status_code == 200
    html = svc_http.get("/_sandbox/ui/orders").get_data(as_text=True)
    assert '<td class="free-text">Consulting hour</td>' in html
    assert "Custom payment" not in html


def test_the_event_log_cut_to_its_newest_rows_says_how_many_of_how_many(
    svc_http: FlaskClient,
) -> None:
    """docs/dashboard.md: every list cut to its newest rows says so (the event log did not)."""
    for _ in range(ROWS + 2):
        made = svc_http.post("/_sandbox/events/trigger", json={"type": "order.completed"})
        assert made.status_code == 201
    html = svc_http.get("/_sandbox/ui/webhooks").get_data(as_text=True)
    assert (
        f'<p class="muted" id="events-shown-of">Showing the newest {ROWS} of {ROWS + 2}: '
        "every one through GET /_sandbox/events.</p>"
    ) in html
    assert "deliveries-shown-of" not in html  # no endpoint: no delivery at all
