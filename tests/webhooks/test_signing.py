"""Signatures as spec §6 writes them, checked against an independent HMAC computation."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from datetime import UTC, datetime

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import hmac as reference_hmac

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.webhooks.events import EVENT_TYPES
from svc_sandbox.webhooks.signing import (
    SIGNATURE_HEADER,
    build_test_payload,
    compute_signature,
    sign,
    verify,
)
from tests.webhooks.conftest import DOCUMENTED_DATA

SECRET = "whsec_test_secret"
BODY = b'{"id":"evt_1","type":"order.completed","data":{"sessionId":"cs_1"}}'
T = 1767225600  # 2026-01-01T00:00:00Z


def independent_v1(secret: str, t: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()


def test_header_is_t_and_v1_over_t_dot_raw_body() -> None:
    assert sign(BODY, SECRET, T) == f"t={T},v1={independent_v1(SECRET, T, BODY)}"


def test_a_datetime_timestamp_signs_its_unix_seconds() -> None:
    assert sign(BODY, SECRET, datetime(2026, 1, 1, tzinfo=UTC)) == sign(BODY, SECRET, T)


def test_a_fresh_signature_verifies() -> None:
    result = verify(sign(BODY, SECRET, T), BODY, SECRET, now=T + 10)
    assert (result.valid, result.reason, result.timestamp) == (True, None, T)


@pytest.mark.parametrize(
    ("age", "valid"), [(0, True), (300, True), (-300, True), (301, False), (-301, False)]
)
def test_tolerance_is_300_seconds_either_way(age: int, valid: bool) -> None:
    result = verify(sign(BODY, SECRET, T), BODY, SECRET, now=T + age)
    assert result.valid is valid
    if not valid:
        assert result.reason == "timestamp_outside_tolerance"


def test_tolerance_can_be_switched_off_or_changed() -> None:
    header = sign(BODY, SECRET, T)
    assert verify(header, BODY, SECRET, now=T + 86400, tolerance=None).valid
    assert not verify(header, BODY, SECRET, now=T + 61, tolerance=60).valid


def test_the_hmac_is_over_the_t_text_as_sent() -> None:
    """§6: "HMAC-SHA256 over the string `<t>.<raw body>`": the header's t as written, so a
    zero-padded t is signed over its padded text, not over its number."""
    padded = "0" + str(T)
    over_text = hmac.new(SECRET.encode(), f"{padded}.".encode() + BODY, hashlib.sha256)
    over_number = independent_v1(SECRET, T, BODY)
    accepted = verify(f"t={padded},v1={over_text.hexdigest()}", BODY, SECRET, now=T)
    refused = verify(f"t={padded},v1={over_number}", BODY, SECRET, now=T)
    assert (accepted.valid, accepted.timestamp) == (True, T)
    assert (refused.valid, refused.reason) == (False, "signature_mismatch")


def test_any_of_several_v1_values_may_match() -> None:
    good = compute_signature(SECRET, T, BODY)
    header = f"t={T},v1={'0' * 64},v0=ignored,v1={good}"
    assert verify(header, BODY, SECRET, now=T).valid


@pytest.mark.parametrize(
    ("body", "secret", "reason"),
    [
        (BODY + b" ", SECRET, "signature_mismatch"),
        (BODY, "whsec_other", "signature_mismatch"),
    ],
)
def test_a_changed_body_or_secret_fails(body: bytes, secret: str, reason: str) -> None:
    result = verify(sign(BODY, SECRET, T), body, secret, now=T)
    assert (result.valid, result.reason) == (False, reason)


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        (None, "malformed_header"),
        ("", "malformed_header"),
        ("garbage", "malformed_header"),
        ("v1=abc", "malformed_header"),
        ("t=abc,v1=abc", "malformed_header"),
        (f"t={T},t={T},v1=abc", "malformed_header"),
        (f"t={T}", "no_signature"),
        (f"t={T},v1=\u00e9\u00e9", "signature_mismatch"),
    ],
)
def test_malformed_headers_fail_with_a_reason(header: str | None, reason: str) -> None:
    result = verify(header, BODY, SECRET, now=T)
    assert (result.valid, result.reason) == (False, reason)
    assert result.message


def test_str_and_bytes_bodies_sign_alike() -> None:
    assert sign(BODY.decode(), SECRET, T) == sign(BODY, SECRET, T)


def test_empty_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="secret"):
        sign(BODY, "", T)


@pytest.mark.parametrize("event_type", [*EVENT_TYPES, "custom.thing"])
def test_test_payload_of_any_type_is_signed_and_verifies(event_type: str) -> None:
    payload = build_test_payload(event_type, SECRET, timestamp=T)
    header = payload.headers[SIGNATURE_HEADER]
    assert payload.headers["Content-Type"] == "application/json"
    assert header == f"t={T},v1={independent_v1(SECRET, T, payload.body)}"
    assert verify(header, payload.body, SECRET, now=T).valid
    document = json.loads(payload.body)
    assert document == payload.event
    assert document["type"] == event_type
    assert document["created"] == "2026-01-01T00:00:00.000Z"
    assert document["id"].startswith("evt_")


def test_test_payload_data_defaults_to_the_example_and_accepts_overrides() -> None:
    payload = build_test_payload(
        "order.completed", SECRET, timestamp=T, data={"amount": 250, "sessionId": "cs_x"}
    )
    data = payload.event["data"]
    assert data["amount"] == 250
    assert data["sessionId"] == "cs_x"
    assert data["paidAt"] == "2026-01-01T00:00:00.000Z"
    assert set(data) == DOCUMENTED_DATA["order.completed"]


def test_test_payload_is_the_same_for_the_same_arguments() -> None:
    first = build_test_payload("checkout.session.expired", SECRET, timestamp=T)
    again = build_test_payload("checkout.session.expired", SECRET, timestamp=T)
    assert (first.body, first.signature) == (again.body, again.signature)
    assert first.event["data"]["failure"]["code"] == "session_expired"


@pytest.mark.parametrize("t", ["9" * 4300, "1" * 13, "\u00b2", "\u0661\u0662"])
def test_a_t_that_is_not_a_short_ascii_number_is_a_malformed_header(t: str) -> None:
    result = verify(f"t={t},v1=abc", b"{}", "secret", now=0)
    assert (result.valid, result.reason) == (False, "malformed_header")


def test_signatures_with_secrets_taken_in_turns_each_match_their_own_secret() -> None:
    """Keyed HMACs are kept per secret and copied for each signature (client/signing.py):
    a signature made after another secret, or after the same secret signed another body,
    is still the HMAC of its own secret over its own ``<t>.<body>`` (checked with
    ``cryptography``'s HMAC, not the hmac module that signs)."""

    def expected(secret: str, t: int, body: bytes) -> str:
        mac = reference_hmac.HMAC(secret.encode(), hashes.SHA256())
        mac.update(f"{t}.".encode() + body)
        return mac.finalize().hex()

    turns = [("whsec_a", b'{"n":1}'), ("whsec_b", b'{"n":2}'), ("whsec_a", b'{"n":3}')] * 2
    for t, (secret, body) in enumerate(turns, start=1_700_000_000):
        assert compute_signature(secret, t, body) == expected(secret, t, body)


def test_an_attempt_sent_late_on_a_flowing_clock_is_signed_as_it_goes_out() -> None:
    """Attempts go out one at a time: on a scaled clock an attempt waiting behind a slow
    receiver left minutes of sandbox time after its due time, signed with that due time, and
    the documented check (300 s tolerance, §8) refused the genuine first delivery."""
    sandbox = Sandbox(clock_mode="scaled", clock_factor=2000, seed=1)
    org = sandbox.info()["organizations"][0]["id"]
    secret = "whsec_" + "s" * 32
    checks: list[tuple[bool, str | None]] = []

    def slow(body: bytes, headers: dict[str, str]) -> int:
        threading.Event().wait(0.3)  # 600 s of sandbox time
        return 500

    def verifying(body: bytes, headers: dict[str, str]) -> int:
        result = verify(headers["X-Svc-Signature"], body, secret, now=sandbox.now())
        checks.append((result.valid, result.reason))
        return 200 if result.valid else 400

    sandbox.add_webhook_receiver(org, slow, secret=secret)
    sandbox.add_webhook_receiver(org, verifying, secret=secret)
    http = create_app(sandbox).test_client()
    http.post("/_sandbox/events/trigger", json={"type": "order.completed", "orgId": org})
    try:
        http.post("/_sandbox/webhooks/flush", json={})
    finally:
        sandbox.stop()
    assert checks == [(True, None)]
