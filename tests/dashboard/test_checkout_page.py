"""The dashboard's session page links the simulator for sandbox sessions only: a production
session's prompt is decided by the provider settings or the page's control-plane buttons."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import PROMPT_MODES, session_of_mode


@pytest.mark.parametrize(("environment", "linked"), [("sandbox", True), ("production", False)])
def test_the_session_page_links_the_simulator_in_the_sandbox_only(
    svc_http: FlaskClient,
    auth: dict[str, str],
    live_auth: dict[str, str],
    svc_sandbox: Sandbox,
    environment: str,
    linked: bool,
) -> None:
    merchant = auth if environment == "sandbox" else live_auth
    sessions = [session_of_mode(svc_http, merchant, mode) for mode in PROMPT_MODES]
    for session_id in sessions:
        page = svc_http.get(f"/_sandbox/ui/checkouts/{session_id}")
        assert page.status_code == 200
        html = page.get_data(as_text=True)
        simulator = f"{svc_sandbox.settings.root('simulate_url')}/{session_id}"
        assert (f'href="{simulator}"' in html) is linked
        described = svc_http.get(f"/_sandbox/checkout/sessions/{session_id}").json
        assert described is not None
        assert ("/simulate/" in (described["checkoutUrl"] or "")) is (
            linked and described["mode"] != "link"
        )
