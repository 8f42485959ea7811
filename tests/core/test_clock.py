"""The sandbox clock in its three modes; the wall clock is driven by freezegun."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from freezegun import freeze_time

from svc_sandbox.core.clock import Clock, ClockMode, isoformat, parse_instant

START = datetime(2026, 1, 1, tzinfo=UTC)
EAT = timezone(timedelta(hours=3))


def test_frozen_clock_stands_still_while_the_wall_clock_moves() -> None:
    with freeze_time("2030-05-05T10:00:00Z", tick=False) as wall:
        clock = Clock(ClockMode.FROZEN, START)
        wall.tick(timedelta(hours=3))
        assert clock.now() == START


def test_real_clock_follows_the_wall_clock() -> None:
    with freeze_time("2030-05-05T10:00:00Z") as wall:
        clock = Clock(ClockMode.REAL, START)
        wall.tick(timedelta(seconds=90))
        assert clock.now() == START + timedelta(seconds=90)


def test_scaled_clock_runs_factor_times_faster() -> None:
    with freeze_time("2030-05-05T10:00:00Z") as wall:
        clock = Clock(ClockMode.SCALED, START, factor=60)
        wall.tick(timedelta(seconds=30))
        assert clock.now() == START + timedelta(minutes=30)


def test_set_moves_the_clock_and_it_flows_on_from_there() -> None:
    with freeze_time("2030-05-05T10:00:00Z") as wall:
        clock = Clock(ClockMode.REAL, START)
        clock.set(START + timedelta(days=2))
        wall.tick(timedelta(seconds=5))
        assert clock.now() == START + timedelta(days=2, seconds=5)


def test_pin_holds_now_until_released() -> None:
    clock = Clock(ClockMode.FROZEN, START)
    with clock.pinned(START + timedelta(minutes=7)):
        assert clock.now() == START + timedelta(minutes=7)
        with clock.pinned(START + timedelta(minutes=9)):
            assert clock.now() == START + timedelta(minutes=9)
        assert clock.now() == START + timedelta(minutes=7)
    assert clock.now() == START


@pytest.mark.parametrize("mode", list(ClockMode))
def test_a_pin_is_seen_by_the_thread_that_made_it_only(mode: ClockMode) -> None:
    """The ticker pins the clock at a past due time while it runs an entry; a reader on
    another thread (the journal, GET /_sandbox/clock) must not see that time."""
    clock = Clock(mode, START + timedelta(days=1))
    seen: list[datetime] = []
    with clock.pinned(START):
        reader = threading.Thread(target=lambda: seen.append(clock.now()))
        reader.start()
        reader.join()
        assert clock.now() == START
    assert seen[0] >= START + timedelta(days=1)


@pytest.mark.parametrize(
    ("instant", "wire"),
    [
        (START + timedelta(microseconds=123456), "2026-01-01T00:00:00.123Z"),
        (START + timedelta(microseconds=999), "2026-01-01T00:00:00.000Z"),  # truncated
        (datetime(1970, 1, 1, tzinfo=UTC), "1970-01-01T00:00:00.000Z"),
        (datetime(8999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), "8999-12-31T23:59:59.999Z"),
        (datetime(2026, 1, 1, 3, tzinfo=timezone(timedelta(hours=3))), "2026-01-01T00:00:00.000Z"),
    ],
)
def test_wire_format_is_utc_milliseconds_with_z(instant: datetime, wire: str) -> None:
    assert isoformat(instant) == wire


def test_instants_are_parsed_as_utc() -> None:
    assert parse_instant("2026-01-01T03:00:00+03:00") == START
    assert parse_instant("2026-01-01T00:00:00") == START


@pytest.mark.parametrize(
    "instant",
    [
        datetime(2026, 2, 1),  # noqa: DTZ001 (naive on purpose)
        datetime(2026, 2, 1, tzinfo=UTC),
        datetime(2026, 2, 1, 3, tzinfo=EAT),
    ],
    ids=["naive", "utc", "eat"],
)
def test_sandbox_set_time_reads_a_naive_instant_as_utc(instant: datetime) -> None:
    """As POST /_sandbox/clock/set reads one (what svc_clock.set sends with --svc-url)."""
    from svc_sandbox.sandbox import Sandbox

    sandbox = Sandbox(clock_mode="frozen")
    sandbox.set_time(instant)
    assert sandbox.now() == datetime(2026, 2, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.set_time("2026-02-01"), "now must be a datetime, not str"),
        (lambda s: s.advance(60), "duration must be a timedelta, not int"),
    ],
)
def test_sandbox_clock_controls_name_a_wrong_argument(call: Any, message: str) -> None:
    from svc_sandbox.core.errors import ValidationFailed
    from svc_sandbox.sandbox import Sandbox

    sandbox = Sandbox(clock_mode="frozen")
    with pytest.raises(ValidationFailed, match=message):
        call(sandbox)
    assert sandbox.now() == START


@pytest.mark.parametrize("mode", list(ClockMode))
def test_the_clock_keeps_milliseconds_only(mode: ClockMode) -> None:
    """What the clock is set to and what a flowing clock reads are cut to the millisecond,
    the precision every time it shows has: the time shown is the time used."""
    with freeze_time("2030-05-05T10:00:00Z") as wall:
        clock = Clock(mode, START + timedelta(microseconds=400))
        assert clock.now() == START
        clock.set(START + timedelta(seconds=1, microseconds=1999))
        wall.tick(timedelta(microseconds=900))
        assert clock.now() == START + timedelta(seconds=1, milliseconds=1)
        assert clock.now().microsecond % 1000 == 0
