"""On a flowing clock the background sender delivers to several receivers at once, one attempt
at a time per receiver (its lane: the URL's origin), in due order: a receiver that hangs, or
sits in a debugger, holds up only its own deliveries (docs/webhooks.md). Asserted on what
arrived while a hang held, not on timings. ``GET /_sandbox`` shows the backlog meanwhile."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.webhooks.conftest import wait_until
from tests.webhooks.receiver import running_receiver

#: Longer than any wait of these tests: with one sender in all, the prompt receiver's event
#: would wait the whole timeout behind the hanging one.
LONG_TIMEOUT = 120.0


class HeldReceiver:
    """An in-process receiver that records its name in ``calls``, says it is inside, and
    answers ``status`` only once released (a receiver that hangs, or sits at a breakpoint)."""

    def __init__(self, name: str, calls: list[str], status: int = 200) -> None:
        self.name, self.calls, self.status = name, calls, status
        self.inside = threading.Event()
        self.release = threading.Event()

    def __call__(self, body: bytes, headers: dict[str, str]) -> int:
        self.calls.append(self.name)
        self.inside.set()
        self.release.wait(10)
        return self.status


def flowing_sandbox(**settings: Any) -> Sandbox:
    sandbox = Sandbox(
        clock_mode="real",
        seed=1,
        port=0,
        tick_seconds=0.02,
        webhook_timeout_seconds=LONG_TIMEOUT,
        **settings,
    )
    sandbox.start_background()
    return sandbox


@pytest.fixture
def flowing() -> Iterator[Sandbox]:
    sandbox = flowing_sandbox()
    try:
        yield sandbox
    finally:
        sandbox.stop()


def org_ids(client: FlaskClient) -> dict[str, str]:
    orgs = client.get("/_sandbox").get_json()["organizations"]
    return {org["environment"]: org["id"] for org in orgs}


def add_endpoint(client: FlaskClient, org_id: str, url: str) -> str:
    answer = client.post("/_sandbox/webhooks/endpoints", json={"orgId": org_id, "url": url})
    assert answer.status_code == 201, answer.get_json()
    return str(answer.get_json()["id"])


def trigger(client: FlaskClient, org_id: str, event_type: str = "order.completed") -> str:
    body = {"type": event_type, "orgId": org_id}
    answer = client.post("/_sandbox/events/trigger", json=body)
    assert answer.status_code == 201, answer.get_json()
    return str(answer.get_json()["event"]["id"])


def backlog(client: FlaskClient) -> dict[str, Any]:
    return dict(client.get("/_sandbox").get_json()["webhooks"]["backlog"])


def test_a_hanging_receiver_holds_up_only_its_own_deliveries(flowing: Sandbox) -> None:
    client = create_app(flowing).test_client()
    orgs = org_ids(client)
    with running_receiver("hang") as hanging, running_receiver(200) as prompt:
        add_endpoint(client, orgs["sandbox"], hanging.url)
        add_endpoint(client, orgs["production"], prompt.url)
        trigger(client, orgs["sandbox"])
        assert hanging.hanging.wait(10)

        other = trigger(client, orgs["production"])
        [received] = prompt.wait_for(1)
        assert json.loads(received.body)["id"] == other
        assert not hanging.release.is_set() and len(hanging.received) == 1

        # The other organization's delivery succeeded while the first attempt hangs.
        def statuses() -> list[str]:
            query = f"/_sandbox/webhooks/deliveries?eventId={other}"
            return [d["status"] for d in client.get(query).get_json()["items"]]

        wait_until(lambda: statuses() == ["succeeded"])
        assert statuses() == ["succeeded"]
        waiting = backlog(client)
        assert waiting["pendingDeliveries"] == 1
        assert waiting["attemptsSending"] == 1 and waiting["attemptsDue"] == 1
        assert waiting["oldestDueAt"] is not None and waiting["lagSeconds"] >= 0

        hanging.release.set()
        flowing.stop()  # waits for the attempt out, then records it
        settled = backlog(client)
        assert settled == {
            "pendingDeliveries": 0,
            "attemptsDue": 0,
            "attemptsSending": 0,
            "oldestDueAt": None,
            "lagSeconds": 0.0,
        }


def test_one_receivers_attempts_go_one_at_a_time_in_due_order(flowing: Sandbox) -> None:
    """Two endpoints on one origin are one lane: the second endpoint's attempt waits for the
    first endpoint's answer, and every event reaches the receiver in the order it was made."""
    client = create_app(flowing).test_client()
    org = org_ids(client)["sandbox"]
    with running_receiver("hang") as receiver:
        add_endpoint(client, org, receiver.url)
        add_endpoint(client, org, receiver.url.replace("/hooks", "/other-hooks"))
        receiver.behaviours = ["hang"]
        receiver.default = 200
        first = trigger(client, org)
        assert receiver.hanging.wait(10)
        second = trigger(client, org, "order.created")
        # Both endpoints' attempts of the second event, and the first event's attempt to the
        # second endpoint, are due and set aside while the lane's first attempt is out.
        waiting = backlog(client)
        assert waiting["attemptsSending"] == 1
        assert waiting["attemptsDue"] == 4 and waiting["pendingDeliveries"] == 4
        assert len(receiver.received) == 1

        receiver.release.set()
        arrived = receiver.wait_for(4)
    ids = [json.loads(r.body)["id"] for r in arrived]
    assert ids == [first, first, second, second]
    assert sorted(r.path for r in arrived[:2]) == ["/hooks", "/other-hooks"]


