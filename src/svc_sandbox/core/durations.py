"""Parses the durations the control plane accepts: ``90``, ``"90s"``, ``"30m"``, ``"1h30m"``."""

from __future__ import annotations

import math
import re
from datetime import timedelta

from svc_sandbox.core.clock import MAX_ADVANCE
from svc_sandbox.core.errors import ValidationFailed

#: The longest duration accepted (a clock advance, a retry wait): 100 years.
MAX_SECONDS = MAX_ADVANCE.total_seconds()

_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(
    value: object, field: str = "duration", maximum: float = MAX_SECONDS
) -> timedelta:
    """A non-negative, finite duration of at most ``maximum`` seconds (400 naming ``field``)."""
    if isinstance(value, bool):
        raise ValidationFailed(f"{field} must be a number of seconds or a string like '1h30m'")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and value and _PART.sub("", value.strip()) == "":
        seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in _PART.findall(value))
    else:
        raise ValidationFailed(f"{field} must be a number of seconds or a string like '1h30m'")
    if not math.isfinite(seconds):
        raise ValidationFailed(f"{field} must be a finite number of seconds")
    if seconds < 0:
        raise ValidationFailed(f"{field} must not be negative")
    if seconds > maximum:
        raise ValidationFailed(f"{field} must be at most {maximum:.0f} seconds")
    return timedelta(seconds=seconds)
