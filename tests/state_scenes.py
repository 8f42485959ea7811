"""Sandboxes holding records of every kind, for the state import tests: built through the
control plane and the APIs as users do."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import BUYER, checkout, org_id, published, push_checkout
from tests.commerce.earnings import earn
from tests.commerce.payout_helpers import withdraw
from tests.helpers import token_of
from tests.identity.helpers import tokens_for, user_id, wallet_app
from tests.wallet.helpers import WALLET, headers, owner_key, send_body, token_in_process

#: A session id no session has yet: a notification rule waits for it.
WAITING_SESSION = "5e55" * 6


def send(
    http: FlaskClient, method: str, path: str, body: dict[str, Any], status: int = 200, **kw: Any
) -> dict[str, Any]:
    response = http.open(path, method=method, json=body, **kw)
    assert response.status_code == status, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result


def busy_sandbox(**settings: Any) -> tuple[Sandbox, FlaskClient]:
    """A sandbox with every kind of record: checkouts open, paid, expired, through a link and
    of a custom amount, a provider decision and a late notice to come; withdrawals pending,
    processing, completed and in review; webhooks delivered, retried and pending, a
    redelivery, a deleted endpoint; faults; identity codes, grants, tokens, consents, a
    browser session; a wallet transfer; a custom trigger."""
    sandbox = Sandbox(clock_mode="frozen", seed=3, rate_limits=False, **settings)
    http = create_app(sandbox).test_client()
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    live = {"Authorization": f"Bearer {token_of(sandbox, 'production')}"}
    org, production = org_id(sandbox), org_id(sandbox, "production")

    answers = iter([500, 200] * 100)  # every delivery fails once, then succeeds
    sandbox.add_webhook_receiver(org, lambda body, hdrs: next(answers))
    refusing = {"orgId": org, "url": "http://127.0.0.1:9/refused"}
    gone = send(http, "POST", "/_sandbox/webhooks/endpoints", refusing, 201)

    earn(http, live, 500_000)
    withdraw(http, live, 10_000, key="payout-1")  # completed once the clock has moved
    withdraw(http, live, 300_000)  # in review

    product = published(http, auth)
    only = {"productIds": [product["_id"]]}
    send(http, "POST", f"/_sandbox/orgs/{org}/checkout-fields", {"label": "Size", **only}, 201)
    link = send(http, "POST", f"/_sandbox/orgs/{org}/checkout-links", only, 201)
    paid = push_checkout(http, auth, product_id=product["_id"])
    send(http, "POST", f"/_sandbox/checkout/sessions/{paid['sessionId']}/approve", {})
    expiring = checkout(http, auth, productId=product["_id"], customer=BUYER)
    sandbox.advance(timedelta(minutes=31))

    faults = "/_sandbox/faults/notifications"
    send(http, "POST", faults, {"kind": "late", "sessionId": expiring["sessionId"]}, 201)
    send(http, "POST", faults, {"kind": "late", "delaySeconds": 60, "orgId": org}, 201)
    send(http, "POST", faults, {"kind": "lost", "sessionId": WAITING_SESSION}, 201)
    slow = {"path": "/api/products", "delaySeconds": 1, "orgId": org}
    send(http, "POST", "/_sandbox/faults/latency", slow, 201)
    withdraw(http, live, 20_000)
    sandbox.advance(timedelta(seconds=90))  # that one is processing now
    withdraw(http, live, 30_000)  # and this one pending
    late = push_checkout(http, auth, product_id=product["_id"])
    send(http, "POST", f"/_sandbox/checkout/sessions/{late['sessionId']}/approve", {})
    checkout(http, auth, productId=product["_id"], checkoutLink=link["id"], customer=BUYER)
    checkout(http, auth, amount=700, description="Tip", customer=BUYER)  # placeholder product
    # A production push: the provider decides by itself, later.
    checkout(http, live, amount=900, description="Later", gateway="telebirr", customer=BUYER)
    first = next(e.id for e in sandbox.events.events if e.org_id == org)
    send(http, "POST", f"/_sandbox/webhooks/events/{first}/redeliver", {}, 201)
    send(http, "DELETE", f"/_sandbox/webhooks/endpoints/{gone['id']}", {})

    confidential = wallet_app(sandbox)
    tokens_for(http, sandbox, confidential)
    abebe = user_id(sandbox, "abebe")
    consent = f"/_sandbox/users/{abebe}/consents/{confidential.client_id}"
    send(http, "PUT", consent, {"scopes": ["profile"]})
    send(http, "POST", f"/_sandbox/users/{abebe}/session", {}, 201)
    wallet = headers(token_in_process(http, sandbox, "abebe"), owner_key(sandbox))
    transfer = send_body("tigist", 1234, "send-0001")
    send(http, "POST", WALLET + "/send", transfer, 201, headers=wallet)
    send(http, "PUT", f"/_sandbox/orgs/{production}/owner-wallet", {"canCover": False})
    send(http, "POST", "/_sandbox/triggers", {"phone": "0911000111", "outcome": "fail"}, 201)
    return sandbox, http
