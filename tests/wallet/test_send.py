"""POST {wallet_base_url}/send (spec §4, §7, §8): each rule, its status and body, through real
tokens and both factors; every refusal leaves the wallet state exactly as it was."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.wallet.conftest import Connect
from tests.wallet.helpers import WALLET, balance, headers, send_body, user_id, wallets_state

SEND = WALLET + "/send"


def test_a_send_moves_money_and_answers_the_transfer(
    http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str]
) -> None:
    response = http.post(SEND, json=send_body("tigist", 12345, "order-0001"), headers=abebe)
    assert response.status_code == 201
    body = response.json
    assert body is not None and body["deduped"] is False
    transfer = body["transfer"]
    assert set(transfer) == {
        "id",
        "amountMinor",
        "currency",
        "recipientUserId",
        "status",
        "createdAt",
    }
    assert transfer["amountMinor"] == 12345
    assert transfer["currency"] == "ETB"
    assert transfer["recipientUserId"] == user_id(svc_sandbox, "tigist")
    assert transfer["status"] == "completed"
    assert transfer["createdAt"] == "2026-01-01T00:00:00.000Z"
    assert balance(http, "abebe") == 1000000 - 12345
    assert balance(http, "tigist") == 1000000 + 12345


def test_total_counts_what_came_in_and_never_goes_down(
    http: FlaskClient, connect: Connect, key: str, abebe: dict[str, str]
) -> None:
    http.post(SEND, json=send_body("tigist", 40000), headers=abebe)
    tigist = headers(connect("tigist"), key)
    assert http.get(WALLET, headers=tigist).json == {
        "currency": "ETB",
        "availableMinor": 1040000,
        "totalMinor": 1040000,
    }
    assert http.get(WALLET, headers=abebe).json == {
        "currency": "ETB",
        "availableMinor": 960000,
        "totalMinor": 1000000,
    }


def test_a_recipient_by_user_id(
    http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str]
) -> None:
    tigist = user_id(svc_sandbox, "tigist")
    body = {"recipientUserId": tigist, "amountMinor": 100, "idempotencyKey": "by-id-0001"}
    response = http.post(SEND, json=body, headers=abebe)
    assert response.status_code == 201
    assert response.json["transfer"]["recipientUserId"] == tigist  # type: ignore[index]


def test_a_repeated_key_returns_the_original_and_moves_no_money(
    http: FlaskClient, abebe: dict[str, str]
) -> None:
    first = http.post(SEND, json=send_body(key="repeat-001"), headers=abebe)
    again = http.post(SEND, json=send_body(key="repeat-001"), headers=abebe)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json == {"transfer": first.json["transfer"], "deduped": True}  # type: ignore[index]
    assert balance(http, "abebe") == 1000000 - 5000


def test_a_repeated_key_with_another_body_replays_the_original(
    http: FlaskClient, abebe: dict[str, str]
) -> None:
    first = http.post(SEND, json=send_body("tigist", 5000, "repeat-002"), headers=abebe)
    other = http.post(SEND, json=send_body("dawit", 9000, "repeat-002"), headers=abebe)
    assert other.status_code == 200
    assert other.json == {"transfer": first.json["transfer"], "deduped": True}  # type: ignore[index]
    assert balance(http, "dawit") == 1000000


def test_the_reject_setting_refuses_another_body_with_422(
    http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str]
) -> None:
    svc_sandbox.settings.wallet_key_reuse = "reject"
    http.post(SEND, json=send_body("tigist", 5000, "repeat-003"), headers=abebe)
    before = wallets_state(svc_sandbox)
    other = http.post(SEND, json=send_body("tigist", 5001, "repeat-003"), headers=abebe)
    assert other.status_code == 422
    assert other.json["error"] == "idempotency_key_reused"  # type: ignore[index]
    assert wallets_state(svc_sandbox) == before
    same = http.post(SEND, json=send_body("tigist", 5000, "repeat-003"), headers=abebe)
    assert same.status_code == 200


def test_a_repeat_still_answers_after_the_money_ran_out(
    http: FlaskClient, abebe: dict[str, str]
) -> None:
    first = http.post(SEND, json=send_body(key="repeat-004"), headers=abebe)
    http.put("/_sandbox/wallets/abebe/balance", json={"availableMinor": 0})
    again = http.post(SEND, json=send_body(key="repeat-004"), headers=abebe)
    assert again.status_code == 200
    assert again.json["transfer"] == first.json["transfer"]  # type: ignore[index]


def test_a_key_is_per_user(
    http: FlaskClient, connect: Connect, key: str, abebe: dict[str, str]
) -> None:
    tigist = headers(connect("tigist"), key)
    a = http.post(SEND, json=send_body("dawit", 100, "shared-key"), headers=abebe)
    b = http.post(SEND, json=send_body("dawit", 100, "shared-key"), headers=tigist)
    assert (a.status_code, b.status_code) == (201, 201)
    assert a.json["transfer"]["id"] != b.json["transfer"]["id"]  # type: ignore[index]


def test_a_key_is_per_app(
    http: FlaskClient, svc_sandbox: Sandbox, connect: Connect, key: str, abebe: dict[str, str]
) -> None:
    from tests.wallet.helpers import App, seeded_app

    seeded = seeded_app(svc_sandbox)
    created = http.post(
        "/_sandbox/apps",
        json={
            "name": "Second wallet app",
            "redirectUris": [seeded.redirect_uri],
            "scopes": ["openid", "wallet:read", "wallet:send"],
            "clientType": "confidential",
        },
    )
    assert created.status_code == 201, created.json
    second = created.json
    assert second is not None
    approved = http.post(f"/_sandbox/apps/{second['clientId']}/approve-wallet-send", json={})
    assert approved.status_code == 200, approved.json
    app = App(second["clientId"], second["clientSecret"], seeded.redirect_uri)
    other_app = headers(connect("abebe", app=app), key)
    a = http.post(SEND, json=send_body(key="per-app-01"), headers=abebe)
    b = http.post(SEND, json=send_body(key="per-app-01"), headers=other_app)
    assert (a.status_code, b.status_code) == (201, 201)
    assert balance(http, "abebe") == 1000000 - 10000


# --- refusals -----------------------------------------------------------------------------


def refused(
    http: FlaskClient,
    sandbox: Sandbox,
    sender: dict[str, str],
    body: Any,
    status: int,
    error: str,
    **kwargs: Any,
) -> Any:
    """Sends; checks status and code, and that the wallet state did not move."""
    before = wallets_state(sandbox)
    response = http.post(SEND, json=body, headers=sender, **kwargs)
    assert response.status_code == status, response.json
    assert response.json["error"] == error
    assert response.json["message"]
    assert wallets_state(sandbox) == before
    return response


def test_self_transfer(http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str]) -> None:
    refused(http, svc_sandbox, abebe, send_body("abebe"), 400, "self_transfer")
    own_id = {
        "recipientUserId": user_id(svc_sandbox, "abebe"),
        "amountMinor": 100,
        "idempotencyKey": "self-0002",
    }
    refused(http, svc_sandbox, abebe, own_id, 400, "self_transfer")


@pytest.mark.parametrize(
    "recipient",
    [{"recipientHandle": "nobody"}, {"recipientUserId": "0" * 24}, {"recipientUserId": "xyz"}],
)
def test_recipient_not_found(
    http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str], recipient: dict[str, str]
) -> None:
    body = {**recipient, "amountMinor": 100, "idempotencyKey": "nobody-01"}
    refused(http, svc_sandbox, abebe, body, 404, "recipient_not_found")


def test_kyc_required(http: FlaskClient, svc_sandbox: Sandbox, connect: Connect, key: str) -> None:
    dawit = headers(connect("dawit"), key)  # seeded with KYC not started
    refused(http, svc_sandbox, dawit, send_body("tigist"), 403, "kyc_required")


def test_insufficient_funds(http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str]) -> None:
    http.put("/_sandbox/wallets/abebe/balance", json={"availableMinor": 4999})
    refused(http, svc_sandbox, abebe, send_body(amount=5000), 402, "insufficient_funds")
    assert http.post(SEND, json=send_body(amount=4999), headers=abebe).status_code == 201
    assert balance(http, "abebe") == 0


def test_daily_cap_per_user_and_app_with_retry_after(
    http: FlaskClient, svc_sandbox: Sandbox, connect: Connect, key: str, abebe: dict[str, str]
) -> None:
    http.post("/_sandbox/wallets/abebe/fund", json={"amountMinor": 10_000_000})
    for i in range(5):
        if i == 2:
            svc_sandbox.advance(timedelta(minutes=30))
        body = send_body(amount=1_000_000, key=f"cap-{i:05}")
        assert http.post(SEND, json=body, headers=abebe).status_code == 201
    over = send_body(amount=100, key="cap-over")
    response = refused(http, svc_sandbox, abebe, over, 429, "daily_cap_exceeded")
    # Room comes back when the first two leave the window: 24 h after them, 23.5 h from now.
    assert response.headers["Retry-After"] == str(23 * 3600 + 1800)
    svc_sandbox.advance(timedelta(hours=23, minutes=29, seconds=59))
    fresh = headers(connect("abebe"), key)  # the first token expired meanwhile
    refused(http, svc_sandbox, fresh, over, 429, "daily_cap_exceeded")
    svc_sandbox.advance(timedelta(seconds=1))
    assert http.post(SEND, json=over, headers=fresh).status_code == 201


def test_the_cap_counts_again_what_left_its_window_when_the_clock_is_set_back(
    http: FlaskClient, svc_sandbox: Sandbox, connect: Connect, key: str, abebe: dict[str, str]
) -> None:
    """The live answer is the one an import of the same state gives: a transfer that left the
    window (the clock went on 25 h) is inside it again once the clock is set back."""
    http.post("/_sandbox/wallets/abebe/fund", json={"amountMinor": 10_000_000})
    started = svc_sandbox.now()
    for i in range(5):
        body = send_body(amount=1_000_000, key=f"back-{i:05}")
        assert http.post(SEND, json=body, headers=abebe).status_code == 201
    svc_sandbox.advance(timedelta(hours=25))
    later = headers(connect("abebe"), key)
    assert (
        http.post(SEND, json=send_body(amount=100, key="back-later"), headers=later).status_code
        == 201
    )
    moved = http.post(
        "/_sandbox/clock/set", json={"now": (started + timedelta(hours=1)).isoformat()}
    )
    assert moved.status_code == 200, moved.json
    again = headers(connect("abebe"), key)
    over = send_body(amount=1_000_000, key="back-over")
    refused(http, svc_sandbox, again, over, 429, "daily_cap_exceeded")
    # And the clock on again: they leave the window once more.
    svc_sandbox.advance(timedelta(hours=24))
    fresh = headers(connect("abebe"), key)
    assert http.post(SEND, json=over, headers=fresh).status_code == 201


def test_the_order_kyc_before_recipient_before_funds(
    http: FlaskClient, svc_sandbox: Sandbox, connect: Connect, key: str
) -> None:
    dawit = headers(connect("dawit"), key)
    http.put("/_sandbox/wallets/dawit/balance", json={"availableMinor": 0})
    refused(http, svc_sandbox, dawit, send_body("nobody"), 403, "kyc_required")
    abebe = headers(connect("abebe"), key)
    http.put("/_sandbox/wallets/abebe/balance", json={"availableMinor": 0})
    refused(http, svc_sandbox, abebe, send_body("nobody"), 404, "recipient_not_found")
    refused(http, svc_sandbox, abebe, send_body("abebe"), 400, "self_transfer")
    refused(http, svc_sandbox, abebe, send_body("tigist"), 402, "insufficient_funds")


# --- bad input: 400 {error} naming the problem, never a ledger entry ------------------------


@pytest.mark.parametrize(
    ("amount", "error"),
    [
        (99, "amount_too_small"),
        (0, "amount_too_small"),
        (-500, "amount_too_small"),
        (1_000_001, "amount_too_large"),
        (10**30, "amount_too_large"),
        (100.0, "invalid_amount"),
        (150.5, "invalid_amount"),
        ("500", "invalid_amount"),
        (True, "invalid_amount"),
        (None, "invalid_amount"),
        ([500], "invalid_amount"),
        ({"minor": 500}, "invalid_amount"),
    ],
)
def test_amount_rules(
    http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str], amount: Any, error: str
) -> None:
    body = {"recipientHandle": "tigist", "amountMinor": amount, "idempotencyKey": "amount-01"}
    refused(http, svc_sandbox, abebe, body, 400, error)


@pytest.mark.parametrize(
    ("digits", "error"),
    [
        ("9" * 4300, "amount_too_large"),
        ("9" * 4301, "amount_too_large"),  # past Python's int conversion limit: still JSON
        ("1" + "0" * 20_000, "amount_too_large"),
        ("-" + "9" * 4301, "amount_too_small"),
    ],
)
def test_an_amount_of_any_length_is_out_of_bounds_not_invalid_json(
    http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str], digits: str, error: str
) -> None:
    raw = '{"recipientHandle": "tigist", "amountMinor": %s, "idempotencyKey": "huge-0001"}'
    answer = refused(
        http,
        svc_sandbox,
        abebe,
        None,
        400,
        error,
        data=raw % digits,
        content_type="application/json",
    )
    assert answer.json["message"] in (
        "amountMinor must be at most 1000000 (10,000.00 ETB)",
        "amountMinor must be at least 100 (1.00 ETB)",
    )


def test_amount_bounds_are_inclusive(http: FlaskClient, abebe: dict[str, str]) -> None:
    assert (
        http.post(SEND, json=send_body(amount=100, key="min-0001"), headers=abebe).status_code
        == 201
    )
    big = send_body(amount=1_000_000, key="max-0001")
    http.post("/_sandbox/wallets/abebe/fund", json={"amountMinor": 1_000_000})
    assert http.post(SEND, json=big, headers=abebe).status_code == 201


def test_missing_amount_is_invalid_amount(
    http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str]
) -> None:
    body = {"recipientHandle": "tigist", "idempotencyKey": "amount-02"}
    refused(http, svc_sandbox, abebe, body, 400, "invalid_amount")


@pytest.mark.parametrize(
    "idempotency_key",
    [
        None,
        "",
        "short",
        "1234567",
        12345678,
        ["abcdefgh"],
        " leading-space",
        "tab\there1",
        "x" * 256,
        "ключ-ключ-ключ",
    ],
)
def test_idempotency_key_rules(
    http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str], idempotency_key: Any
) -> None:
    body = {"recipientHandle": "tigist", "amountMinor": 100}
    if idempotency_key is not None:
        body["idempotencyKey"] = idempotency_key
    refused(http, svc_sandbox, abebe, body, 400, "invalid_idempotency_key")


def test_an_eight_character_key_is_enough(http: FlaskClient, abebe: dict[str, str]) -> None:
    assert http.post(SEND, json=send_body(key="12345678"), headers=abebe).status_code == 201


@pytest.mark.parametrize(
    "recipient",
    [
        {},
        {"recipientHandle": "tigist", "recipientUserId": "0" * 24},
        {"recipientHandle": None},
        {"recipientHandle": ""},
        {"recipientHandle": 42},
        {"recipientHandle": ["tigist"]},
        {"recipientHandle": "t" * 65},
        {"recipientUserId": "f" * 10_000},
        {"recipientHandle": "tigist", "recipientUserId": None},
    ],
)
def test_exactly_one_recipient_of_sane_length(
    http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str], recipient: dict[str, Any]
) -> None:
    body = {**recipient, "amountMinor": 100, "idempotencyKey": "recipient-1"}
    refused(http, svc_sandbox, abebe, body, 400, "invalid_recipient")


@pytest.mark.parametrize(
    "raw",
    [
        b"{",
        b"not json",
        b'{"recipientHandle": "tigist",}',
        b"\xff\xfe\x00{",
        b'{"recipientHandle": "\xc3\x28", "amountMinor": 100, "idempotencyKey": "utf8-0001"}',
        b"[]",
        b'"a string"',
        b"123",
        b"null",
        b"",
        b"NaN",
    ],
)
def test_malformed_bodies(
    http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str], raw: bytes
) -> None:
    refused(
        http,
        svc_sandbox,
        abebe,
        None,
        400,
        "invalid_request",
        data=raw,
        content_type="application/json",
    )


def test_an_unknown_field_is_named(
    http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str]
) -> None:
    body = {**send_body(), "recipientHandel": "tigist"}
    response = refused(http, svc_sandbox, abebe, body, 400, "invalid_request")
    assert "recipientHandel" in response.json["message"]


def test_another_content_type_is_415(
    http: FlaskClient, svc_sandbox: Sandbox, abebe: dict[str, str]
) -> None:
    before = wallets_state(svc_sandbox)
    response = http.post(SEND, data=b'{"a": 1}', headers={**abebe, "Content-Type": "text/plain"})
    assert response.status_code == 415
    assert response.json["error"] == "unsupported_media_type"  # type: ignore[index]
    assert wallets_state(svc_sandbox) == before
