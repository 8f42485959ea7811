"""Retention: the event log, the deliveries and the attempt journal stay bounded on a
long-running instance, and never drop what a pending delivery still has to send."""

from __future__ import annotations

from datetime import timedelta

from svc_sandbox.sandbox import Sandbox


def test_settled_history_is_bounded() -> None:
    sandbox = Sandbox(
        clock_mode="frozen", events_kept=10, deliveries_kept=5, webhook_attempts_kept=3
    )
    org = sandbox.orgs.all()[0]
    sandbox.add_webhook_receiver(org.id, lambda body, headers: 200)
    triggered = [sandbox.events.trigger(org.id, "sandbox", "order.created") for _ in range(40)]
    sandbox.advance(timedelta(0))
    kept = sandbox.events.events
    assert 10 <= len(kept) <= 11
    assert kept == triggered[-len(kept) :]  # the newest, in order
    assert len(sandbox.deliveries.deliveries) <= 5 + 5 // 10 + 1
    assert len(sandbox.deliveries.attempts) == 3
    assert sandbox.deliveries.attempts_made == 40


def test_a_pending_delivery_keeps_its_event() -> None:
    sandbox = Sandbox(clock_mode="frozen", events_kept=2)
    org = sandbox.orgs.all()[0]
    failing: list[bytes] = []

    def receiver(body: bytes, headers: dict[str, str]) -> int:
        failing.append(body)
        return 500

    sandbox.add_webhook_receiver(org.id, receiver)
    first = sandbox.events.trigger(org.id, "sandbox", "order.created")
    for _ in range(10):
        sandbox.events.trigger(org.id, "sandbox", "order.completed")
    assert sandbox.events.get(first.id) is first  # its delivery is still pending
    sandbox.advance(timedelta(hours=24))  # every retry fails: the deliveries settle
    assert failing.count(first.body()) == 6  # the same bytes on every attempt
    sandbox.events.trigger(org.id, "sandbox", "order.created")
    sandbox.events.trigger(org.id, "sandbox", "order.created")
    assert sandbox.events.get(first.id) is None  # settled: retention may drop it now