def test_in_process_receivers_are_lanes_of_their_own() -> None:
    """Each in-process receiver is its own lane; the most attempts out at once is the
    ``webhook_senders`` setting, and a receiver is never called twice at once."""
    sandbox = flowing_sandbox(webhook_senders=2)
    try:
        org = sandbox.info()["organizations"][0]["id"]
        inside: dict[str, int] = {"a": 0, "b": 0, "c": 0}
        most = {"all": 0, "one": 0}
        calls: list[str] = []
        gate = threading.Lock()
        entered = threading.Barrier(2)
        release = threading.Event()

        def receiver(name: str) -> Any:
            def receive(body: bytes, headers: dict[str, str]) -> int:
                with gate:
                    inside[name] += 1
                    calls.append(name)
                    most["all"] = max(most["all"], sum(inside.values()))
                    most["one"] = max(most["one"], inside[name])
                if len(calls) <= 2:
                    entered.wait(10)  # the first two are out at once
                release.wait(10)
                with gate:
                    inside[name] -= 1
                return 200

            return receive

        for name in "abc":
            sandbox.add_webhook_receiver(org, receiver(name))
        for _ in range(3):
            sandbox.events.trigger(org, "sandbox", "order.completed")
        sandbox.run_due(background=True)
        release.set()
        wait_until(lambda: sandbox.deliveries.attempts_made == 9)
    finally:
        sandbox.stop()
    assert sorted(calls) == ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    assert most == {"all": 2, "one": 1}
    attempts = sandbox.deliveries.query_attempts({})
    assert len(attempts) == 9 and all(a.succeeded for a in attempts)


def test_one_sender_in_all_waits_for_each_receiver_in_turn() -> None:
    """``webhook_senders: 1``: the one-at-a-time delivery of earlier versions."""
    sandbox = flowing_sandbox(webhook_senders=1)
    try:
        org = sandbox.info()["organizations"][0]["id"]
        calls: list[str] = []
        hanging = HeldReceiver("hanging", calls)

        def prompt(body: bytes, headers: dict[str, str]) -> int:
            calls.append("prompt")
            return 200

        sandbox.add_webhook_receiver(org, hanging)
        sandbox.add_webhook_receiver(org, prompt)
        sandbox.events.trigger(org, "sandbox", "order.completed")
        sandbox.run_due(background=True)
        assert hanging.inside.wait(10)
        assert sandbox.info()["webhooks"]["backlog"]["attemptsDue"] == 2
        assert calls == ["hanging"]
        hanging.release.set()
        wait_until(lambda: len(calls) == 2)
    finally:
        hanging.release.set()
        sandbox.stop()
    assert calls == ["hanging", "prompt"]


def test_an_export_while_lanes_are_busy_lists_every_attempt_not_answered(
    flowing: Sandbox,
) -> None:
    """Attempts set aside for a busy lane are due as far as a copy of the state goes: an
    import sends them."""
    client = create_app(flowing).test_client()
    org = org_ids(client)["sandbox"]
    with running_receiver("hang") as receiver:
        receiver.behaviours = ["hang"]
        receiver.default = 200
        add_endpoint(client, org, receiver.url)
        trigger(client, org)
        assert receiver.hanging.wait(10)
        trigger(client, org, "order.created")
        trigger(client, org, "order.created")
        assert backlog(client)["attemptsDue"] == 3
        exported = client.get("/_sandbox/state").get_json()
        receiver.release.set()
    due = exported["services"]["webhookDeliveries"]["due"]
    assert len(due) == 3
    assert [d["seq"] for d in due] == sorted(d["seq"] for d in due)


