"""core/ratelimit.py: the rolling cap's wait (withdrawals, §8 "per rolling 24 hours"; wallet
sends) on the sandbox clock, and the limiters dropping keys they no longer need."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from svc_sandbox.core.errors import RateLimited
from svc_sandbox.core.ratelimit import SlidingWindow, TokenBucket, rolling_cap_wait

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


# --- the limiters drop idle keys (audit: growth, a key kept for every name ever seen) ------------

SECOND = timedelta(seconds=1)


def test_a_window_drops_the_keys_whose_window_is_empty() -> None:
    window = SlidingWindow(limit=2, window_seconds=60)
    for n in range(500):
        window.take(f"client:unknown-{n}", NOW, "")
    window.take("client:busy", NOW + 30 * SECOND, "")
    assert window.key_count() == 501
    window.take("client:busy", NOW + 60 * SECOND, "")  # 60 s after the 500: their windows are empty
    assert window.key_count() == 1
    # The busy key was kept, and still counts: its third request inside 60 s is refused.
    with pytest.raises(RateLimited):
        window.take("client:busy", NOW + 61 * SECOND, "")


def test_a_window_keeps_hits_from_before_the_clock_was_set_back() -> None:
    window = SlidingWindow(limit=1, window_seconds=60)
    window.take("ip:a", NOW, "")
    window.take("ip:b", NOW - timedelta(hours=1), "")  # set back: a sweep runs, a is kept
    assert window.key_count() == 2
    with pytest.raises(RateLimited):
        window.take("ip:a", NOW - timedelta(hours=1), "")


def test_a_bucket_drops_the_keys_whose_bucket_is_full_again() -> None:
    bucket = TokenBucket(capacity=10, rate=2)  # full again 5 s after one take
    for n in range(300):
        bucket.take(f"token-{n}", NOW, "")
    for _ in range(10):
        bucket.take("busy", NOW + 4 * SECOND, "")
    assert bucket.key_count() == 301
    # 5 s after the 300: their buckets are full again; busy's was emptied 1 s ago and is kept.
    bucket.take("busy", NOW + 5 * SECOND, "")
    assert bucket.key_count() == 1
    bucket.take("busy", NOW + 5 * SECOND, "")  # the second of the 2 refilled in that second
    with pytest.raises(RateLimited):
        bucket.take("busy", NOW + 5 * SECOND, "")
