"""Every page a person can open, with state worth looking at: the screenshots and the
page-wide checks (escaping, scripts, phone-sized layout) walk this one list."""

from __future__ import annotations

from urllib.parse import urlencode

from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import checkout, path, published, push_checkout
from tests.commerce.earnings import earn
from tests.commerce.payout_helpers import withdraw
from tests.identity.helpers import AUTH, authorize_params, public_app

#: A hostile product title: every page must show it as text, and wrap its last word (67
#: characters without a space) on a phone's width.
HOSTILE = '<script>alert("title")</script><img src=x onerror=alert(1)>' + "W" * 50
#: A description word no phone's width holds (a pasted URL).
LONG_WORD = "https://example.com/" + "x" * 250


def populate(
    api: FlaskClient, sandbox: Sandbox, auth: dict[str, str], live_auth: dict[str, str]
) -> dict[str, str]:
    """Products, checkouts in each state, orders, a withdrawal in review, events; returns the
    pages to visit by name."""
    hostile = published(
        api, auth, title=HOSTILE, description=f"Escaped <b>description</b> {LONG_WORD}"
    )
    tickets = published(api, auth, title="Concert ticket")
    tip = published(api, auth, title="Tip jar", pricingModel="pwyw", price={"minimumAmount": 1000})
    link = checkout(api, auth, productId=tickets["_id"])
    hostile_link = checkout(api, auth, productId=hostile["_id"])
    paid = checkout(api, auth, productId=tickets["_id"])
    pay_path = path(paid["checkoutUrl"])
    paying = {"gateway": "telebirr", "phone": "0900000001", "email": "a@b.co"}
    assert api.post(pay_path, json=paying).status_code == 200
    pushed = push_checkout(api, auth, product_id=tickets["_id"])
    concert = published(api, live_auth, title="Concert ticket")
    buyer = {"email": "buyer@example.com"}
    hosted = checkout(api, None, productId=concert["checkoutToken"], customer=buyer)
    earn(api, live_auth, 2_000_000)
    withdraw(api, live_auth, 1_500_001)
    withdraw(api, live_auth, 20_000)
    app = public_app(sandbox)
    hostile_app = {"name": HOSTILE[:120], "redirectUris": ["https://app.example/cb"]}
    assert api.post("/_sandbox/apps", json=hostile_app).status_code == 201
    funded = {"amountMinor": 12_345, "note": HOSTILE}
    assert api.post("/_sandbox/wallets/abebe/fund", json=funded).status_code == 200
    return {
        "pay": path(link["checkoutUrl"]),
        "pay-hostile": path(hostile_link["checkoutUrl"]),
        "pay-paid": pay_path,
        "simulator": f"/simulate/{pushed['sessionId']}",
        "provider": path(hosted["checkoutUrl"]),
        "product": f"/p/{tip['checkoutToken']}",
        "product-hostile": f"/p/{hostile['checkoutToken']}",
        "not-found": "/pay/cs_" + "0" * 24,
        "signin": f"{AUTH}/oauth2/authorize?{urlencode(authorize_params(app))}",
        "identity-error": f"{AUTH}/oauth2/authorize?client_id=unknown&response_type=code",
        "ui-overview": "/_sandbox/ui",
        "ui-products": "/_sandbox/ui/products",
        "ui-checkouts": "/_sandbox/ui/checkouts",
        "ui-checkout": f"/_sandbox/ui/checkouts/{hostile_link['sessionId']}",
        "ui-orders": "/_sandbox/ui/orders",
        "ui-payouts": "/_sandbox/ui/payouts",
        "ui-webhooks": "/_sandbox/ui/webhooks",
        "ui-identity": "/_sandbox/ui/identity",
        "ui-wallets": "/_sandbox/ui/wallets",
        "ui-clock": "/_sandbox/ui/clock",
        "ui-requests": "/_sandbox/ui/requests",
        "ui-conformance": "/_sandbox/ui/conformance",
    }
