"""``svc_clock``: the sandbox clock for a test, optionally moving freezegun's clock along."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from svc_sandbox.core.clock import parse_instant
from svc_sandbox.core.durations import parse_duration
from svc_sandbox.testing.emulator import Emulator


class SvcClock:
    def __init__(self, emulator: Emulator) -> None:
        self._emulator = emulator
        self._freezer: Any = None
        self._frozen: Any = None

    def now(self) -> datetime:
        return self._emulator.now()

    def advance(self, duration: timedelta | float | str) -> datetime:
        """Moves the clock forward (a timedelta, seconds, or ``"30m"``-style text), running
        the work due on the way, each at its due time; returns the new time."""
        delta = duration if isinstance(duration, timedelta) else parse_duration(duration)
        self._emulator.advance(delta)
        return self._moved()

    def set(self, instant: datetime | str) -> datetime:
        """Sets the clock; forward runs the work due on the way."""
        moment = parse_instant(instant) if isinstance(instant, str) else instant
        self._emulator.set_time(moment)
        return self._moved()

    def follow_with_freezegun(self) -> None:
        """Opt-in: freezes Python's own clock (``datetime.now()``, ``time.time()``) at the
        sandbox time and moves it along with every ``advance``/``set``, so code under test
        that reads the system time sees sandbox time. Undone at the end of the test."""
        if self._freezer is not None:
            return
        from freezegun import freeze_time

        self._freezer = freeze_time(self._emulator.now())
        self._frozen = self._freezer.start()

    def stop(self) -> None:
        if self._freezer is not None:
            self._freezer.stop()
            self._freezer = self._frozen = None

    def _moved(self) -> datetime:
        now = self._emulator.now()
        if self._frozen is not None:
            self._frozen.move_to(now)
        return now
