"""One scripted afternoon across every family, for tests/test_determinism.py: run as
``python -m tests.determinism_flow SEED`` it prints, as JSON, every answer it got, every
webhook its in-process receiver was sent (bytes and headers) and the final state export.

Every input is fixed (bodies, PKCE verifier, state, clock steps): whatever differs between
two runs with one seed came from the emulator."""

from __future__ import annotations

import json
import sys
from typing import Any

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.settings import Settings
from tests.helpers import token_of
from tests.wallet.helpers import (
    WALLET,
    headers,
    owner_key,
    send_body,
    token_answer_in_process,
    token_in_process,
)


def run(seed: int) -> dict[str, Any]:
    sandbox = Sandbox(Settings.load({"clock_mode": "frozen", "seed": seed}))
    http = create_app(sandbox).test_client()
    answers: list[Any] = []
    sent: list[Any] = []

    def call(method: str, path: str, **kwargs: Any) -> Any:
        response = http.open(path, method=method, **kwargs)
        answers.append([method, path, response.status_code, response.get_data(as_text=True)])
        return response.json

    def receiver(body: bytes, received: dict[str, str]) -> int:
        sent.append([body.decode(), dict(sorted(received.items()))])
        return 500 if len(sent) % 3 == 0 else 200  # some retries too

    org = next(o for o in sandbox.info()["organizations"] if o["environment"] == "sandbox")
    sandbox.add_webhook_receiver(org["id"], receiver)
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}

    product = call(
        "POST",
        "/api/products",
        json={"title": "Book", "pricingModel": "fixed", "price": {"amount": 5000}},
        headers=auth,
    )["product"]
    call("PATCH", f"/api/products/{product['_id']}", json={"status": "published"}, headers=auth)
    buyer = {"email": "buyer@example.com", "phone": "0911223344", "externalId": "u-1"}
    link = call(
        "POST", "/api/checkout", json={"productId": product["_id"], "customer": buyer}, headers=auth
    )
    pay_token = link["checkoutUrl"].rsplit("/", 1)[1]
    call("POST", f"/pay/{pay_token}", json={"gateway": "telebirr", "phone": "0900000001"})
    failing = {**buyer, "phone": "251900000002"}
    call(
        "POST",
        "/api/checkout",
        json={"productId": product["_id"], "customer": failing, "gateway": "mpesa"},
        headers=auth,
    )
    call(
        "POST",
        "/api/checkout",
        json={"amount": 700, "description": "tip", "metadata": {"k": "v"}},
        headers=auth,
    )
    call("POST", "/_sandbox/clock/advance", json={"seconds": 31 * 60})
    call("GET", "/api/orders", headers=auth)

    wallet = headers(token_in_process(http, sandbox, "abebe"), owner_key(sandbox))
    call("POST", WALLET + "/send", json=send_body("tigist", 1234, "det-0001"), headers=wallet)
    call("GET", WALLET, headers=wallet)
    # Every claim-releasing scope: the ID token's and userinfo's claim order is part of the bytes.
    signed_in = token_answer_in_process(http, sandbox, "tigist", "openid email profile")
    answers.append(["POST", "/auth/oauth2/token", 200, signed_in["id_token"]])
    bearer = {"Authorization": f"Bearer {signed_in['access_token']}"}
    call("GET", "/auth/oauth2/userinfo", headers=bearer)
    call("POST", f"/_sandbox/orgs/{org['id']}/tokens", json={"name": "ci"})
    call("POST", "/_sandbox/clock/advance", json={"seconds": 24 * 3600})
    call("GET", "/_sandbox/webhooks/deliveries")
    return {"answers": answers, "webhooks": sent, "state": http.get("/_sandbox/state").json}


if __name__ == "__main__":
    print(json.dumps(run(int(sys.argv[1]))))