def test_an_explicit_flush_waits_for_the_attempts_out_then_sends_in_due_order() -> None:
    """A flush on a flowing clock first waits for the background senders' attempts out, and
    holds them back while it sends what is due, one at a time in due order."""
    sandbox = flowing_sandbox()
    try:
        org = sandbox.info()["organizations"][0]["id"]
        calls: list[str] = []
        slow = HeldReceiver("slow", calls, status=500)  # failed: retried a minute later

        def quick(body: bytes, headers: dict[str, str]) -> int:
            calls.append("quick")
            return 200

        slow_endpoint = sandbox.add_webhook_receiver(org, slow).id
        sandbox.events.trigger(org, "sandbox", "order.completed")
        sandbox.run_due(background=True)
        assert slow.inside.wait(10)
        sandbox.add_webhook_receiver(org, quick)
        sandbox.events.trigger(org, "sandbox", "order.created")
        sandbox.run_due(background=True)
        wait_until(lambda: "quick" in calls)  # another receiver: not held up by the slow one
        assert calls == ["slow", "quick"]

        flushed: list[Any] = []
        flusher = threading.Thread(target=lambda: flushed.append(sandbox.dispatcher.flush()))
        flusher.start()
        flusher.join(0.2)
        assert flusher.is_alive()  # waiting for the slow receiver's answer
        slow.release.set()
        flusher.join(10)
    finally:
        slow.release.set()
        sandbox.stop()
    # The slow receiver's attempt of the second event, set aside while its first was out,
    # went out from the flush, not from a background sender.
    assert calls == ["slow", "quick", "slow"]
    [made] = flushed
    assert [(a.event_type, a.endpoint_id) for a in made] == [("order.created", slow_endpoint)]


def test_attempts_set_aside_at_a_stop_go_out_after_the_restart() -> None:
    """Attempts set aside behind a receiver's attempt out when ``stop`` came are sent once
    the senders start again (they waited for another lane's work to fall due)."""
    sandbox = flowing_sandbox()
    try:
        org = sandbox.info()["organizations"][0]["id"]
        calls: list[str] = []
        receiver = HeldReceiver("held", calls)
        sandbox.add_webhook_receiver(org, receiver)
        sandbox.events.trigger(org, "sandbox", "order.completed")
        sandbox.run_due(background=True)
        assert receiver.inside.wait(10)
        for _ in range(3):
            sandbox.events.trigger(org, "sandbox", "order.created")
        sandbox.run_due(background=True)
        wait_until(lambda: sum(map(len, sandbox.deliveries.parked.values())) == 3)
        receiver.release.set()
        sandbox.stop()
        assert len(calls) == 1 and sandbox.info()["webhooks"]["backlog"]["attemptsDue"] == 3

        sandbox.start_background()
        wait_until(lambda: len(calls) == 4)
        assert len(calls) == 4
    finally:
        receiver.release.set()
        sandbox.stop()


def test_a_nudge_at_a_stop_leaves_no_dead_sender_in_a_place() -> None:
    """A wake-up that lands after ``stop`` starts no thread (one would end at once and keep
    one of the ``webhook_senders`` places: with one sender, delivery stopped for good)."""
    sandbox = flowing_sandbox(webhook_senders=1)
    try:
        org = sandbox.info()["organizations"][0]["id"]
        calls: list[int] = []
        sandbox.add_webhook_receiver(org, lambda body, headers: calls.append(1) or 200)
        sandbox.stop()
        senders = sandbox.dispatcher.background
        senders.nudge()  # the ticker's last wake-up, late
        for thread in senders._threads:
            thread.join(10)  # a thread started now would see the stop and end
        sandbox.start_background()
        sandbox.events.trigger(org, "sandbox", "order.completed")
        wait_until(lambda: len(calls) == 1)
        assert len(calls) == 1
    finally:
        sandbox.stop()


def test_an_endpoint_moved_to_another_url_takes_its_set_aside_attempts_along(
    flowing: Sandbox,
) -> None:
    """Attempts set aside behind a hanging receiver go to the endpoint's new URL, in due
    order, without waiting for the old receiver's attempt."""
    client = create_app(flowing).test_client()
    org = org_ids(client)["sandbox"]
    with running_receiver("hang") as old, running_receiver(200) as new:
        endpoint = add_endpoint(client, org, old.url)
        trigger(client, org)
        assert old.hanging.wait(10)
        waiting = [trigger(client, org, "order.created") for _ in range(2)]
        moved = client.patch(f"/_sandbox/webhooks/endpoints/{endpoint}", json={"url": new.url})
        assert moved.status_code == 200, moved.get_json()
        last = trigger(client, org, "checkout.session.expired")
        arrived = new.wait_for(3)
        assert not old.release.is_set()
        assert [json.loads(r.body)["id"] for r in arrived] == [*waiting, last]
        old.release.set()
