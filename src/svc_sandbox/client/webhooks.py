"""Receiving webhooks: ``verify_webhook`` and ``build_test_webhook`` over the one signing
implementation (``svc_sandbox.client.signing``, which the emulator signs with)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from svc_sandbox.client import arguments as check
from svc_sandbox.client.models import WebhookEvent
from svc_sandbox.client.signing import (
    DEFAULT_TOLERANCE,
    SignatureError,
    TestPayload,
    build_test_payload,
    verify,
)
from svc_sandbox.core.clock import wall_now
from svc_sandbox.core.validation import describe

TOO_OLD_OR_EARLY = "timestamp_outside_tolerance"
#: A webhook the emulator signed on a frozen or warped clock carries sandbox time, far from
#: the machine's (the plugin's clock starts at 2026-01-01): the refusal says what to do.
WALL_CLOCK_HINT = (
    " of this machine's clock; a webhook signed on a frozen or warped sandbox clock carries "
    "sandbox time: pass the sandbox time as now (GET /_sandbox/clock), or switch the window off"
)


def verify_webhook(
    raw_body: bytes | str,
    signature_header: str | bytes | None,
    secret: str,
    tolerance: int | None = DEFAULT_TOLERANCE,
    *,
    now: float | datetime | None = None,
) -> WebhookEvent:
    """The event of a webhook whose ``X-Svc-Signature`` checks out against the raw body.

    Raises ``SignatureError`` (``reason``: malformed_header, no_signature, signature_mismatch,
    timestamp_outside_tolerance, invalid_body) otherwise. ``tolerance`` is the replay window
    in seconds either side of ``now`` (default 300, spec §8; None switches it off); ``now``
    defaults to the system time (pass the sandbox clock's time in a frozen-clock test).
    """
    if not isinstance(raw_body, bytes | str):
        raise ValueError("raw_body must be the raw bytes (or text) of the request body")
    if not isinstance(secret, str) or not secret:
        raise ValueError("secret must be the endpoint's signing secret")
    if tolerance is not None and (
        isinstance(tolerance, bool)
        or not isinstance(tolerance, int | float)
        or not 0 <= tolerance < math.inf  # NaN compares False: it switched the window off
    ):
        raise ValueError("tolerance must be a finite number of seconds >= 0, or None")
    if (
        now is not None
        and not isinstance(now, datetime)
        and (isinstance(now, bool) or not isinstance(now, int | float) or not math.isfinite(now))
    ):
        raise ValueError("now must be a datetime or a finite number of unix seconds, or None")
    if isinstance(now, datetime):
        _aware("now", now)
    result = verify(
        signature_header,
        raw_body,
        secret,
        now=wall_now() if now is None else now,
        tolerance=tolerance,
    )
    if not result.valid:
        message = result.message
        if result.reason == TOO_OLD_OR_EARLY and now is None:
            message += WALL_CLOCK_HINT
        raise SignatureError(result.reason or "invalid", message)
    try:
        document = json.loads(raw_body)
    except (ValueError, RecursionError) as exc:  # nested past the decoder's depth too
        raise SignatureError("invalid_body", f"the signed body is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise SignatureError("invalid_body", "the signed body is not an event: not an object")
    try:
        return WebhookEvent.model_validate(document)
    except ValidationError as exc:
        # Worded as the emulator words a body (``id is required``), not pydantic's report.
        problem = describe(dict(exc.errors()[0]))
        raise SignatureError(
            "invalid_body", f"the signed body is not an event: {problem}"
        ) from None


def build_test_webhook(
    event_type: str,
    secret: str,
    *,
    data: dict[str, Any] | None = None,
    timestamp: int | datetime | None = None,
    event_id: str | None = None,
    environment: str = "sandbox",
    organization_id: str | None = None,
) -> TestPayload:
    """A signed webhook as the service would send it (body bytes and headers), to test a
    receiver; ``timestamp`` defaults to now."""
    if not isinstance(secret, str) or not secret:
        raise ValueError("secret must be a non-empty signing secret")
    _check_test_webhook(event_type, data, timestamp, environment, organization_id)
    return build_test_payload(
        event_type,
        secret,
        timestamp=wall_now() if timestamp is None else timestamp,
        data=data,
        event_id=event_id,
        environment=environment,
        organization_id=organization_id,
    )


def _check_test_webhook(
    event_type: Any, data: Any, timestamp: Any, environment: Any, organization_id: Any
) -> None:
    """The arguments of ``build_test_webhook`` as an event the service sends has them, so a
    receiver validating against the contract takes it and ``verify_webhook`` reads it: a
    ``NaN`` in ``data`` made a body that is no JSON, a negative ``timestamp`` a header no
    verifier reads."""
    if not isinstance(event_type, str) or not event_type:
        raise ValueError("event_type must be a non-empty string such as order.completed")
    if data is not None:
        if not isinstance(data, Mapping):
            raise ValueError(
                f"data must be a mapping of the event's fields, not {type(data).__name__}"
            )
        try:
            json.dumps(data, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"data must be JSON (no NaN or Infinity, no other types): {exc}"
            ) from None
    if (
        timestamp is not None
        and not isinstance(timestamp, datetime)
        and (isinstance(timestamp, bool) or not isinstance(timestamp, int) or timestamp < 0)
    ):
        raise ValueError("timestamp must be a datetime or whole unix seconds >= 0")
    if isinstance(timestamp, datetime):
        _aware("timestamp", timestamp)
    if environment not in ("sandbox", "production"):
        raise ValueError(f"environment must be sandbox or production, got {environment!r}")
    if organization_id is not None:
        check.hex_id("organization_id", organization_id)


def _aware(name: str, instant: datetime) -> None:
    """A naive datetime is refused: Python reads one as the machine's local time, the
    sandbox's clock as UTC (``svc_clock.set``); either reading silently shifted a webhook's
    time by the machine's offset on one side or the other."""
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(
            f"{name} must carry a time zone (a naive datetime is local time to Python, UTC "
            "to the sandbox: pass one with tzinfo=UTC), or be unix seconds"
        )
