"""``svc_clock``: the sandbox clock for a test, optionally moving freezegun's clock along."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from svc_sandbox.core.clock import parse_instant
from svc_sandbox.core.durations import parse_duration
from svc_sandbox.testing.emulator import Emulator

FREEZEGUN_MISSING = (
    "the svc_freezegun marker and svc_clock.follow_with_freezegun() need freezegun: "
    "pip install freezegun"
)


class FreezegunFollower:
    """Python's own clock (``datetime.now()``, ``time.time()``) frozen at the sandbox time and
    moved with the sandbox clock. It listens to the emulator's clock (``on_clock_move``), so
    every move counts whatever made it: ``svc_clock``, ``svc_webhooks.wait_for``,
    ``svc_sandbox.advance``, a control-plane request, a latency fault (in-process; with
    ``--svc-url``, the moves made through the fixtures).

    Made (freezegun imported: a missing one is a clear error) before ``start``, which the
    plugin calls just before the test's body: a module imported while freezegun runs sees
    its fake ``datetime`` class, which pydantic models cannot take, so fixtures are set up
    first."""

    def __init__(self, emulator: Emulator) -> None:
        try:
            from freezegun import freeze_time
        except ModuleNotFoundError:
            raise ModuleNotFoundError(FREEZEGUN_MISSING, name="freezegun") from None
        self._emulator = emulator
        self._freeze_time: Any = freeze_time
        self._freezer: Any = None
        self._unsubscribe: Any = None

    def start(self) -> None:
        if self._freezer is not None:
            return
        self._freezer = self._freeze_time(self._emulator.now())
        frozen: Any = self._freezer.start()
        self._unsubscribe = self._emulator.on_clock_move(frozen.move_to)

    def stop(self) -> None:
        if self._freezer is not None:
            self._unsubscribe()
            self._freezer.stop()
            self._freezer = self._unsubscribe = None


class SvcClock:
    def __init__(self, emulator: Emulator, follower: FreezegunFollower | None = None) -> None:
        self._emulator = emulator
        #: Freezegun following the clock: the marker's (stopped by the plugin) or our own.
        self._follower = follower
        self._owned: FreezegunFollower | None = None

    def now(self) -> datetime:
        return self._emulator.now()

    def advance(self, duration: timedelta | float | str) -> datetime:
        """Moves the clock forward (a timedelta, seconds, or ``"30m"``-style text), running
        the work due on the way, each at its due time; returns the new time."""
        delta = duration if isinstance(duration, timedelta) else parse_duration(duration)
        self._emulator.advance(delta)
        return self._emulator.now()

    def set(self, instant: datetime | str) -> datetime:
        """Sets the clock; forward runs the work due on the way. A naive datetime (or text
        without an offset) is UTC, in-process and with ``--svc-url`` alike."""
        moment = parse_instant(instant) if isinstance(instant, str) else instant
        self._emulator.set_time(moment)
        return self._emulator.now()

    def follow_with_freezegun(self) -> None:
        """Opt-in: freezes Python's own clock (``datetime.now()``, ``time.time()``) at the
        sandbox time and moves it along with every move of the sandbox clock, so code under
        test that reads the system time sees sandbox time. Undone as the test's body ends."""
        if self._follower is None:
            self._follower = self._owned = FreezegunFollower(self._emulator)
        self._follower.start()

    def stop(self) -> None:
        if self._owned is not None:
            self._owned.stop()
            self._follower = self._owned = None
