"""The dashboard's action buttons as rendered: every destructive one (class ``danger``) asks
first (``data-confirm``, read by dashboard.js), and a button inside a live part sends its
message to a status area outside that part (the refresh re-renders the part)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from flask.testing import FlaskClient

from tests.commerce.checkout_helpers import checkout, published
from tests.commerce.earnings import earn
from tests.commerce.payout_helpers import withdraw

UI = "/_sandbox/ui"
FORM = re.compile(r"<form class=\"api[^>]*>.*?</form>", re.S)


def pages_with_every_action(
    client: FlaskClient, auth: dict[str, str], live_auth: dict[str, str]
) -> list[str]:
    """The HTML of each section with an action button, with something for each to act on."""
    product = published(client, auth, title="Workshop")
    session_id = checkout(client, auth, productId=product["_id"])["sessionId"]
    earn(client, live_auth, 2_000_000)
    withdraw(client, live_auth, 1_500_001)  # in review: Approve and Reject
    assert client.post("/_sandbox/events/trigger", json={"type": "order.completed"}).status_code
    paths = ["", "/payouts", "/webhooks", "/clock", "/wallets", "/conformance", "/identity"]
    paths.append(f"/checkouts/{session_id}")
    pages = []
    for path in paths:
        response = client.get(UI + path)
        assert response.status_code == 200
        pages.append(response.get_data(as_text=True))
    return pages


def test_every_destructive_button_asks_first(
    svc_http: FlaskClient, auth: dict[str, str], live_auth: dict[str, str]
) -> None:
    labels = []
    for html in pages_with_every_action(svc_http, auth, live_auth):
        for form in FORM.findall(html):
            if 'class="danger' in form:
                assert 'data-confirm="' in form, form
                labels.append(re.search(r">([^<>]+)</button>", form).group(1))  # type: ignore[union-attr]
    clears = {f"Clear the {name} report" for name in ("commerce", "identity", "wallet")}
    assert set(labels) == {
        "Revoke",
        "Reset the sandbox",
        "Reject",
        "Fail",
        "Rotate secret",
        *clears,
    }


class Actions(HTMLParser):
    """Each action form (its attributes, whether it sits inside a [data-live] part, whether it
    holds an <output>) and the ids of the status areas outside every live part."""

    def __init__(self) -> None:
        super().__init__()
        self.divs: list[bool] = []  # for each open <div>: does it start a live part
        self.forms: list[dict[str, str | None]] = []
        self.areas: set[str] = set()
        self.inside: list[str] = []  # the actions with an <output>

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        live = any(self.divs)
        if tag == "div":
            self.divs.append("data-live" in attributes)
            if attributes.get("role") == "status" and not live:
                self.areas.add(attributes["id"] or "")
        elif tag == "form" and "api" in (attributes.get("class") or ""):
            self.forms.append({**attributes, "live": "yes" if live else None})
        elif tag == "output" and self.forms and self.forms[-1]["live"]:
            self.inside.append(self.forms[-1]["data-url"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "div":
            self.divs.pop()


def test_a_button_inside_a_live_part_reports_outside_it(
    svc_http: FlaskClient, auth: dict[str, str], live_auth: dict[str, str]
) -> None:
    in_live = 0
    for html in pages_with_every_action(svc_http, auth, live_auth):
        actions = Actions()
        actions.feed(html)
        assert actions.inside == []  # an <output> there would be wiped by the refresh
        for form in actions.forms:
            if form["live"]:
                in_live += 1
                assert form.get("data-status") in actions.areas, form
    assert in_live >= 8  # Revoke ×2, Create token ×2, Approve, Reject, Approve, Fail, Redeliver
