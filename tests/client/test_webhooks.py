"""verify_webhook and build_test_webhook: the client checks with the same code the emulator
signs with, so a real delivery verifies and any change to body, secret or time does not."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from svc_sandbox.app import create_app
from svc_sandbox.client import SIGNATURE_HEADER, SignatureError, build_test_webhook, verify_webhook
from svc_sandbox.client import signing as client_signing
from svc_sandbox.client.signing import compute_signature
from svc_sandbox.contract.validation import commerce_contract
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.webhooks import signing as emulator_signing

SECRET = "whsec_client_test"
SENT_AT = 1_767_225_600  # 2026-01-01T00:00:00Z


def test_the_emulator_and_the_client_share_one_implementation() -> None:
    assert emulator_signing.sign is client_signing.sign
    assert emulator_signing.verify is client_signing.verify
    assert emulator_signing.build_test_payload is client_signing.build_test_payload


def test_a_test_webhook_verifies_into_its_event() -> None:
    payload = build_test_webhook("order.completed", SECRET, timestamp=SENT_AT, data={"amount": 777})
    event = verify_webhook(payload.body, payload.signature, SECRET, now=SENT_AT + 299)
    assert (event.type, event.data["amount"], event.object) == ("order.completed", 777, "event")
    assert payload.headers[SIGNATURE_HEADER] == payload.signature


@pytest.mark.parametrize(
    "event_type", ["order.created", "order.completed", "checkout.session.expired"]
)
def test_a_test_webhook_keeps_the_contract(event_type: str) -> None:
    """A receiver validating bodies against the contract takes a test webhook: every id has
    the contract's shape (the organization's 24 hex too)."""
    payload = build_test_webhook(event_type, SECRET, timestamp=SENT_AT)
    assert commerce_contract().validate_webhook(event_type, payload.event) == []
    chosen = build_test_webhook(event_type, SECRET, timestamp=SENT_AT, organization_id="a" * 24)
    assert chosen.event["organizationId"] == "a" * 24


def test_a_test_webhook_is_the_same_for_the_same_arguments() -> None:
    first = build_test_webhook("order.created", SECRET, timestamp=SENT_AT)
    assert build_test_webhook("order.created", SECRET, timestamp=SENT_AT).body == first.body
    later = build_test_webhook("order.created", SECRET, timestamp=SENT_AT + 1)
    assert later.event["organizationId"] != first.event["organizationId"]


@pytest.mark.parametrize(
    "other",
    [
        {"data": {"sessionId": "b" * 24}},
        {"data": {"amount": 9999}},
        {"environment": "production"},
        {"organization_id": "c" * 24},
    ],
    ids=["another session", "another amount", "another environment", "another organization"],
)
def test_two_different_test_webhooks_of_one_second_have_different_event_ids(
    other: dict[str, Any],
) -> None:
    """§6: a receiver ignores an event id it has processed, so a second, different test event
    made in the same second must not reuse the first one's id (it did: type and time only)."""
    first = build_test_webhook(
        "order.completed", SECRET, timestamp=SENT_AT, data={"sessionId": "a" * 24}
    )
    arguments: dict[str, Any] = {"data": {"sessionId": "a" * 24}, **other}
    second = build_test_webhook("order.completed", SECRET, timestamp=SENT_AT, **arguments)
    assert second.event["id"] != first.event["id"]
    again = build_test_webhook("order.completed", SECRET, timestamp=SENT_AT, **arguments)
    assert again.body == second.body
    assert (
        build_test_webhook(
            "order.completed", SECRET, timestamp=SENT_AT, event_id="evt_" + "d" * 24
        ).event["id"]
        == "evt_" + "d" * 24
    )


