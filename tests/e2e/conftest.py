"""Browser tests: Debian's chromium driven by Playwright against a real server on 127.0.0.1.

One browser for the whole session (starting chromium is the slow part); a fresh context, so
fresh cookies, for each test. Playwright's own browser download is never used: the tests
launch the system chromium (``SVC_SANDBOX_CHROMIUM``, default /usr/bin/chromium). When it is
missing, every browser test FAILS saying how to install it (never a silent skip).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from svc_sandbox.pytest_plugin import RunningServer

CHROMIUM = Path(os.environ.get("SVC_SANDBOX_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}
#: Longest a step waits for the page (a real server on loopback answers in milliseconds).
STEP_TIMEOUT_MS = 10_000


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"The browser tests need Debian's chromium at {CHROMIUM}, which is missing. "
            "Install it with `sudo apt-get install -y chromium` (or run "
            "`sudo bash scripts/install-chromium`), or point SVC_SANDBOX_CHROMIUM at a "
            "chromium binary.",
            pytrace=False,
        )
    with sync_playwright() as started:
        yield started


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    launched = playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
    )
    try:
        yield launched
    finally:
        launched.close()


@pytest.fixture(scope="session")
def cached_browser(playwright: Playwright) -> Iterator[Browser]:
    """Chromium with its back/forward cache on, as in a person's browser (Playwright turns it
    off): Back shows a page as it was left, scripts and all."""
    launched = playwright.chromium.launch(
        executable_path=str(CHROMIUM),
        args=CHROMIUM_ARGS,
        headless=True,
        ignore_default_args=["--disable-back-forward-cache"],
    )
    try:
        yield launched
    finally:
        launched.close()


def open_page(browser: Browser, server: RunningServer, viewport: dict[str, int]) -> Page:
    context = browser.new_context(base_url=server.url, viewport=viewport)  # type: ignore[arg-type]
    context.set_default_timeout(STEP_TIMEOUT_MS)
    return context.new_page()


@pytest.fixture
def page(browser: Browser, svc_server: RunningServer) -> Iterator[Page]:
    """A desktop-sized tab on the test's server."""
    tab = open_page(browser, svc_server, DESKTOP)
    try:
        yield tab
    finally:
        tab.context.close()


@pytest.fixture
def phone_page(browser: Browser, svc_server: RunningServer) -> Iterator[Page]:
    """A phone-sized tab on the test's server."""
    tab = open_page(browser, svc_server, PHONE)
    try:
        yield tab
    finally:
        tab.context.close()


@pytest.fixture
def api(svc_flask_app: Flask) -> FlaskClient:
    """The merchant's side (creating products and checkouts), on the same Sandbox."""
    return svc_flask_app.test_client()


#: The registered address of the apps the browser tests register (nothing listens there).
APP_REDIRECT = "https://app.example/cb"
#: How many lines the browser draws an element's text on (a flex item is a block: its own
#: client rects are one box however many lines it holds, its text's are one a line).
LINES_OF = """element => {
    const range = document.createRange();
    range.selectNodeContents(element);
    return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
}"""


def registered_app(api: FlaskClient, name: str, client_type: str, **fields: object) -> Any:
    """A new app registered through the control plane (an openid app unless ``fields`` say
    other scopes), as its answer."""
    body = {
        "name": name,
        "redirectUris": [APP_REDIRECT],
        "scopes": ["openid"],
        "clientType": client_type,
        **fields,
    }
    app = api.post("/_sandbox/apps", json=body).json
    assert app is not None and "clientId" in app, app
    return app
