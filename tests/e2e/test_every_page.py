"""Every page, in the browser, at desktop and phone size: hostile strings render as text, no
inline script runs, nothing overflows a phone's width, every input has a label, the page
says its language; and a screenshot of each (docs/screenshots/ with scripts/screenshots)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from playwright.sync_api import Browser, Dialog, expect

from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from tests.e2e.conftest import DESKTOP, PHONE, open_page
from tests.e2e.pages_tour import HOSTILE, populate

#: The lowest text contrast on a page, and where (WCAG AA for normal text asks 4.5).
LOWEST_CONTRAST = (Path(__file__).parent / "contrast.js").read_text()

#: Set by scripts/screenshots: where the PNGs go (otherwise a temporary directory).
SCREENSHOTS = os.environ.get("SVC_SANDBOX_SCREENSHOTS")


@pytest.mark.parametrize(("size", "viewport"), [("desktop", DESKTOP), ("phone", PHONE)])
def test_every_page(
    browser: Browser,
    svc_server: RunningServer,
    api: FlaskClient,
    svc_sandbox: Sandbox,
    auth: dict[str, str],
    live_auth: dict[str, str],
    tmp_path: Path,
    size: str,
    viewport: dict[str, int],
) -> None:
    pages = populate(api, svc_sandbox, auth, live_auth)
    out = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    tab = open_page(browser, svc_server, viewport)
    dialogs: list[str] = []

    def record(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    tab.on("dialog", record)
    # Every error the console logged (a CSP refusal, an image or script that failed to load,
    # a script error), by page; a page answered with an error status logs that status.
    errors: list[tuple[str, str]] = []
    current = {"name": ""}
    tab.on(
        "console", lambda m: errors.append((current["name"], m.text)) if m.type == "error" else None
    )
    tab.on("pageerror", lambda e: errors.append((current["name"], str(e))))
    for name, url in pages.items():
        current["name"] = name
        expected = {"not-found": 404, "identity-error": 400}.get(name, 200)
        response = tab.goto(url)
        assert response is not None
        assert response.status == expected, name
        headers = response.headers
        policy = headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy, name
        assert headers["x-content-type-options"] == "nosniff", name
        # The stylesheet applied under that policy (the sandbox bar has its colour).
        background = tab.locator(".sandbox-bar").evaluate(
            "e => getComputedStyle(e).backgroundColor"
        )
        assert background == "rgb(255, 244, 214)", name
        assert tab.locator("html").get_attribute("lang") == "en"
        expect(tab.locator(".sandbox-bar")).to_contain_text("SANDBOX")
        # Scripts only from files (a CSP without 'unsafe-inline' lets them run).
        inline = tab.locator("script:not([src])").count()
        handlers = tab.evaluate(
            "[...document.querySelectorAll('*')].filter(e => [...e.attributes]"
            ".some(a => a.name.startsWith('on'))).length"
        )
        assert (inline, handlers) == (0, 0), name
        # Every visible input, select and textarea has a label (or is a labelled radio).
        unlabelled = tab.evaluate(
            "[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]"
            ".filter(e => e.labels.length === 0 && !e.getAttribute('aria-label'))"
            ".map(e => e.name)"
        )
        assert unlabelled == [], name
        # Readable at phone width: nothing wider than the screen but scrollable tables.
        overflow = tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, (name, overflow)
        contrast, where = tab.evaluate(LOWEST_CONTRAST)
        assert contrast >= 4.5, (name, contrast, where)
        if "hostile" in name or name in ("ui-products", "ui-checkout", "ui-identity", "ui-wallets"):
            assert HOSTILE in tab.locator("body").inner_text(), name
        tab.screenshot(path=str(out / f"{name}-{size}.png"), full_page=True)
    own_status = {"not-found": 404, "identity-error": 400}
    unexpected = [
        (name, text)
        for name, text in errors
        if not (name in own_status and f"status of {own_status[name]}" in text)
    ]
    assert dialogs == [] and unexpected == []
    tab.context.close()