def test_the_example_expiry_says_what_a_real_expiry_says() -> None:
    """The example ``checkout.session.expired`` (and a triggered one) carries the failure a
    real expiry sends, message included."""
    sandbox = Sandbox(clock_mode="frozen", seed=3)
    http = create_app(sandbox).test_client()
    token = sandbox.info()["organizations"][0]["tokens"][0]["token"]
    created = http.post(
        "/api/checkout",
        json={"amount": 500, "description": "left to expire"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert created.status_code == 200
    sandbox.advance(timedelta(minutes=30))
    expiry = next(e for e in sandbox.events.events if e.type == "checkout.session.expired")
    real = json.loads(expiry.body())["data"]["failure"]
    example = build_test_webhook("checkout.session.expired", SECRET, timestamp=SENT_AT)
    triggered = http.post("/_sandbox/events/trigger", json={"type": "checkout.session.expired"})
    assert real == example.event["data"]["failure"] == triggered.json["event"]["data"]["failure"]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("body", "signature_mismatch"),
        ("secret", "signature_mismatch"),
        ("late", "timestamp_outside_tolerance"),
        ("early", "timestamp_outside_tolerance"),
        ("no header", "malformed_header"),
        ("no v1", "no_signature"),
    ],
)
def test_a_changed_webhook_is_refused_with_a_reason(change: str, reason: str) -> None:
    payload = build_test_webhook("order.created", SECRET, timestamp=SENT_AT)
    body, header, secret, now = payload.body, payload.signature, SECRET, SENT_AT
    if change == "body":
        body = body.replace(b"10000", b"99999")
    elif change == "secret":
        secret = "whsec_other"
    elif change == "late":
        now = SENT_AT + 301
    elif change == "early":
        now = SENT_AT - 301
    elif change == "no header":
        header = ""
    elif change == "no v1":
        header = f"t={SENT_AT}"
    with pytest.raises(SignatureError) as caught:
        verify_webhook(body, header, secret, now=now)
    assert caught.value.reason == reason


@pytest.mark.parametrize(
    ("now", "says"),
    [
        (SENT_AT + 301, "t is 301 s old; the tolerance is 300 s either way"),
        (SENT_AT - 301, "t is 301 s in the future; the tolerance is 300 s either way"),
    ],
)
def test_a_timestamp_outside_the_tolerance_says_which_way(now: int, says: str) -> None:
    payload = build_test_webhook("order.created", SECRET, timestamp=SENT_AT)
    with pytest.raises(SignatureError) as caught:
        verify_webhook(payload.body, payload.signature, SECRET, now=now)
    assert caught.value.message == says


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'{"type": "order.created"}', "the signed body is not an event: id is required"),
        (
            b'{"id": 5, "type": "order.created"}',
            "the signed body is not an event: id must be a string",
        ),
        (b"[1]", "the signed body is not an event: not an object"),
        # §6: "The event envelope exposes at least type and data" (it verified as data={}).
        (
            b'{"id": "evt_1", "type": "order.created"}',
            "the signed body is not an event: data is required",
        ),
    ],
)
def test_a_signed_body_that_is_no_event_is_named_in_the_emulators_words(
    body: bytes, says: str
) -> None:
    """Not pydantic's report (its lines and an errors.pydantic.dev address)."""
    header = f"t={SENT_AT},v1={compute_signature(SECRET, str(SENT_AT), body)}"
    with pytest.raises(SignatureError) as caught:
        verify_webhook(body, header, SECRET, now=SENT_AT)
    assert (caught.value.reason, caught.value.message) == ("invalid_body", says)


@pytest.mark.parametrize("argument", ["now", "timestamp"])
def test_a_naive_datetime_is_refused_whatever_the_machines_time_zone(argument: str) -> None:
    """Python reads a naive datetime as local time, the sandbox clock as UTC: at UTC+9 one
    reading made a genuine webhook "32400 s in the future", the other broke datetime.now()."""
    naive = datetime(2026, 1, 1, 0, 4)  # noqa: DTZ001 - the point of the test
    with pytest.raises(ValueError, match=f"^{argument} must carry a time zone"):
        if argument == "now":
            payload = build_test_webhook("order.created", SECRET, timestamp=SENT_AT)
            verify_webhook(payload.body, payload.signature, SECRET, now=naive)
        else:
            build_test_webhook("order.created", SECRET, timestamp=naive)
    aware = naive.replace(tzinfo=UTC)
    payload = build_test_webhook("order.created", SECRET, timestamp=aware)
    assert verify_webhook(payload.body, payload.signature, SECRET, now=aware).type


