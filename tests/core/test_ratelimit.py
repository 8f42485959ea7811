"""core/ratelimit.py: the rolling cap's wait (withdrawals, §8 "per rolling 24 hours"; wallet
sends) on the sandbox clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from svc_sandbox.core.ratelimit import rolling_cap_wait

NOW = datetime(2026, 1, 2, tzinfo=UTC)
DAY = timedelta(hours=24)


@pytest.mark.parametrize(
    ("recent", "amount", "wait"),
    [
        ([], 10, None),
        ([(NOW - timedelta(hours=1), 6)], 4, None),  # exactly the cap
        ([(NOW - timedelta(hours=12), 6)], 5, 12 * 3600),  # until the 6 leaves
        (
            [(NOW - timedelta(hours=20), 3), (NOW - timedelta(hours=2), 5)],
            6,
            22 * 3600,
        ),  # the 3 leaving is not enough
        ([(NOW - DAY, 10)], 10, None),  # exactly 24 h old no longer counts
    ],
)
def test_the_wait_is_until_enough_has_left_the_window(
    recent: list[tuple[datetime, int]], amount: int, wait: int | None
) -> None:
    assert rolling_cap_wait(recent, amount, 10, DAY, NOW) == wait


def test_an_amount_above_the_cap_has_no_wait() -> None:
    """It answered a full window (86400 s), after which the same amount was refused again;
    a caller refuses it on its own, without Retry-After (commerce/payouts.py)."""
    with pytest.raises(ValueError, match="11 alone passes the cap of 10: no wait makes it fit"):
        rolling_cap_wait([], 11, 10, DAY, NOW)
