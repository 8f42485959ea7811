"""Rate limits on the sandbox clock: a token bucket and a fixed-window counter."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from svc_sandbox.core.durations import seconds_text
from svc_sandbox.core.errors import RateLimited


def limited(message: str, retry_after: int) -> RateLimited:
    """The refusal: ``message`` with ``{wait}`` replaced by the wait its Retry-After header
    gives, ``1 second`` or ``300 seconds`` (a person reading a page never sees the header)."""
    seconds = max(1, retry_after)
    return RateLimited(message.format(wait=seconds_text(seconds)), retry_after=seconds)


@dataclass
class Sweeps:
    """When a limiter next drops its idle keys: at most once per ``every`` of sandbox time,
    and at once when the clock was set back. Keys come from what requests name (a token, an
    IP, a client_id that may not exist), so a key left alone is dropped rather than kept for
    good; one sweep per period makes the cost per request constant (amortized)."""

    every: timedelta
    last: datetime | None = None

    def due(self, now: datetime) -> bool:
        if self.last is not None and self.last <= now < self.last + self.every:
            return False
        self.last = now
        return True


@dataclass
class TokenBucket:
    """``capacity`` requests at once, refilled at ``rate`` per second. A key whose bucket is
    full again is dropped (a new key starts full: nothing changes for it)."""

    capacity: float
    rate: float
    _levels: dict[str, tuple[float, datetime]] = field(default_factory=dict)
    _sweeps: Sweeps = field(init=False)

    def __post_init__(self) -> None:
        self._sweeps = Sweeps(timedelta(seconds=self.capacity / self.rate))

    def _sweep(self, now: datetime) -> None:
        if self._sweeps.due(now):
            self._levels = {
                key: (level, since)
                for key, (level, since) in self._levels.items()
                if level + max(0.0, (now - since).total_seconds()) * self.rate < self.capacity
            }

    def key_count(self) -> int:
        return len(self._levels)

    def take(self, key: str, now: datetime, message: str) -> None:
        self._sweep(now)
        level, since = self._levels.get(key, (self.capacity, now))
        elapsed = max(0.0, (now - since).total_seconds())
        level = min(self.capacity, level + elapsed * self.rate)
        if level < 1:
            self._levels[key] = (level, now)
            raise limited(message, math.ceil((1 - level) / self.rate))
        self._levels[key] = (level - 1, now)

    def clear(self) -> None:
        self._levels.clear()
        self._sweeps.last = None


@dataclass
class SlidingWindow:
    """At most ``limit`` requests per ``window_seconds`` per key (a rolling window). A key
    whose window is empty is dropped (a new key starts empty: nothing changes for it)."""

    limit: int
    window_seconds: float
    _hits: dict[str, list[datetime]] = field(default_factory=dict)
    _sweeps: Sweeps = field(init=False)

    def __post_init__(self) -> None:
        self._sweeps = Sweeps(timedelta(seconds=self.window_seconds))

    def _sweep(self, now: datetime) -> None:
        # A key's hits are in time order, so its last is its newest; one "in the future"
        # (the clock was set back) still counts.
        if self._sweeps.due(now):
            self._hits = {
                key: hits
                for key, hits in self._hits.items()
                if (now - hits[-1]).total_seconds() < self.window_seconds
            }

    def key_count(self) -> int:
        return len(self._hits)

    def take(self, key: str, now: datetime, message: str) -> None:
        self._sweep(now)
        # A hit "in the future" (the clock was set back) counts as made now: moving the clock
        # back must not lock a client out for longer than one window.
        hits = [
            min(t, now)
            for t in self._hits.get(key, [])
            if (now - t).total_seconds() < self.window_seconds
        ]
        if len(hits) >= self.limit:
            self._hits[key] = hits
            wait = self.window_seconds - (now - hits[0]).total_seconds()
            raise limited(message, math.ceil(wait))
        hits.append(now)
        self._hits[key] = hits

    def clear(self) -> None:
        self._hits.clear()
        self._sweeps.last = None


def rolling_cap_wait(
    recent: Iterable[tuple[datetime, int]],
    amount: int,
    cap: int,
    window: timedelta,
    now: datetime,
) -> int | None:
    """Seconds until ``amount`` more fits under ``cap`` per rolling ``window``, or None when
    it fits now. ``recent`` holds (time, amount) of what counts against the cap; what left
    the window is ignored, and the wait is until enough of the oldest leaves it.

    An ``amount`` above ``cap`` never fits, however long the wait: a ValueError, as a caller
    refuses it on its own without a ``Retry-After`` (a wait would only be refused again)."""
    if amount > cap:
        raise ValueError(f"{amount} alone passes the cap of {cap}: no wait makes it fit")
    inside = sorted((t, a) for t, a in recent if t > now - window)
    total = sum(a for _, a in inside) + amount
    if total <= cap:
        return None
    for at, spent in inside:
        total -= spent
        if total <= cap:
            return max(1, math.ceil((at + window - now).total_seconds()))
    raise AssertionError("unreachable: with nothing left inside the window, amount <= cap fits")
