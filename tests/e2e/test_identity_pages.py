"""A person signs in and consents in a real browser, declining one scope; the app then gets
a token for the scopes the person allowed, and only those."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from flask.testing import FlaskClient
from playwright.sync_api import Page, Route, expect

from svc_sandbox.sandbox import Sandbox
from tests.e2e.conftest import APP_REDIRECT, DESKTOP, LINES_OF, PHONE, registered_app
from tests.e2e.pages_tour import HOSTILE
from tests.e2e.test_every_page import SCREENSHOTS
from tests.identity.helpers import (
    AUTH,
    VERIFIER,
    Client,
    authorize_params,
    exchange,
    public_app,
    user_id,
    wallet_app,
)


def test_sign_in_and_consent_with_one_scope_declined(
    page: Page, api: FlaskClient, svc_sandbox: Sandbox
) -> None:
    client = public_app(svc_sandbox)

    def callback(route: Route) -> None:  # the app's redirect URI: nothing listens there
        route.fulfill(status=200, content_type="text/plain", body="app callback")

    page.route(f"{client.redirect_uri}**", callback)
    page.goto(f"{AUTH}/oauth2/authorize?{urlencode(authorize_params(client))}")

    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in")
    page.get_by_label("Handle or email").fill("abebe")
    page.get_by_label("Password").fill("wrong password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#error")).to_be_visible()
    expect(page.get_by_label("Handle or email")).to_have_value("abebe")  # kept as typed
    expect(page.get_by_label("Password")).to_be_focused()  # where the next try starts
    expect(page).to_have_title("Error: Sign in · svc-sandbox")
    page.get_by_label("Password").fill("abebe-sandbox-pass")
    page.get_by_role("button", name="Sign in").click()

    expect(page.locator("#app-name")).to_have_text("Sandbox Public App")
    if SCREENSHOTS:
        for size, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            page.set_viewport_size(viewport)  # type: ignore[arg-type]
            page.screenshot(path=f"{SCREENSHOTS}/consent-{size}.png", full_page=True)
    page.get_by_role("checkbox", name="email").uncheck()
    page.get_by_role("button", name="Allow").click()
    page.wait_for_url(f"{client.redirect_uri}**")
    # The page's own address: a URL noted by the route handler was, on a loaded machine, not
    # noted yet when the navigation had ended (CI: an empty list).
    expect(page.get_by_text("app callback")).to_be_visible()
    query = parse_qs(urlsplit(page.url).query)
    assert query["state"] == ["state-123"]
    tokens = exchange(api, client, query["code"][0])
    assert tokens.status_code == 200, tokens.json
    granted = set(tokens.json["scope"].split())
    assert "email" not in granted and {"openid", "profile"} <= granted


def test_the_seeded_wallet_apps_pages_load_whole(page: Page, svc_sandbox: Sandbox) -> None:
    """Sign-in and consent of the seeded confidential app, out of the box: nothing the
    browser fails to load or run (its logo under .test never resolved: a broken image and a
    console error on every consent page)."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    client = wallet_app(svc_sandbox)
    page.goto(f"{AUTH}/oauth2/authorize?{urlencode(authorize_params(client))}")
    page.get_by_label("Handle or email").fill("abebe")
    page.get_by_label("Password").fill("abebe-sandbox-pass")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#app-name")).to_have_text("Sandbox Wallet App")
    page.wait_for_load_state("networkidle")
    broken = page.evaluate(
        "[...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
    )
    assert (broken, errors) == ([], [])


def test_a_hostile_app_name_and_website_on_the_consent_page_are_text(
    page: Page, api: FlaskClient
) -> None:
    # < and > are refused in a URL (RFC 3986); a quote and parentheses are URI characters
    website = "https://app.example/?q='onmouseover='alert(1)"
    app = registered_app(api, HOSTILE, "public", scopes=["openid", "profile"], website=website)
    client = Client(app["clientId"], None, APP_REDIRECT)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    params = authorize_params(client, scope="openid profile")
    page.goto(f"{AUTH}/oauth2/authorize?{urlencode(params)}")
    page.get_by_label("Handle or email").fill("abebe")
    page.get_by_label("Password").fill("abebe-sandbox-pass")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#app-name")).to_have_text(HOSTILE)
    expect(page.locator("#app-website")).to_have_attribute("href", website)
    assert dialogs == []


def test_a_direction_override_in_an_apps_name_stays_inside_the_name(
    page: Page, api: FlaskClient
) -> None:
    """An unclosed U+202E in an app's name ran on over the heading's own words: the browser
    drew "ruoy ssecca ot stnaw" left of the name. Drawn now: the name, then the sentence."""
    app = registered_app(api, "\u202eppA knaB", "public")
    client = Client(app["clientId"], None, APP_REDIRECT)
    page.goto(f"{AUTH}/oauth2/authorize?{urlencode(authorize_params(client, scope='openid'))}")
    page.get_by_label("Handle or email").fill("abebe")
    page.get_by_label("Password").fill("abebe-sandbox-pass")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#app-name")).to_be_visible()
    # Where the browser draws the name and the first word after it (one line at this width).
    name_right, wants_left = page.evaluate(
        """() => {
            const name = document.getElementById("app-name");
            const after = name.nextSibling;  // the text " wants to access your account"
            const range = document.createRange();
            range.setStart(after, 1);
            range.setEnd(after, 6);
            return [name.getBoundingClientRect().right, range.getBoundingClientRect().left];
        }"""
    )
    assert wants_left >= name_right - 1, (name_right, wants_left)