def test_a_signature_header_handed_over_as_bytes_is_read() -> None:
    """An ASGI server hands headers over as bytes: it raised a bare TypeError."""
    payload = build_test_webhook("order.created", SECRET, timestamp=SENT_AT)
    event = verify_webhook(payload.body, payload.signature.encode(), SECRET, now=SENT_AT)
    assert event.type == "order.created"
    with pytest.raises(SignatureError) as caught:
        verify_webhook(payload.body, "t=1,v1=é".encode(), SECRET, now=SENT_AT)
    assert (caught.value.reason, caught.value.message) == (
        "malformed_header",
        "the header is not ASCII",
    )


def test_the_tolerance_is_a_parameter() -> None:
    payload = build_test_webhook("order.created", SECRET, timestamp=SENT_AT)
    assert verify_webhook(payload.body, payload.signature, SECRET, 3600, now=SENT_AT + 3000)
    assert verify_webhook(payload.body, payload.signature, SECRET, None, now=SENT_AT + 10**6)


def test_a_signed_body_that_is_not_an_event_is_refused() -> None:
    body = b"[1, 2, 3]"
    header = client_signing.sign(body, SECRET, SENT_AT)
    with pytest.raises(SignatureError) as caught:
        verify_webhook(body, header, SECRET, now=SENT_AT)
    assert caught.value.reason == "invalid_body"


@pytest.mark.parametrize(
    ("args", "parameter"),
    [((b"{}", "t=1,v1=00", ""), "secret"), (({}, "t=1,v1=00", SECRET), "raw_body")],
)
def test_invalid_arguments_name_the_parameter(
    args: tuple[object, str, str], parameter: str
) -> None:
    with pytest.raises(ValueError, match=f"^{parameter}"):
        verify_webhook(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize("now", [None, SENT_AT + 400], ids=["machine's clock", "now given"])
def test_a_stale_timestamp_checked_on_the_machines_clock_says_how_to_check_sandbox_time(
    now: int | None,
) -> None:
    """A frozen-clock webhook (sandbox time 2026-01-01) checked against the machine's clock:
    the refusal says to pass the sandbox time; with ``now`` given it says only the age."""
    payload = build_test_webhook("order.created", SECRET, timestamp=SENT_AT)
    with pytest.raises(SignatureError) as refused:
        verify_webhook(payload.body, payload.signature, SECRET, now=now)
    assert refused.value.reason == "timestamp_outside_tolerance"
    hinted = "pass the sandbox time as now (GET /_sandbox/clock)" in refused.value.message
    assert hinted is (now is None)
    if now is not None:
        assert refused.value.message == "t is 400 s old; the tolerance is 300 s either way"


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"tolerance": float("nan")}, "tolerance must be a finite number"),
        ({"tolerance": "300"}, "tolerance must be a finite number"),
        ({"now": "2026-01-01T00:00:00Z"}, "now must be a datetime"),
        ({"now": float("inf")}, "now must be a datetime"),
    ],
)
def test_verify_webhook_refuses_a_window_or_time_it_cannot_read(
    arguments: dict[str, Any], says: str
) -> None:
    """NaN switched the replay window off (every comparison with it is False); "300" raised a
    bare TypeError."""
    built = build_test_webhook("order.completed", "whsec_1", timestamp=1_767_225_600)
    with pytest.raises(ValueError, match=f"^{says}"):
        verify_webhook(built.body, built.signature, "whsec_1", **arguments)


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"data": {"amount": float("nan")}}, "data must be JSON"),
        ({"data": [1]}, "data must be a mapping"),
        ({"timestamp": -5}, "timestamp must be"),
        ({"environment": "staging"}, "environment must be sandbox or production"),
        ({"organization_id": "zzz"}, "organization_id must be 24"),
    ],
)
def test_build_test_webhook_refuses_what_no_event_could_hold(
    arguments: dict[str, Any], says: str
) -> None:
    """A NaN made a body that is no JSON (and verify_webhook still took it); a negative
    timestamp a header no verifier reads."""
    with pytest.raises(ValueError, match=f"^{says}"):
        build_test_webhook("order.completed", "whsec_1", **arguments)


def test_a_signed_body_nested_past_the_decoders_depth_is_invalid_body() -> None:
    """It raised a bare RecursionError."""
    body = b"[" * 100_000 + b"]" * 100_000
    header = f"t=1767225600,v1={compute_signature('whsec_1', 1767225600, body)}"
    with pytest.raises(SignatureError) as caught:
        verify_webhook(body, header, "whsec_1", now=1_767_225_600)
    assert caught.value.reason == "invalid_body"
