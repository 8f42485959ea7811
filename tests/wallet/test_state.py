"""Wallets, ledger, transfers and idempotency keys in reset, export and import, and in the
determinism guarantee (same seed + same requests => same ids and bodies)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
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


Wallets = dict[str, Any]


def _entry(wallets: Wallets, kind: str) -> dict[str, Any]:
    return next(e for e in wallets["entries"] if e["kind"] == kind)


def _index(wallets: Wallets, kind: str) -> int:
    return wallets["entries"].index(_entry(wallets, kind))


def _negative_funding(w: Wallets) -> str:
    _entry(w, "funding")["amount"] = -5000000
    return "entries[0].amount must be positive for a funding entry (credits are positive)"


def _credit_unlike_its_transfer(w: Wallets) -> str:
    _entry(w, "transfer_in")["amount"] = 10**12
    transfer = w["transfers"][0]["id"]
    return (
        f"entries[{_index(w, 'transfer_in')}].amount must be 1234, as transfer {transfer!r} "
        "moved 1234"
    )


def _transfer_amount(amount: int) -> Callable[[Wallets], str]:
    def edit(w: Wallets) -> str:
        # Entries and transfer agree; the transfer itself is out of the spec's bounds.
        w["transfers"][0]["amount"] = amount
        _entry(w, "transfer_out")["amount"] = -amount
        _entry(w, "transfer_in")["amount"] = amount
        return "transfers[0].amount must be from 100 to 1000000 (spec §8)"

    return edit


def _status(w: Wallets) -> str:
    w["transfers"][0]["status"] = "banana"
    return "transfers[0].status must be 'completed'"


def _positive_debit(w: Wallets) -> str:
    _entry(w, "transfer_out")["amount"] = 1234
    index = _index(w, "transfer_out")
    return (
        f"entries[{index}].amount must be negative for a transfer_out entry (debits are negative)"
    )


def _funding_naming_a_transfer(w: Wallets) -> str:
    _entry(w, "funding")["transfer_id"] = w["transfers"][0]["id"]
    return "entries[0].transfer_id must be null for a funding entry"


def _leg_without_transfer_id(w: Wallets) -> str:
    _entry(w, "transfer_in")["transfer_id"] = None
    index = _index(w, "transfer_in")
    return f"entries[{index}].transfer_id must name the transfer of a transfer_in entry"


def _credit_to_someone_else(w: Wallets) -> str:
    transfer = w["transfers"][0]
    _entry(w, "transfer_in")["user_id"] = transfer["sender_id"]
    return (
        f"entries[{_index(w, 'transfer_in')}].user_id must be {transfer['recipient_id']!r}, "
        f"the recipient of transfer {transfer['id']!r}"
    )


def _missing_leg(w: Wallets) -> str:
    w["entries"].remove(_entry(w, "transfer_in"))
    return f"transfers[0].id {w['transfers'][0]['id']!r} has no transfer_in entry"


def _second_debit(w: Wallets) -> str:
    out = _entry(w, "transfer_out")
    w["entries"].append({**out, "id": "f" * 24})
    return (
        f"entries[{len(w['entries']) - 1}].transfer_id {out['transfer_id']!r} already has its "
        f"transfer_out entry (entries[{_index(w, 'transfer_out')}])"
    )


def _self_transfer(w: Wallets) -> str:
    transfer = w["transfers"][0]
    transfer["recipient_id"] = transfer["sender_id"]
    _entry(w, "transfer_in")["user_id"] = transfer["sender_id"]
    return "transfers[0].recipient_id must not be the sender (a transfer never pays its sender)"


def _overdraft(w: Wallets) -> str:
    out = _entry(w, "transfer_out")
    w["entries"].append(
        {**out, "id": "f" * 24, "kind": "adjustment", "transfer_id": None, "amount": -1000000}
    )
    return (
        f"entries[{len(w['entries']) - 1}].amount takes availableMinor to -1234 (a balance is "
        f"never below 0) for user {out['user_id']}"
    )


def _funding_past_the_cap(w: Wallets) -> str:
    _entry(w, "funding")["amount"] = 10**13 + 1
    return "entries[0].amount must be at most 10000000000000 for a funding entry"


def _balance_past_2_to_the_53(w: Wallets) -> str:
    funding = _entry(w, "funding")
    extra = [{**funding, "id": f"{i:024x}", "amount": 10**13} for i in range(901)]
    w["entries"].extend(extra)
    return (
        f"entries[{len(w['entries']) - 1}].amount takes availableMinor to "
        f"{1000000 - 1234 + 901 * 10**13}, past {2**53 - 1} for user {funding['user_id']}"
    )


def _unknown_kind(w: Wallets) -> str:
    _entry(w, "funding")["kind"] = "gift"
    return "entries[0].kind must be 'funding', 'adjustment', 'transfer_out' or 'transfer_in'"


@pytest.mark.parametrize(
    "edit",
    [
        _negative_funding,
        _credit_unlike_its_transfer,
        _transfer_amount(-123),
        _transfer_amount(99),
        _transfer_amount(1000001),
        _status,
        _positive_debit,
        _funding_naming_a_transfer,
        _leg_without_transfer_id,
        _credit_to_someone_else,
        _missing_leg,
        _second_debit,
        _self_transfer,
        _overdraft,
        _funding_past_the_cap,
        _balance_past_2_to_the_53,
        _unknown_kind,
    ],
)
def test_an_import_that_breaks_the_ledgers_rules_is_a_400_naming_the_path(
    http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str], edit: Callable[[Wallets], str]
) -> None:
    sent = http.post(WALLET + "/send", json=send_body("tigist", 1234, "ledger-01"), headers=abebe)
    assert sent.status_code == 201
    before = http.get("/_sandbox/state").data
    document = json.loads(before)
    problem = edit(document["services"]["wallets"])
    refused = http.put("/_sandbox/state", json=document)
    assert refused.status_code == 400
    assert refused.json == {
        "error": f"state document: services.wallets.{problem}",
        "code": "validation_failed",
    }
    assert http.get("/_sandbox/state").data == before
    assert http.get(WALLET, headers=abebe).json["availableMinor"] == 1000000 - 1234  # type: ignore[index]


def test_a_wallet_past_the_funding_cap_by_received_transfers_exports_and_imports(
    http: FlaskClient, abebe: dict[str, str]
) -> None:
    # The control plane funds tigist to its cap; a transfer still reaches her (a send is never
    # refused for the recipient's balance), and the export imports back.
    assert (
        http.put("/_sandbox/wallets/tigist/balance", json={"availableMinor": 10**13}).status_code
        == 200
    )
    sent = http.post(WALLET + "/send", json=send_body("tigist", 1234, "ledger-02"), headers=abebe)
    assert sent.status_code == 201
    tigist = http.get("/_sandbox/wallets/tigist").json
    assert tigist is not None and tigist["availableMinor"] == 10**13 + 1234
    exported = http.get("/_sandbox/state").data
    assert (
        http.put("/_sandbox/state", data=exported, content_type="application/json").status_code
        == 200
    )
    assert http.get("/_sandbox/state").data == exported
