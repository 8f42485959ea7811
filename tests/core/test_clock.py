"""The sandbox clock in its three modes; the wall clock is driven by freezegun."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from freezegun import freeze_time

from svc_sandbox.core.clock import Clock, ClockMode, isoformat, parse_instant

START = datetime(2026, 1, 1, tzinfo=UTC)


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
    clock.pin(START + timedelta(minutes=7))
    assert clock.now() == START + timedelta(minutes=7)
    clock.pin(None)
    assert clock.now() == START


def test_wire_format_is_utc_milliseconds_with_z() -> None:
    assert isoformat(START + timedelta(microseconds=123456)) == "2026-01-01T00:00:00.123Z"
    assert parse_instant("2026-01-01T03:00:00+03:00") == START
    assert parse_instant("2026-01-01T00:00:00") == START
