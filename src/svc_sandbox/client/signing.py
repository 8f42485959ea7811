"""Webhooks on the wire (spec §6): the event envelope, its bytes, and its signature
``X-Svc-Signature: t=<unix seconds>,v1=<hex>``.

``v1`` is HMAC-SHA256, keyed with the endpoint's signing secret, over the string
``<t>.<raw body>``. This is the one implementation: the emulator (``webhooks/events.py``,
``webhooks/delivery.py``) signs with it and the client (``verify_webhook``,
``build_test_webhook``) checks with it. Everything here is a pure function over the standard
library: the time is always passed in, so the same inputs give the same header, and importing
it loads no server code.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from svc_sandbox.commerce.failures import FAILURE_MESSAGES, SESSION_EXPIRED
from svc_sandbox.core.clock import isoformat


def envelope(
    event_id: str,
    type_: str,
    created: datetime,
    environment: str,
    org_id: str,
    data: dict[str, Any],
) -> dict[str, Any]:
    """The JSON document a receiver gets (see docs/webhooks.md, The envelope)."""
    return {
        "id": event_id,
        "object": "event",
        "type": type_,
        "created": isoformat(created),
        "environment": environment,
        "organizationId": org_id,
        "data": data,
    }


#: One encoder for every body (``json.dumps`` with options builds a new one per call).
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def encode(document: dict[str, Any]) -> bytes:
    """The exact bytes sent (and signed): compact JSON, keys in envelope order, UTF-8."""
    return _COMPACT.encode(document).encode("utf-8")


def sample_data(type_: str, session_id: str, order_id: str, at: datetime) -> dict[str, Any]:
    """Example ``data`` of each event type, shaped like what checkout emits (docs/webhooks.md)."""
    if type_ == "checkout.session.expired":
        return {
            "sessionId": session_id,
            "failure": {"code": SESSION_EXPIRED, "message": FAILURE_MESSAGES[SESSION_EXPIRED]},
        }
    data: dict[str, Any] = {
        "sessionId": session_id,
        "orderId": order_id,
        "metadata": {},
        "description": "Test payment",
        "amount": 10000,
        "currency": "ETB",
        "customerExternalId": None,
    }
    if type_ == "order.completed":
        data["paidAt"] = isoformat(at)
    return data


SIGNATURE_HEADER = "X-Svc-Signature"
SCHEME = "v1"
#: Replay tolerance of the client library (spec §8): 300 seconds either side of ``now``.
DEFAULT_TOLERANCE = 300
#: Unix seconds fit in 12 digits until year 33658; a longer t= is malformed.
MAX_TIMESTAMP_DIGITS = 12


class SignatureError(ValueError):
    """A header that cannot be verified; ``reason`` is a stable code, the message explains."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class Verification:
    valid: bool
    #: None when valid, else one of: malformed_header, no_signature, timestamp_outside_tolerance,
    #: signature_mismatch.
    reason: str | None
    message: str
    timestamp: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "reason": self.reason,
            "message": self.message,
            "timestamp": self.timestamp,
        }


@dataclass(frozen=True)
class TestPayload:
    event: dict[str, Any]
    body: bytes
    headers: dict[str, str]

    @property
    def signature(self) -> str:
        return self.headers[SIGNATURE_HEADER]


def _raw(body: bytes | str) -> bytes:
    return body.encode("utf-8") if isinstance(body, str) else body


def _seconds(instant: float | datetime) -> float:
    return instant.timestamp() if isinstance(instant, datetime) else float(instant)


def compute_signature(secret: str, timestamp: int | str, body: bytes | str) -> str:
    """The hex ``v1`` value of ``body`` signed at ``timestamp`` with ``secret``; a ``str``
    timestamp is signed as written (a header's ``t`` text, leading zeros and all)."""
    if not secret:
        raise ValueError("secret must not be empty")
    signer = _keyed(secret).copy()
    signer.update(str(timestamp).encode("ascii") + b"." + _raw(body))
    return signer.hexdigest()


@lru_cache(maxsize=64)
def _keyed(secret: str) -> hmac.HMAC:
    """An HMAC-SHA256 keyed with ``secret`` and fed nothing, to ``copy``: with OpenSSL 3,
    keying (fetching the digest, padding the key) costs more than hashing a webhook body, and
    a warp signs thousands of attempts with a handful of secrets. Only copies are fed."""
    return hmac.new(secret.encode("utf-8"), digestmod=hashlib.sha256)


def sign(body: bytes | str, secret: str, timestamp: int | datetime) -> str:
    """The ``X-Svc-Signature`` value for ``body`` sent at ``timestamp`` (unix seconds)."""
    t = int(_seconds(timestamp))
    return f"t={t},{SCHEME}={compute_signature(secret, t, body)}"