def test_an_app_returning_to_an_ipv6_loopback_address_gets_its_code(
    page: Page, api: FlaskClient
) -> None:
    """RFC 8252 §7.3 loopback literal: the sign-in and consent forms named http://[::1]:8847
    in form-action, which Chromium ignores as no source, so Allow went nowhere."""
    redirect_uri = "http://[::1]:8847/callback"
    app = registered_app(api, "V6", "public", redirectUris=[redirect_uri])
    client = Client(app["clientId"], None, redirect_uri)

    def callback(route: Route) -> None:  # nothing listens there: the browser's answer
        route.fulfill(status=200, content_type="text/plain", body="app callback")

    page.route("http://[::1]:8847/**", callback)
    page.goto(f"{AUTH}/oauth2/authorize?{urlencode(authorize_params(client, scope='openid'))}")
    page.get_by_label("Handle or email").fill("abebe")
    page.get_by_label("Password").fill("abebe-sandbox-pass")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Allow").click()
    expect(page.get_by_text("app callback")).to_be_visible()
    query = parse_qs(urlsplit(page.url).query)
    assert query["state"] == ["state-123"] and query["code"]


#: A single-page app: it signs in with PKCE and reads the user, all from its own page.
SPA = """<!doctype html><title>SPA</title><pre id="out">working</pre><script>
const idp = %(issuer)r, params = new URLSearchParams(location.search);
async function main() {
  const meta = await (await fetch(idp + "/.well-known/openid-configuration")).json();
  const form = new URLSearchParams({grant_type: "authorization_code", code: params.get("code"),
    redirect_uri: %(redirect)r, client_id: %(client)r, code_verifier: %(verifier)r});
  const tokens = await (await fetch(meta.token_endpoint, {method: "POST", body: form})).json();
  const user = await fetch(meta.userinfo_endpoint,
    {headers: {Authorization: "Bearer " + tokens.access_token}});
  document.getElementById("out").textContent = JSON.stringify(await user.json());
}
main().catch(e => { document.getElementById("out").textContent = "failed: " + e; });
</script>"""


@contextmanager
def static_page() -> Iterator[tuple[str, list[bytes]]]:
    """A page server on 127.0.0.1 (another origin than the emulator's, as a dev server is):
    its origin, and the page it answers every GET with (set it before the browser asks)."""
    page: list[bytes] = [b""]

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page[0])))
            self.end_headers()
            self.wfile.write(page[0])

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", page
    finally:
        server.shutdown()
        server.server_close()


def test_a_single_page_app_signs_in_and_reads_the_user_from_its_own_page(
    page: Page, api: FlaskClient, svc_sandbox: Sandbox
) -> None:
    """An OAuth 2.1 public client in a page: discovery, the code exchange and userinfo by
    fetch from its own origin. Every one was refused (403 cross_site_request, no CORS)."""
    with static_page() as (origin, served):
        redirect_uri = f"{origin}/callback"
        scopes = ["openid", "profile"]
        app = registered_app(api, "SPA", "public", redirectUris=[redirect_uri], scopes=scopes)
        client = Client(app["clientId"], None, redirect_uri)
        served[0] = (
            SPA
            % {
                "issuer": svc_sandbox.settings.issuer,
                "redirect": client.redirect_uri,
                "client": client.client_id,
                "verifier": VERIFIER,
            }
        ).encode()
        params = authorize_params(client, scope="openid profile")
        page.goto(f"{AUTH}/oauth2/authorize?{urlencode(params)}")
        page.get_by_label("Handle or email").fill("abebe")
        page.get_by_label("Password").fill("abebe-sandbox-pass")
        page.get_by_role("button", name="Sign in").click()
        page.get_by_role("button", name="Allow").click()
        expect(page.locator("#out")).not_to_have_text("working")
        user = json.loads(page.locator("#out").inner_text())
        assert (user["sub"], user["name"]) == (user_id(svc_sandbox), "Abebe Kebede")


@pytest.mark.parametrize("width", [320, 1280])
def test_scope_names_are_drawn_whole_on_the_consent_page(
    page: Page, svc_sandbox: Sandbox, width: int
) -> None:
    """A name that may break anywhere, in a flex label, shrank to a letter a line: "openi/d"
    at 1280 px, "op/en/id" at 320 px (docs/screenshots/consent-desktop.png showed it)."""
    page.set_viewport_size({"width": width, "height": 800})
    client = public_app(svc_sandbox)
    params = authorize_params(client, scope="openid email offline_access")
    page.goto(f"{AUTH}/oauth2/authorize?{urlencode(params)}")
    page.get_by_label("Handle or email").fill("abebe")
    page.get_by_label("Password").fill("abebe-sandbox-pass")
    page.get_by_role("button", name="Sign in").click()
    names = page.locator("#scopes code")
    expect(names).to_have_count(3)
    lines = names.evaluate_all(f"codes => codes.map(c => [c.textContent, ({LINES_OF})(c)])")
    assert lines == [["openid", 1], ["email", 1], ["offline_access", 1]]
