"""Durations as the control plane and scenarios write them: seconds, or parts like ``1h30m``."""

from __future__ import annotations

from datetime import timedelta

import pytest

from svc_sandbox.core.durations import MAX_TEXT, parse_duration
from svc_sandbox.core.errors import ValidationFailed


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (90, timedelta(seconds=90)),
        (1.5, timedelta(seconds=1.5)),
        ("90s", timedelta(seconds=90)),
        (" 1h30m ", timedelta(hours=1, minutes=30)),
        ("1d2h3m4s5ms", timedelta(days=1, hours=2, minutes=3, seconds=4, milliseconds=5)),
        ("0.5m", timedelta(seconds=30)),
        ("1" * (MAX_TEXT - 1) + "s", None),  # the longest text read: refused for its size only
    ],
)
def test_durations_read(value: object, expected: timedelta | None) -> None:
    if expected is None:
        with pytest.raises(ValidationFailed, match="within must be at most 3155760000 seconds"):
            parse_duration(value, "within")
    else:
        assert parse_duration(value, "within") == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1" * (MAX_TEXT + 1), f"within must be at most {MAX_TEXT} characters"),
        ("1s x", "within must be a number of seconds or a string like '1h30m'"),
        ("x1s", "within must be a number of seconds or a string like '1h30m'"),
        (
            " 90 ",
            "within needs a unit, such as '90s' for seconds (ms, s, m, h or d), "
            "or the number 90 without quotes",
        ),
        ("", "within must be a number of seconds or a string like '1h30m'"),
        (True, "within must be a number of seconds or a string like '1h30m'"),
        (10**400, "within must be at most 3155760000 seconds"),
        (-(10**400), "within must not be negative"),
        (3155760001, "within must be at most 3155760000 seconds"),
        (float("inf"), "within must be a finite number of seconds"),
    ],
    ids=[
        "text too long",
        "text after",
        "text before",
        "no unit",
        "empty",
        "a boolean",
        "an int of 401 digits",
        "a negative int of 401 digits",
        "a century and a second",
        "infinity",
    ],
)
def test_durations_refused_name_the_field(value: object, message: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        parse_duration(value, "within")
    assert refused.value.message == message
