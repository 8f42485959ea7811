"""The scheduler runs due entries in due-time order, each at its own due time."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from svc_sandbox.sandbox import Sandbox


def record_into(sandbox: Sandbox, log: list[tuple[str, str]]) -> None:
    def handler(payload: dict[str, Any]) -> None:
        log.append((payload["name"], sandbox.now().isoformat()))

    sandbox.scheduler.register("test.record", handler)


def test_advance_runs_due_entries_in_due_order_each_at_its_time(svc_sandbox: Sandbox) -> None:
    log: list[tuple[str, str]] = []
    record_into(svc_sandbox, log)
    t0 = svc_sandbox.now()
    for name, minutes in (("c", 30), ("a", 1), ("b", 5), ("later", 120)):
        svc_sandbox.scheduler.schedule(
            t0 + timedelta(minutes=minutes), "test.record", {"name": name}
        )
    ran = svc_sandbox.advance(timedelta(hours=1))
    assert log == [
        ("a", (t0 + timedelta(minutes=1)).isoformat()),
        ("b", (t0 + timedelta(minutes=5)).isoformat()),
        ("c", (t0 + timedelta(minutes=30)).isoformat()),
    ]
    assert [r.payload["name"] for r in ran] == ["a", "b", "c"]
    assert svc_sandbox.now() == t0 + timedelta(hours=1)
    assert [e.payload["name"] for e in svc_sandbox.scheduler.pending()] == ["later"]


def test_entries_due_at_the_same_time_run_in_scheduling_order(svc_sandbox: Sandbox) -> None:
    log: list[tuple[str, str]] = []
    record_into(svc_sandbox, log)
    due = svc_sandbox.now() + timedelta(seconds=10)
    for name in "xyz":
        svc_sandbox.scheduler.schedule(due, "test.record", {"name": name})
    svc_sandbox.advance(timedelta(seconds=10))
    assert [name for name, _ in log] == ["x", "y", "z"]


def test_work_scheduled_by_running_work_runs_in_the_same_advance(svc_sandbox: Sandbox) -> None:
    times: list[str] = []

    def chain(payload: dict[str, Any]) -> None:
        times.append(svc_sandbox.now().isoformat())
        if payload["left"]:
            svc_sandbox.scheduler.schedule(
                svc_sandbox.now() + timedelta(minutes=10),
                "test.chain",
                {"left": payload["left"] - 1},
            )

    svc_sandbox.scheduler.register("test.chain", chain)
    t0 = svc_sandbox.now()
    svc_sandbox.scheduler.schedule(t0 + timedelta(minutes=10), "test.chain", {"left": 3})
    svc_sandbox.advance(timedelta(minutes=35))
    assert times == [(t0 + timedelta(minutes=10 * n)).isoformat() for n in (1, 2, 3)]
    assert len(svc_sandbox.scheduler.pending()) == 1


def test_cancelled_entries_never_run(svc_sandbox: Sandbox) -> None:
    log: list[tuple[str, str]] = []
    record_into(svc_sandbox, log)
    entry = svc_sandbox.scheduler.schedule(
        svc_sandbox.now() + timedelta(seconds=1), "test.record", {"name": "gone"}
    )
    svc_sandbox.scheduler.cancel(entry)
    assert svc_sandbox.advance(timedelta(minutes=1)) == []
    assert log == []


def test_set_time_forward_runs_due_work_and_backward_runs_none(svc_sandbox: Sandbox) -> None:
    log: list[tuple[str, str]] = []
    record_into(svc_sandbox, log)
    t0 = svc_sandbox.now()
    svc_sandbox.scheduler.schedule(t0 + timedelta(hours=2), "test.record", {"name": "n"})
    svc_sandbox.set_time(t0 - timedelta(days=1))
    assert log == []
    svc_sandbox.set_time(t0 + timedelta(hours=3))
    assert log == [("n", (t0 + timedelta(hours=2)).isoformat())]


def test_control_plane_advance_reports_what_ran(svc_sandbox: Sandbox, svc_http: Any) -> None:
    log: list[tuple[str, str]] = []
    record_into(svc_sandbox, log)
    svc_sandbox.scheduler.schedule(
        svc_sandbox.now() + timedelta(seconds=90), "test.record", {"name": "n"}
    )
    response = svc_http.post("/_sandbox/clock/advance", json={"duration": "1h30m"})
    assert response.status_code == 200
    body = response.json
    assert body["clock"]["now"] == "2026-01-01T01:30:00.000Z"
    assert body["ran"] == [
        {"due": "2026-01-01T00:01:30.000Z", "kind": "test.record", "payload": {"name": "n"}}
    ]


def test_real_clock_background_ticker_runs_due_work() -> None:
    import threading

    sandbox = Sandbox(clock_mode="real", tick_seconds=0.01)
    done = threading.Event()
    sandbox.scheduler.register("test.done", lambda payload: done.set())
    sandbox.scheduler.schedule(sandbox.now(), "test.done", {})
    sandbox.start_background()
    try:
        assert done.wait(timeout=10)
    finally:
        sandbox.stop()
