"""Wallets, ledger, transfers and idempotency keys in reset, export and import, and in the
determinism guarantee (same seed + same requests => same ids and bodies)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.wallet.helpers import WALLET, headers, owner_key, seeded_app, send_body, user_id

VERIFIER = "determinism-verifier-" + "v" * 30


def token_in_process(http: FlaskClient, sandbox: Sandbox, handle: str) -> str:
    """The code flow through the Flask client (same origin in every run: same issuer)."""
    app = seeded_app(sandbox)
    digest = hashlib.sha256(VERIFIER.encode()).digest()
    params = {
        "response_type": "code",
        "client_id": app.client_id,
        "redirect_uri": app.redirect_uri,
        "scope": "openid wallet:read wallet:send",
        "state": "state-1",
        "code_challenge": base64.urlsafe_b64encode(digest).rstrip(b"=").decode(),
        "code_challenge_method": "S256",
    }
    body = {"userId": user_id(sandbox, handle), "params": params, "decision": "approve"}
    code = http.post("/_sandbox/identity/authorize", json=body).json["code"]  # type: ignore[index]
    answer = http.post(
        "/auth/oauth2/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": app.redirect_uri,
            "code_verifier": VERIFIER,
            "client_id": app.client_id,
            "client_secret": app.secret,
            "resource": sandbox.settings.root("resource_url"),
        },
    )
    assert answer.status_code == 200, answer.json
    return str(answer.json["access_token"])  # type: ignore[index]


def activity(http: FlaskClient, sandbox: Sandbox) -> list[Any]:
    auth = headers(token_in_process(http, sandbox, "abebe"), owner_key(sandbox))
    seen: list[Any] = [
        http.post(WALLET + "/send", json=send_body("tigist", 1234, "det-0001"), headers=auth).json,
        http.post(WALLET + "/send", json=send_body("dawit", 777, "det-0002"), headers=auth).json,
        http.post(WALLET + "/send", json=send_body("dawit", 777, "det-0002"), headers=auth).json,
        http.post("/_sandbox/wallets/tigist/fund", json={"amountMinor": 50}).json,
        http.get(WALLET, headers=auth).json,
    ]
    for handle in ("abebe", "tigist", "dawit"):
        seen.append(http.get(f"/_sandbox/wallets/{handle}/ledger").json)
        seen.append(http.get(f"/_sandbox/wallets/{handle}/transfers").json)
    return seen


def test_same_seed_same_requests_same_transfers_and_ledger() -> None:
    runs = []
    for _ in range(2):
        sandbox = Sandbox(clock_mode="frozen", seed=11)
        runs.append((activity(create_app(sandbox).test_client(), sandbox), sandbox.export()))
    assert runs[0][0] == runs[1][0]
    assert runs[0][1]["services"]["wallets"] == runs[1][1]["services"]["wallets"]


def test_export_reset_import_round_trips_wallets(
    svc_client: FlaskClient, svc_sandbox: Sandbox
) -> None:
    seeded = svc_client.get("/_sandbox/wallets").json
    before = activity(svc_client, svc_sandbox)
    exported = svc_client.get("/_sandbox/state").json
    assert exported is not None and exported["services"]["wallets"]["transfers"]

    assert svc_client.post("/_sandbox/reset", json={}).status_code == 200
    assert svc_client.get("/_sandbox/wallets").json == seeded
    assert svc_client.get("/_sandbox/wallets/abebe/transfers").json == {"items": []}

    assert svc_client.put("/_sandbox/state", json=exported).status_code == 200
    assert svc_client.get("/_sandbox/state").json == exported
    # The imported keys still dedupe: the repeat answers the original transfer.
    auth = headers(token_in_process(svc_client, svc_sandbox, "abebe"), owner_key(svc_sandbox))
    again = svc_client.post(
        WALLET + "/send", json=send_body("tigist", 1234, "det-0001"), headers=auth
    )
    assert again.status_code == 200
    assert again.json == {"transfer": before[0]["transfer"], "deduped": True}
    abebe = svc_client.get("/_sandbox/wallets/abebe").json
    assert abebe is not None and abebe["availableMinor"] == 1000000 - 1234 - 777


def test_seeded_users_start_with_the_seed_balance() -> None:
    sandbox = Sandbox(clock_mode="frozen", wallet_seed_minor=4242)
    http = create_app(sandbox).test_client()
    wallets = http.get("/_sandbox/wallets").json
    assert wallets is not None
    assert {w["handle"]: w["availableMinor"] for w in wallets["items"]} == {
        "abebe": 4242,
        "tigist": 4242,
        "dawit": 4242,
    }
