"""Wallets, ledger, transfers and idempotency keys in reset, export and import, and in the
determinism guarantee (same seed + same requests => same ids and bodies)."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.wallet.helpers import WALLET, headers, owner_key, send_body, token_in_process


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
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    seeded = svc_http.get("/_sandbox/wallets").json
    before = activity(svc_http, svc_sandbox)
    exported = svc_http.get("/_sandbox/state").json
    assert exported is not None and exported["services"]["wallets"]["transfers"]

    assert svc_http.post("/_sandbox/reset", json={}).status_code == 200
    assert svc_http.get("/_sandbox/wallets").json == seeded
    assert svc_http.get("/_sandbox/wallets/abebe/transfers").json == {"items": []}

    assert svc_http.put("/_sandbox/state", json=exported).status_code == 200
    assert svc_http.get("/_sandbox/state").json == exported
    # The imported keys still dedupe: the repeat answers the original transfer.
    auth = headers(token_in_process(svc_http, svc_sandbox, "abebe"), owner_key(svc_sandbox))
    again = svc_http.post(
        WALLET + "/send", json=send_body("tigist", 1234, "det-0001"), headers=auth
    )
    assert again.status_code == 200
    assert again.json == {"transfer": before[0]["transfer"], "deduped": True}
    abebe = svc_http.get("/_sandbox/wallets/abebe").json
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
