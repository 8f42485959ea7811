"""POST/GET /withdrawals (spec §2 Withdrawal, §3, §4, §7, §8), through HTTP."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from tests.commerce.earnings import earn
from tests.commerce.payout_helpers import DESTINATION, balance, decide, org_id_of, withdraw


def listed(client: FlaskClient, auth: dict[str, str], query: str = "") -> dict[str, Any]:
    response = client.get(f"/api/withdrawals{query}", headers=auth)
    assert response.status_code == 200, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result


def patch_org(client: FlaskClient, org_id: str, **changes: Any) -> None:
    response = client.patch(f"/_sandbox/orgs/{org_id}", json=changes)
    assert response.status_code == 200, response.json


def new_production_org(client: FlaskClient, name: str = "Second Shop") -> dict[str, str]:
    response = client.post("/_sandbox/orgs", json={"name": name, "environment": "production"})
    assert response.status_code == 201, response.json
    return {"Authorization": f"Bearer {response.json['tokens'][0]['token']}"}  # type: ignore[index]


# --- creation ----------------------------------------------------------------------------


def test_create_answers_201_with_the_withdrawal(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 50000)
    body = withdraw(svc_http, live_auth, 10000)
    assert len(body["_id"]) == 24 and int(body["_id"], 16) >= 0
    assert body == {
        "_id": body["_id"],
        "status": "pending",
        "amount": 10000,
        "feeAmount": 700,
        "taxAmount": 105,
        "netAmount": 9195,
        "currency": "ETB",
        "gateway": "telebirr",
        "account": "251911223344",
        "createdAt": "2026-01-01T00:00:00.000Z",
    }
    assert balance(svc_http, live_auth) == 40000


@pytest.mark.parametrize("gateway", ["telebirr", "mpesa", "cbe"])
@pytest.mark.parametrize("account", ["251911223344", "0911223344", "911223344"])
def test_every_gateway_and_phone_format_is_accepted(
    svc_http: FlaskClient, live_auth: dict[str, str], gateway: str, account: str
) -> None:
    earn(svc_http, live_auth, 10000)
    body = withdraw(svc_http, live_auth, 10000, gateway=gateway, account=account)
    assert (body["gateway"], body["account"]) == (gateway, "251911223344")  # one form kept


def test_the_whole_balance_can_be_withdrawn(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 25000)
    withdraw(svc_http, live_auth, 25000)
    assert balance(svc_http, live_auth) == 0


# --- refusals: the organization and the balance (400), the wallet (402) ----------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"environment": "sandbox"}, None),
        ({"developerMode": False}, "Developer Mode is off: turn it on to withdraw"),
        ({"kyc": "pending"}, "KYC is not approved (status pending)"),
        ({"kyc": "not_started"}, "KYC is not approved (status not_started)"),
        ({"kyc": "rejected"}, "KYC is not approved (status rejected)"),
    ],
)
def test_organization_must_be_live_in_developer_mode_with_kyc(
    svc_sandbox: Sandbox,
    svc_http: FlaskClient,
    live_auth: dict[str, str],
    change: dict[str, Any],
    message: str | None,
) -> None:
    earn(svc_http, live_auth, 50000)
    org_id = org_id_of(svc_sandbox, live_auth)
    patch_org(svc_http, org_id, **change)
    auth = live_auth
    if message is None:  # back in sandbox: only a sandbox token works
        token = svc_http.post(f"/_sandbox/orgs/{org_id}/tokens", json={}).json["token"]  # type: ignore[index]
        auth = {"Authorization": f"Bearer {token}"}
        message = "Withdrawals need a production organization: this organization is in sandbox"
    body = withdraw(svc_http, auth, 10000, status=400)
    assert body == {"error": message}
    patch_org(svc_http, org_id, environment="production", developerMode=True, kyc="approved")
    if "environment" in change:  # the switch retired live_auth for good (spec §5.2)
        token = svc_http.post(f"/_sandbox/orgs/{org_id}/tokens", json={}).json["token"]  # type: ignore[index]
        live_auth = {"Authorization": f"Bearer {token}"}
    assert balance(svc_http, live_auth) == 50000
    assert listed(svc_http, live_auth)["total"] == 0


def test_seeded_sandbox_token_cannot_withdraw(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    body = withdraw(svc_http, auth, 10000, status=400)
    assert "production organization" in body["error"]


def test_more_than_the_earnings_is_400(svc_http: FlaskClient, live_auth: dict[str, str]) -> None:
    earn(svc_http, live_auth, 30000)
    body = withdraw(svc_http, live_auth, 30001, status=400)
    assert body == {"error": "amount 30001 is more than the withdrawable balance 30000"}
    assert balance(svc_http, live_auth) == 30000


def test_owner_wallet_switch_answers_402(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 30000)
    org_id = org_id_of(svc_sandbox, live_auth)
    switch = f"/_sandbox/orgs/{org_id}/owner-wallet"
    assert svc_http.put(switch, json={"canCover": False}).json == {
        "organizationId": org_id,
        "canCover": False,
    }
    body = withdraw(svc_http, live_auth, 10000, status=402)
    assert body == {"error": "The owner's wallet cannot cover this payout now"}
    assert balance(svc_http, live_auth) == 30000
    svc_http.put(switch, json={"canCover": True})
    withdraw(svc_http, live_auth, 10000)


# --- bad input: 400 naming the problem, balance untouched -----------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"amount": -10000}, "amount must be greater than or equal to 10000"),
        ({"amount": 0}, "amount must be greater than or equal to 10000"),
        ({"amount": 9999}, "amount must be greater than or equal to 10000"),
        ({"amount": 10000.5}, "amount must be an integer"),
        ({"amount": 10000.0}, "amount must be an integer"),
        ({"amount": "10000"}, "amount must be an integer"),
        ({"amount": True}, "amount must be an integer"),
        ({"amount": None}, "amount must be an integer"),
        ({"amount": 10**30}, "amount must be less than or equal to 100000000000"),
        ({"amount": 99_999_999_999}, "more than the withdrawable balance"),
        ({"gateway": "paypal"}, "gateway must be 'telebirr', 'mpesa' or 'cbe'"),
        ({"gateway": "TELEBIRR"}, "gateway must be 'telebirr', 'mpesa' or 'cbe'"),
        ({"gateway": ""}, "gateway must be 'telebirr', 'mpesa' or 'cbe'"),
        ({"gateway": 1}, "gateway must be 'telebirr', 'mpesa' or 'cbe'"),
        ({"account": "0711223344"}, "account must be a phone number like"),
        ({"account": "91122334"}, "account must be a phone number like"),
        ({"account": "2519112233445"}, "account must be a phone number like"),
        ({"account": "+251911223344"}, "account must be a phone number like"),
        ({"account": "251811223344"}, "account must be a phone number like"),
        ({"account": "09112233aa"}, "account must be a phone number like"),
        ({"account": ""}, "account must be a phone number like"),
        ({"account": 911223344}, "account must be a string"),
        ({"amount": ...}, "amount is required"),
        ({"gateway": ...}, "gateway is required"),
        ({"account": ...}, "account is required"),
        ({"note": "hi"}, "note is not a known field"),
    ],
)
def test_bad_input_is_400_naming_the_field(
    svc_http: FlaskClient, live_auth: dict[str, str], body: dict[str, Any], message: str
) -> None:
    earn(svc_http, live_auth, 50000)
    request = {"amount": 10000, **DESTINATION, **body}
    request = {k: v for k, v in request.items() if v is not ...}
    response = svc_http.post("/api/withdrawals", json=request, headers=live_auth)
    assert response.status_code == 400
    assert message in response.json["error"]  # type: ignore[index]
    assert balance(svc_http, live_auth) == 50000
    assert listed(svc_http, live_auth)["total"] == 0


@pytest.mark.parametrize(
    ("data", "content_type", "status", "message"),
    [
        ("", "application/json", 400, "body is required"),
        ("[]", "application/json", 400, "body must be a JSON object"),
        ("{", "application/json", 400, "body is not valid JSON"),
        ('{"amount": 10000}', "text/plain", 415, "Content-Type must be application/json"),
    ],
)
def test_malformed_bodies(
    svc_http: FlaskClient,
    live_auth: dict[str, str],
    data: str,
    content_type: str,
    status: int,
    message: str,
) -> None:
    earn(svc_http, live_auth, 50000)
    response = svc_http.post(
        "/api/withdrawals", data=data, content_type=content_type, headers=live_auth
    )
    assert response.status_code == status
    assert message in response.json["error"]  # type: ignore[index]
    assert balance(svc_http, live_auth) == 50000


def test_no_token_is_403_and_bad_token_401(svc_http: FlaskClient) -> None:
    response = svc_http.post("/api/withdrawals", json={"amount": 10000, **DESTINATION})
    assert response.status_code == 403 and "error" in response.json  # type: ignore[operator]
    bad = {"Authorization": "Bearer svc_live_" + "x" * 32}
    response = svc_http.post("/api/withdrawals", json={"amount": 10000, **DESTINATION}, headers=bad)
    assert response.status_code == 401 and response.json == {"message": "Invalid API token"}


# --- idempotency ------------------------------------------------------------------------------


def test_same_key_same_body_answers_200_with_the_original(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 50000)
    first = withdraw(svc_http, live_auth, 20000, key="order-42")
    assert first["idempotencyKey"] == "order-42"
    svc_sandbox.advance(timedelta(seconds=60))  # it moved on meanwhile
    again = withdraw(svc_http, live_auth, 20000, key="order-42", status=200)
    assert again == {**first, "status": "processing"}
    assert listed(svc_http, live_auth)["total"] == 1
    assert balance(svc_http, live_auth) == 30000


def test_the_same_phone_in_another_format_is_the_same_body(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 50000)
    first = withdraw(svc_http, live_auth, 20000, key="k-2", account="251911223344")
    again = withdraw(svc_http, live_auth, 20000, key="k-2", status=200, account="911223344")
    assert again == first


def test_repeat_is_answered_even_when_the_balance_is_spent(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 20000)
    first = withdraw(svc_http, live_auth, 20000, key="all-of-it")
    assert withdraw(svc_http, live_auth, 20000, key="all-of-it", status=200) == first


#: A first request of 20000 to DESTINATION, then the same key with one field changed.
CHANGES = [(20001, {}), (20000, {"gateway": "mpesa"}), (20000, {"account": "0922334455"})]


@pytest.mark.parametrize(("amount", "change"), CHANGES)
def test_same_key_different_body_answers_200_with_the_original(
    svc_http: FlaskClient, live_auth: dict[str, str], amount: int, change: dict[str, str]
) -> None:
    """Spec §4 read literally: a matching key gives 200 and creates nothing, whatever the body."""
    earn(svc_http, live_auth, 50000)
    first = withdraw(svc_http, live_auth, 20000, key="k-1")
    assert withdraw(svc_http, live_auth, amount, key="k-1", status=200, **change) == first
    assert listed(svc_http, live_auth)["total"] == 1
    assert balance(svc_http, live_auth) == 30000


@pytest.mark.parametrize(("amount", "change"), CHANGES)
def test_the_reject_setting_answers_422_for_another_body(
    svc_sandbox: Sandbox,
    svc_http: FlaskClient,
    live_auth: dict[str, str],
    amount: int,
    change: dict[str, str],
) -> None:
    svc_sandbox.settings.withdrawal_key_reuse = "reject"
    earn(svc_http, live_auth, 50000)
    first = withdraw(svc_http, live_auth, 20000, key="k-1")
    before = svc_http.get("/_sandbox/state").json
    body = withdraw(svc_http, live_auth, amount, key="k-1", status=422, **change)
    assert body == {
        "error": "Idempotency-Key was already used with a different request body: "
        "send a new key for a new withdrawal"
    }
    assert svc_http.get("/_sandbox/state").json == before
    assert withdraw(svc_http, live_auth, 20000, key="k-1", status=200) == first


def test_keys_are_scoped_to_the_organization(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    other = new_production_org(svc_http)
    earn(svc_http, live_auth, 20000)
    earn(svc_http, other, 20000)
    mine = withdraw(svc_http, live_auth, 10000, key="shared-key")
    theirs = withdraw(svc_http, other, 10000, key="shared-key")
    assert mine["_id"] != theirs["_id"]
    assert balance(svc_http, live_auth) == balance(svc_http, other) == 10000


def test_keys_are_kept_as_long_as_their_withdrawal(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 50000)
    first = withdraw(svc_http, live_auth, 10000, key="for-good")
    svc_sandbox.advance(timedelta(days=400))
    again = withdraw(svc_http, live_auth, 10000, key="for-good", status=200)
    assert again == {**first, "status": "completed"}
    assert listed(svc_http, live_auth)["total"] == 1
    assert balance(svc_http, live_auth) == 40000


@pytest.mark.parametrize("hours", [1.5, 24])
def test_a_retention_setting_frees_the_key_after_that_many_hours(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str], hours: float
) -> None:
    svc_sandbox.settings.idempotency_retention_hours = hours
    earn(svc_http, live_auth, 50000)
    first = withdraw(svc_http, live_auth, 10000, key="daily")
    svc_sandbox.advance(timedelta(hours=hours) - timedelta(seconds=1))
    assert withdraw(svc_http, live_auth, 10000, key="daily", status=200)["_id"] == first["_id"]
    svc_sandbox.advance(timedelta(seconds=1))
    second = withdraw(svc_http, live_auth, 10000, key="daily")
    assert second["_id"] != first["_id"] and second["idempotencyKey"] == "daily"
    assert withdraw(svc_http, live_auth, 10000, key="daily", status=200) == second
    assert balance(svc_http, live_auth) == 30000


def test_a_sandbox_organization_is_not_answered_with_a_production_withdrawal(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    """A known key is no repeat once the organization is in sandbox: withdrawals stay hidden."""
    earn(svc_http, live_auth, 50000)
    first = withdraw(svc_http, live_auth, 10000, key="env-key")
    org_id = org_id_of(svc_sandbox, live_auth)
    patch_org(svc_http, org_id, environment="sandbox")
    token = svc_http.post(f"/_sandbox/orgs/{org_id}/tokens", json={}).json["token"]  # type: ignore[index]
    sandbox_auth = {"Authorization": f"Bearer {token}"}
    refused = withdraw(svc_http, sandbox_auth, 10000, key="env-key", status=400)
    assert refused == {
        "error": "Withdrawals need a production organization: this organization is in sandbox"
    }
    patch_org(svc_http, org_id, environment="production")
    token = svc_http.post(f"/_sandbox/orgs/{org_id}/tokens", json={}).json["token"]  # type: ignore[index]
    live_again = {"Authorization": f"Bearer {token}"}
    assert withdraw(svc_http, live_again, 10000, key="env-key", status=200) == first


def test_a_refused_request_does_not_use_up_its_key(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    withdraw(svc_http, live_auth, 10000, key="retry-me", status=400)
    earn(svc_http, live_auth, 10000)
    withdraw(svc_http, live_auth, 10000, key="retry-me")


@pytest.mark.parametrize("key", ["", "k" * 256, "caf\u00e9", "a\tb"])
def test_bad_idempotency_keys_are_400(
    svc_http: FlaskClient, live_auth: dict[str, str], key: str
) -> None:
    earn(svc_http, live_auth, 50000)
    headers = {**live_auth, "Idempotency-Key": key}
    body = {"amount": 10000, **DESTINATION}
    response = svc_http.post("/api/withdrawals", json=body, headers=headers)
    assert response.status_code == 400
    assert response.json == {"error": "Idempotency-Key must be 1 to 255 printable ASCII characters"}
    assert balance(svc_http, live_auth) == 50000


def test_longest_key_is_255(svc_http: FlaskClient, live_auth: dict[str, str]) -> None:
    earn(svc_http, live_auth, 50000)
    assert withdraw(svc_http, live_auth, 10000, key="k" * 255)["idempotencyKey"] == "k" * 255


# --- review threshold and life on the clock ------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "status"),
    [(10000, "pending"), (999_999, "pending"), (1_000_000, "pending"), (1_000_001, "reviewing")],
)
def test_review_threshold(
    svc_http: FlaskClient, live_auth: dict[str, str], amount: int, status: str
) -> None:
    earn(svc_http, live_auth, 2_000_000)
    assert withdraw(svc_http, live_auth, amount)["status"] == status


def status_of(client: FlaskClient, auth: dict[str, str], withdrawal_id: str) -> str:
    response = client.get(f"/api/withdrawals/{withdrawal_id}", headers=auth)
    assert response.status_code == 200, response.json
    return str(response.json["status"])  # type: ignore[index]


def test_automatic_payout_moves_on_the_clock(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 50000)
    wid = withdraw(svc_http, live_auth, 10000)["_id"]
    steps = [(59, "pending"), (1, "processing"), (299, "processing"), (1, "completed")]
    for seconds, status in steps:
        svc_sandbox.advance(timedelta(seconds=seconds))
        assert status_of(svc_http, live_auth, wid) == status


def test_delays_are_settings(live_auth: dict[str, str]) -> None:
    from svc_sandbox.app import create_app

    sandbox = Sandbox(
        clock_mode="frozen", seed=1, port=0, payout_pending_seconds=5, payout_processing_seconds=10
    )
    client = create_app(sandbox).test_client()
    earn(client, live_auth, 10000)
    wid = withdraw(client, live_auth, 10000)["_id"]
    sandbox.advance(timedelta(seconds=5))
    assert status_of(client, live_auth, wid) == "processing"
    sandbox.advance(timedelta(seconds=10))
    assert status_of(client, live_auth, wid) == "completed"


def test_review_waits_for_approval_then_pays_out(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 2_000_000)
    wid = withdraw(svc_http, live_auth, 1_500_000)["_id"]
    svc_sandbox.advance(timedelta(days=3))
    assert status_of(svc_http, live_auth, wid) == "reviewing"
    approved = decide(svc_http, wid, "approve", note="ok")
    assert (approved["status"], approved["note"]) == ("approved", "ok")
    svc_sandbox.advance(timedelta(seconds=60))
    assert status_of(svc_http, live_auth, wid) == "processing"
    svc_sandbox.advance(timedelta(seconds=300))
    assert status_of(svc_http, live_auth, wid) == "completed"
    assert balance(svc_http, live_auth) == 500_000


def test_rejection_returns_the_funds_with_a_note(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 2_000_000)
    wid = withdraw(svc_http, live_auth, 2_000_000)["_id"]
    assert balance(svc_http, live_auth) == 0
    decide(svc_http, wid, "reject", note="account mismatch")
    got = svc_http.get(f"/api/withdrawals/{wid}", headers=live_auth).json
    assert got["status"] == "rejected" and got["note"] == "account mismatch"  # type: ignore[index]
    assert balance(svc_http, live_auth) == 2_000_000


# --- the rolling 24-hour cap ---------------------------------------------------------------------


def test_rolling_24_hour_cap(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 30_000_000)
    withdraw(svc_http, live_auth, 6_000_000)
    svc_sandbox.advance(timedelta(hours=12))
    withdraw(svc_http, live_auth, 4_000_000)  # exactly 10000000 in 24 h: allowed
    headers = {**live_auth}
    response = svc_http.post(
        "/api/withdrawals", json={"amount": 10000, **DESTINATION}, headers=headers
    )
    assert response.status_code == 429
    assert "Daily payout limit" in response.json["error"]  # type: ignore[index]
    assert response.headers["Retry-After"] == str(12 * 3600)
    assert balance(svc_http, live_auth) == 20_000_000
    svc_sandbox.advance(timedelta(hours=12) - timedelta(seconds=1))
    withdraw(svc_http, live_auth, 10000, status=429)
    svc_sandbox.advance(timedelta(seconds=1))  # the first one leaves the window
    withdraw(svc_http, live_auth, 6_000_000)
    withdraw(svc_http, live_auth, 10000, status=429)


def test_one_withdrawal_above_the_cap_is_429(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 20_000_000)
    withdraw(svc_http, live_auth, 10_000_001, status=429)
    withdraw(svc_http, live_auth, 10_000_000)


@pytest.mark.parametrize("spent", [0, 5_000_000], ids=["nothing spent", "half spent"])
@pytest.mark.parametrize("amount", [10_000_001, 50_000_000_000])
def test_an_amount_above_the_whole_cap_is_429_without_retry_after(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str], spent: int, amount: int
) -> None:
    """No wait makes it fit: it used to say Retry-After 86400 and, after that wait, refuse
    again with Retry-After 86400 (a client honouring the header looped forever). Still §8's
    429, now without the header and with a message saying why (strict contract mode checks
    the answer against PayoutCapExceeded)."""
    earn(svc_http, live_auth, amount + spent)
    if spent:
        withdraw(svc_http, live_auth, spent)
    before = svc_http.get("/_sandbox/state").data
    for _ in range(2):
        response = svc_http.post(
            "/api/withdrawals", json={"amount": amount, **DESTINATION}, headers=live_auth
        )
        assert response.status_code == 429
        assert "Retry-After" not in response.headers
        assert response.json == {  # type: ignore[comparison-overlap]
            "error": "Daily payout limit: this amount alone passes the cap of 10000000 "
            "(100,000.00 ETB) per rolling 24 hours, so no wait makes it fit: withdraw at most "
            "10000000 at a time"
        }
        assert svc_http.get("/_sandbox/state").data == before
        svc_sandbox.advance(timedelta(hours=24))  # the old Retry-After: still no use
        before = svc_http.get("/_sandbox/state").data
    withdraw(svc_http, live_auth, 10_000_000)  # the cap itself fits, once the window is clear


def test_rejected_withdrawals_leave_the_cap(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 20_000_000)
    big = withdraw(svc_http, live_auth, 10_000_000)
    withdraw(svc_http, live_auth, 10000, status=429)
    decide(svc_http, big["_id"], "reject")
    withdraw(svc_http, live_auth, 10000)


# --- reading --------------------------------------------------------------------------------------


def test_list_is_newest_first_with_pages_and_status(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 5_000_000)
    ids = []
    for amount in (10000, 1_500_000, 20000):
        ids.append(withdraw(svc_http, live_auth, amount)["_id"])
        svc_sandbox.advance(timedelta(seconds=10))
    page = listed(svc_http, live_auth)
    assert [w["_id"] for w in page["items"]] == ids[::-1]
    assert (page["total"], page["page"], page["limit"]) == (3, 1, 20)
    second = listed(svc_http, live_auth, "?page=2&limit=2")
    assert [w["_id"] for w in second["items"]] == [ids[0]]
    assert [w["_id"] for w in listed(svc_http, live_auth, "?status=reviewing")["items"]] == [ids[1]]
    assert listed(svc_http, live_auth, "?status=completed")["total"] == 0


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("?status=done", "status must be one of pending, reviewing, approved, rejected"),
        ("?page=0", "page must be an integer between 1 and 9007199254740991"),
        ("?limit=101", "limit must be an integer between 1 and 100"),
        ("?limit=x", "limit must be an integer between 1 and 100"),
    ],
)
def test_list_query_errors(
    svc_http: FlaskClient, live_auth: dict[str, str], query: str, message: str
) -> None:
    response = svc_http.get(f"/api/withdrawals{query}", headers=live_auth)
    assert response.status_code == 400
    assert message in response.json["error"]  # type: ignore[index]


def test_other_organizations_see_nothing(svc_http: FlaskClient, live_auth: dict[str, str]) -> None:
    earn(svc_http, live_auth, 50000)
    wid = withdraw(svc_http, live_auth, 10000)["_id"]
    other = new_production_org(svc_http)
    response = svc_http.get(f"/api/withdrawals/{wid}", headers=other)
    assert response.status_code == 404 and response.json == {"error": "Withdrawal not found"}
    assert listed(svc_http, other)["total"] == 0


@pytest.mark.parametrize(
    ("ref", "status"),
    [("0" * 24, 404), ("ABCDEF0123456789abcdef01", 400), ("abc", 400), ("g" * 24, 400)],
)
def test_get_by_id_errors(
    svc_http: FlaskClient, live_auth: dict[str, str], ref: str, status: int
) -> None:
    response = svc_http.get(f"/api/withdrawals/{ref}", headers=live_auth)
    assert response.status_code == status
    assert "error" in response.json  # type: ignore[operator]


# --- state ----------------------------------------------------------------------------------------


def test_export_and_restore_keep_withdrawals_keys_and_their_schedule(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 50000)
    first = withdraw(svc_http, live_auth, 10000, key="persist")
    state = svc_http.get("/_sandbox/state").json
    svc_http.post("/_sandbox/reset", json={})
    assert balance(svc_http, live_auth) == 0
    assert svc_http.put("/_sandbox/state", json=state).status_code == 200
    assert withdraw(svc_http, live_auth, 10000, key="persist", status=200) == first
    svc_sandbox.advance(timedelta(minutes=6))
    assert status_of(svc_http, live_auth, first["_id"]) == "completed"
    assert balance(svc_http, live_auth) == 40000


def test_an_imported_key_whose_withdrawal_is_missing_is_a_new_key(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    """state_references = skip takes a key record naming no withdrawal: no match, no 500."""
    svc_sandbox.settings.state_references = "skip"
    earn(svc_http, live_auth, 50000)
    withdraw(svc_http, live_auth, 10000, key="orphan")
    state: Any = svc_http.get("/_sandbox/state").json
    state["services"]["payouts"]["withdrawals"] = []
    assert svc_http.put("/_sandbox/state", json=state).status_code == 200
    again = withdraw(svc_http, live_auth, 10000, key="orphan")
    assert withdraw(svc_http, live_auth, 10000, key="orphan", status=200) == again
    assert listed(svc_http, live_auth)["total"] == 1


# --- concurrency against a real multi-threaded server ----------------------------------------


def post_json(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={**headers, "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def get_json(url: str, headers: dict[str, str]) -> Any:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
        return json.loads(r.read())


def in_parallel(count: int, work: Callable[[int], tuple[int, Any]]) -> list[tuple[int, Any]]:
    barrier = threading.Barrier(count)

    def run(index: int) -> tuple[int, Any]:
        barrier.wait(timeout=30)
        return work(index)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def test_twenty_threads_with_one_key_make_one_withdrawal(
    svc_server: RunningServer, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 100_000)
    headers = {**live_auth, "Idempotency-Key": "same-for-all"}
    url = f"{svc_server.url}/api/withdrawals"
    body = {"amount": 30000, **DESTINATION}
    results = in_parallel(20, lambda _: post_json(url, body, headers))
    statuses = sorted(status for status, _ in results)
    assert statuses == [200] * 19 + [201]
    assert len({answer["_id"] for _, answer in results}) == 1
    page = get_json(f"{svc_server.url}/api/withdrawals", live_auth)
    assert page["total"] == 1
    assert get_json(f"{svc_server.url}/api/balance", live_auth)["balanceMinor"] == 70_000


def test_twenty_threads_cannot_overdraw_the_balance(
    svc_server: RunningServer, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 100_000)
    url = f"{svc_server.url}/api/withdrawals"
    body = {"amount": 15000, **DESTINATION}  # 20 x 15000 = 300000 > 100000
    seen: list[int] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.append(get_json(f"{svc_server.url}/api/balance", live_auth)["balanceMinor"])

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        results = in_parallel(
            20, lambda i: post_json(url, body, {**live_auth, "Idempotency-Key": f"key-{i}"})
        )
    finally:
        stop.set()
        watcher.join(timeout=30)
    created = [answer for status, answer in results if status == 201]
    refused = [answer for status, answer in results if status == 400]
    assert len(created) == 6 and len(refused) == 14
    assert all("more than the withdrawable balance" in a["error"] for a in refused)
    final = get_json(f"{svc_server.url}/api/balance", live_auth)["balanceMinor"]
    assert final == 10_000
    assert seen and min(seen) >= 0


def test_a_sandbox_token_sees_no_production_withdrawals(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 50000)
    wid = withdraw(svc_http, live_auth, 10000)["_id"]
    org_id = org_id_of(svc_sandbox, live_auth)
    patch_org(svc_http, org_id, environment="sandbox")
    token = svc_http.post(f"/_sandbox/orgs/{org_id}/tokens", json={}).json["token"]  # type: ignore[index]
    sandbox_auth = {"Authorization": f"Bearer {token}"}
    assert listed(svc_http, sandbox_auth)["total"] == 0
    assert svc_http.get(f"/api/withdrawals/{wid}", headers=sandbox_auth).status_code == 404


def test_same_seed_same_requests_same_withdrawals(live_auth: dict[str, str]) -> None:
    from svc_sandbox.app import create_app

    def run() -> list[dict[str, Any]]:
        sandbox = Sandbox(clock_mode="frozen", seed=1, port=0)
        client = create_app(sandbox).test_client()
        earn(client, live_auth, 3_000_000)
        withdraw(client, live_auth, 10000, key="a")
        sandbox.advance(timedelta(minutes=1))
        withdraw(client, live_auth, 2_000_000)
        sandbox.advance(timedelta(hours=1))
        return listed(client, live_auth)["items"]  # type: ignore[no-any-return]

    assert run() == run()