def parse_header(header: str) -> tuple[int, list[str]]:
    """Splits a header into its timestamp and every ``v1`` value (other schemes are ignored)."""
    text, signatures = _header_parts(header)
    return int(text), signatures


def _header_parts(header: str) -> tuple[str, list[str]]:
    """The header's ``t`` as written (spec §6 signs ``<t>.<raw body>``: the text that was
    sent, so ``t=017...`` is checked over ``017...``, not over its number) and its ``v1``s."""
    timestamp: str | None = None
    signatures: list[str] = []
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep:
            raise SignatureError("malformed_header", f"header part {part.strip()!r} is not k=v")
        if key == "t":
            # ASCII digits, few enough to parse: isdigit() alone takes "²" and Arabic-Indic
            # digits, and int() of 4,300+ digits raises ValueError.
            digits = value.isascii() and value.isdigit() and len(value) <= MAX_TIMESTAMP_DIGITS
            if timestamp is not None or not digits:
                raise SignatureError(
                    "malformed_header",
                    f"header must carry one t= of at most {MAX_TIMESTAMP_DIGITS} digits",
                )
            timestamp = value
        elif key == SCHEME:
            signatures.append(value.strip().lower())
    if timestamp is None:
        raise SignatureError("malformed_header", "header has no t= timestamp")
    if not signatures:
        raise SignatureError("no_signature", f"header has no {SCHEME}= signature")
    return timestamp, signatures


def _header_text(header: str | bytes) -> str:
    """The header as text: an ASGI server hands headers over as bytes."""
    if isinstance(header, str):
        return header
    if isinstance(header, bytes | bytearray):
        try:
            return bytes(header).decode("ascii")
        except UnicodeDecodeError:
            raise SignatureError("malformed_header", "the header is not ASCII") from None
    raise SignatureError(
        "malformed_header", f"the header must be text or bytes, not {type(header).__name__}"
    )


def verify(
    header: str | bytes | None,
    body: bytes | str,
    secret: str,
    *,
    now: float | datetime,
    tolerance: int | None = DEFAULT_TOLERANCE,
) -> Verification:
    """Checks ``header`` against the raw ``body`` and ``secret`` at time ``now``.

    Valid when some ``v1`` value matches (constant-time comparison; several are accepted, as
    during a secret rotation) and ``t`` is within ``tolerance`` seconds of ``now`` either way
    (``None`` switches the time check off).
    """
    try:
        if not header:
            raise SignatureError("malformed_header", f"{SIGNATURE_HEADER} header is missing")
        text, candidates = _header_parts(_header_text(header))
    except SignatureError as error:
        return Verification(False, error.reason, error.message, None)
    timestamp = int(text)
    expected = compute_signature(secret, text, body)
    matched = False
    for candidate in candidates:
        matched |= hmac.compare_digest(candidate.encode("ascii", "replace"), expected.encode())
    if not matched:
        return Verification(
            False, "signature_mismatch", "no v1 signature matches the body and secret", timestamp
        )
    age = _seconds(now) - timestamp
    if tolerance is not None and abs(age) > tolerance:
        when = f"{int(age)} s old" if age > 0 else f"{int(-age)} s in the future"
        return Verification(
            False,
            "timestamp_outside_tolerance",
            f"t is {when}; the tolerance is {tolerance} s either way",
            timestamp,
        )
    return Verification(True, None, "signature verified", timestamp)


def build_test_payload(
    event_type: str,
    secret: str,
    *,
    timestamp: int | datetime,
    data: dict[str, Any] | None = None,
    event_id: str | None = None,
    environment: str = "sandbox",
    organization_id: str | None = None,
) -> TestPayload:
    """A signed webhook for any event type, as the sandbox would send it at ``timestamp``.

    ``data`` defaults to the example data of the type (docs/webhooks.md); given fields replace
    the example's. Ids not given are derived in the shapes the contract gives them, so the
    result is the same for the same arguments and a receiver validating against the contract
    takes it: the example's ids and the organization's from the type and time, the event's id
    from everything else the event says (type, time, environment, organization, data), so two
    different events never share one (a receiver drops an event id it has processed, §6).
    """
    if not event_type:
        raise ValueError("event_type must not be empty")
    t = int(_seconds(timestamp))
    created = datetime.fromtimestamp(t, UTC)
    digest = hashlib.sha256(f"{event_type}:{t}".encode()).hexdigest()
    order_digest = hashlib.sha256(digest.encode()).hexdigest()
    example = sample_data(event_type, digest[24:48], order_digest[:24], created)
    document = envelope(
        "",
        event_type,
        created,
        environment,
        organization_id or order_digest[24:48],
        {**example, **(data or {})},
    )
    document["id"] = event_id or "evt_" + hashlib.sha256(encode(document)).hexdigest()[:24]
    body = encode(document)
    headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sign(body, secret, t)}
    return TestPayload(event=document, body=body, headers=headers)
