"""Parses the durations the control plane accepts: ``90``, ``"90s"``, ``"30m"``, ``"1h30m"``."""

from __future__ import annotations

import math
import re
from datetime import timedelta

from svc_sandbox.core.clock import MAX_ADVANCE, seconds_delay
from svc_sandbox.core.errors import ValidationFailed


def seconds_text(seconds: int) -> str:
    """A wait as a person reads it: ``1 second``, ``150 seconds``."""
    return "1 second" if seconds == 1 else f"{seconds} seconds"


#: The longest duration accepted (a clock advance, a retry wait): 100 years.
MAX_SECONDS = MAX_ADVANCE.total_seconds()

_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)")
#: A number without its unit, as text (what a form field sends for "90"): refused, since text
#: names its unit, but the refusal says which unit to add.
_UNITLESS = re.compile(r"[0-9]+(?:\.[0-9]+)?")
#: The longest duration text read: "36525d" or "1h30m" are a few characters; an unbounded
#: string would cost time for nothing (and be read under the sandbox's lock).
MAX_TEXT = 64
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(
    value: object, field: str = "duration", maximum: float = MAX_SECONDS
) -> timedelta:
    """A non-negative, finite duration of at most ``maximum`` seconds (400 naming ``field``)."""
    if isinstance(value, bool):
        raise ValidationFailed(f"{field} must be a number of seconds or a string like '1h30m'")
    if isinstance(value, int):
        # Clamped first: float() of an int of hundreds of digits raises OverflowError. Past
        # the bound either way, it is then refused as negative or as too long.
        seconds = float(max(-1, min(value, math.floor(maximum) + 1)))
    elif isinstance(value, float):
        seconds = float(value)
    elif isinstance(value, str) and len(value) > MAX_TEXT:
        raise ValidationFailed(f"{field} must be at most {MAX_TEXT} characters")
    elif isinstance(value, str) and _UNITLESS.fullmatch(value.strip()):
        number = value.strip()
        raise ValidationFailed(
            f"{field} needs a unit, such as '{number}s' for seconds (ms, s, m, h or d), "
            f"or the number {number} without quotes"
        )
    elif isinstance(value, str) and (parts := _parts(value.strip())):
        seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)
    else:
        raise ValidationFailed(f"{field} must be a number of seconds or a string like '1h30m'")
    if not math.isfinite(seconds):
        raise ValidationFailed(f"{field} must be a finite number of seconds")
    if seconds < 0:
        raise ValidationFailed(f"{field} must not be negative")
    if seconds > maximum:
        raise ValidationFailed(f"{field} must be at most {maximum:.0f} seconds")
    return seconds_delay(seconds)


def _parts(text: str) -> list[tuple[str, str]]:
    """The (number, unit) parts of ``text``, or none when anything else is in it. Each part is
    matched where the previous one ended (``_PART.sub``/``findall`` retried every start of a
    run of digits: quadratic in its length)."""
    parts: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        part = _PART.match(text, position)
        if part is None:
            return []
        parts.append((part[1], part[2]))
        position = part.end()
    return parts
