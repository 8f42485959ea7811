"""The sandbox clock: the only place in the package that reads the system time.

Three modes:

* ``frozen``: time stands still until ``advance`` or ``set`` moves it.
* ``real``: time follows the wall clock (plus any advance).
* ``scaled``: time follows the wall clock multiplied by ``factor`` (plus any advance).

While the scheduler runs a due entry it *pins* the clock at the entry's due time, so that
everything the entry does is stamped with exactly that time. A pin holds for the thread that
made it only: a reader on another thread (the request journal, ``GET /_sandbox/clock``) never
sees a past due time a ticker is working through.

The clock keeps milliseconds, the precision of every time it shows: a time it is set to and a
flowing clock's reading are cut (floored) to the millisecond, so the time shown is the time used.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from enum import StrEnum

#: Told the new time whenever the clock is set (advance, set, run-due, reset, import).
ClockListener = Callable[[datetime], None]


class ClockListeners:
    """Who is told when a clock moves. Subscribing swaps in a new list (under a small lock of
    its own, so two threads subscribing at once both stay), so telling them never holds a
    lock and a listener may unsubscribe while being told."""

    def __init__(self) -> None:
        self._items: list[ClockListener] = []
        self._swap = threading.Lock()

    def subscribe(self, listener: ClockListener) -> Callable[[], None]:
        """Adds ``listener``; returns the call that removes it."""
        with self._swap:
            self._items = [*self._items, listener]

        def unsubscribe() -> None:
            with self._swap:
                self._items = [other for other in self._items if other is not listener]

        return unsubscribe

    def __bool__(self) -> bool:
        return bool(self._items)

    def tell(self, instant: datetime) -> None:
        for listener in self._items:
            listener(instant)


class ClockMode(StrEnum):
    FROZEN = "frozen"
    REAL = "real"
    SCALED = "scaled"


#: The sandbox clock stays within these instants, and one move forward within MAX_ADVANCE:
#: far enough for any scenario, far enough from datetime's year 9999 that adding a session's
#: lifetime, a retry wait or a century of advance can never overflow.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
MAX_ADVANCE = timedelta(days=36525)  # 100 years


#: The latest instant a record may hold: one made at LATEST carries times ahead of the clock
#: (a session's expiry, a retry's due time, a token's expiry), each well within one advance.
LATEST_RECORDED = LATEST + MAX_ADVANCE


def out_of_range(instant: datetime, latest: datetime = LATEST) -> str | None:
    """Why ``instant`` cannot be a sandbox time (or, with ``latest=LATEST_RECORDED``, a
    record's), or None when it can."""
    if not EARLIEST <= instant <= latest:
        return f"must be between {isoformat(EARLIEST)} and {isoformat(latest)}"
    return None


def wall_now() -> datetime:
    """The system time. Only this module may read it."""
    return datetime.now(UTC)


def monotonic() -> float:
    """A monotonic reading in seconds, for measuring durations (never for sandbox time)."""
    return time.monotonic()


def parse_instant(value: str) -> datetime:
    """Parses an ISO 8601 instant; a naive one is taken as UTC."""
    return as_utc(datetime.fromisoformat(value.replace("Z", "+00:00")))


def as_utc(instant: datetime) -> datetime:
    """``instant`` in UTC; a naive one is taken as UTC (as the control plane reads one)."""
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return instant.astimezone(UTC)


def to_millisecond(instant: datetime) -> datetime:
    """``instant`` cut (floored) to the millisecond: the clock's precision, as shown."""
    extra = instant.microsecond % 1000
    return instant - timedelta(microseconds=extra) if extra else instant


def seconds_delay(seconds: float) -> timedelta:
    """A wait of ``seconds`` at the clock's precision: cut (floored) to the millisecond, as
    ``to_millisecond`` cuts an instant. Every instant the sandbox schedules is then one its
    exports can write: a due time 10.0005 s away came back from an export as 10.000 s, half a
    millisecond early, and its work was dropped as not yet due."""
    wait = timedelta(seconds=seconds)  # to the microsecond, rounded: 0.57 s is 570000 us
    return wait - timedelta(microseconds=wait.microseconds % 1000)


def isoformat(instant: datetime) -> str:
    """The wire form of a timestamp: UTC, millisecond precision, ``Z`` suffix."""
    # isoformat is C and several times faster than strftime (every response has timestamps);
    # the clock's range (1970..9000) keeps the year at four digits, so the forms agree.
    return instant.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


class _Pins(threading.local):
    """Each thread's pin. A class default, not ``getattr(..., None)``: reading an attribute a
    thread never set builds and drops an AttributeError (0.7 µs of every ``now()``)."""

    instant: datetime | None = None


class Clock:
    def __init__(
        self,
        mode: ClockMode = ClockMode.FROZEN,
        start: datetime | None = None,
        factor: float = 1.0,
    ) -> None:
        if factor <= 0:
            raise ValueError("factor must be positive")
        self.mode = mode
        self.factor = factor if mode is ClockMode.SCALED else 1.0
        self._lock = threading.Lock()
        self._anchor_sandbox = to_millisecond(start if start is not None else wall_now())
        self._anchor_wall = monotonic()
        #: The pin of each thread (``pinned``): seen by that thread only.
        self._pins = _Pins()
        self.listeners = ClockListeners()

    def now(self) -> datetime:
        pinned = self._pins.instant
        if pinned is not None:
            return pinned
        if self.mode is ClockMode.FROZEN:
            return self._anchor_sandbox  # one attribute read: set() swaps it whole
        with self._lock:
            return self._flowing_now()

    def _flowing_now(self) -> datetime:
        if self.mode is ClockMode.FROZEN:
            return self._anchor_sandbox
        elapsed = (monotonic() - self._anchor_wall) * self.factor
        # A flowing clock stops at LATEST (a fast scaled clock would reach it in days), so that
        # adding any allowed duration to "now" never overflows datetime.
        return to_millisecond(min(self._anchor_sandbox + timedelta(seconds=elapsed), LATEST))

    def set(self, instant: datetime) -> None:
        """Moves the clock to ``instant`` cut to the millisecond (and lets it flow on from
        there outside frozen mode); every listener is told, whatever moved it."""
        instant = to_millisecond(instant)
        with self._lock:
            self._anchor_sandbox = instant
            self._anchor_wall = monotonic()
        self.listeners.tell(instant)

    def subscribe(self, listener: ClockListener) -> Callable[[], None]:
        """Calls ``listener(new time)`` after every ``set`` (under the state lock when the
        sandbox moves the clock: it must be quick and take no lock); returns the unsubscribe.
        The pytest plugin moves freezegun's clock along this way (testing/clock.py)."""
        return self.listeners.subscribe(listener)

    def pin(self, instant: datetime | None) -> datetime | None:
        """Holds ``now()`` at ``instant`` for the calling thread (None: lets it flow again);
        returns the pin it replaces, for the caller to put back. Other threads read the clock
        as it flows. A plain call, not only ``pinned``: an advance pins every due entry it
        runs (70,000 in a 24 h warp of 10,000 sessions), where a generator-based context
        manager cost 5% of the warp."""
        before = self._pins.instant
        self._pins.instant = instant
        return before

    @contextmanager
    def pinned(self, instant: datetime) -> Iterator[None]:
        """Holds ``now()`` at ``instant`` for the calling thread while the block runs (due work
        runs so, at its due time). Pins nest: the one before comes back after the block."""
        before = self.pin(instant)
        try:
            yield
        finally:
            self.pin(before)

    def describe(self) -> dict[str, object]:
        return {"now": isoformat(self.now()), "mode": self.mode.value, "factor": self.factor}
