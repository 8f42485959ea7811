"""The dashboard's session page links the simulator for sandbox sessions only: a production
session's prompt is decided by the provider settings or the page's control-plane buttons."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import (
    BUYER,
    PROMPT_MODES,
    checkout,
    published,
    session_of_mode,
)


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


@pytest.mark.parametrize("environment", ["sandbox", "production"])
@pytest.mark.parametrize(
    ("product_fields", "request_fields"),
    [
        ({"pricingModel": "free", "price": None}, {}),
        ({"pricingModel": "fixed", "price": {"amount": 0}}, {}),
        ({"pricingModel": "pwyw", "price": {"minimumAmount": 0}}, {"amount": 0}),
    ],
    ids=["free", "fixed-0", "pwyw-0"],
)
def test_a_session_with_nothing_to_pay_links_no_payment_page(
    svc_http: FlaskClient,
    auth: dict[str, str],
    live_auth: dict[str, str],
    environment: str,
    product_fields: dict[str, Any],
    request_fields: dict[str, Any],
) -> None:
    """A free-mode session's order is paid at once: no page for the buyer to pay on (the
    provider page would answer 404 in production), so neither the control-plane view nor the
    dashboard names one."""
    merchant = auth if environment == "sandbox" else live_auth
    product = published(svc_http, merchant, **product_fields)
    result = checkout(
        svc_http, merchant, productId=product["_id"], customer=BUYER, **request_fields
    )
    session_id = result["sessionId"]
    described = svc_http.get(f"/_sandbox/checkout/sessions/{session_id}").json
    assert described is not None
    assert (described["mode"], described["checkoutUrl"]) == ("free", None)
    html = svc_http.get(f"/_sandbox/ui/checkouts/{session_id}").get_data(as_text=True)
    assert result["orderId"] in html
    assert ">Payment page<" not in html
    assert ">Simulator<" not in html
    assert "/simulate/" not in html and "/provider/" not in html


def test_the_session_page_names_an_attempts_failure_code_and_links_a_page_once(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """A sandbox push's checkout URL is the simulator page: one link, not two to the same
    address. A failure shows its code (one §7 may add included), not only its message."""
    session_id = session_of_mode(svc_http, auth, "push")
    failed = svc_http.post(
        f"/_sandbox/checkout/sessions/{session_id}/fail", json={"code": "insufficient_funds"}
    )
    assert failed.status_code == 200
    html = svc_http.get(f"/_sandbox/ui/checkouts/{session_id}").get_data(as_text=True)
    assert "<code>insufficient_funds</code> The payment failed" in html
    assert ">Simulator</a>" in html and ">Payment page</a>" not in html
