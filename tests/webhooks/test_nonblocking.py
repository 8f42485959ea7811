"""Delivery never slows the API request that caused the event (spec §6): a receiver that hangs
holds up only the delivery. Asserted on order of events, not on timings."""

from __future__ import annotations

import json
import threading
import urllib.request
from datetime import timedelta
from typing import Any

import pytest

from svc_sandbox.app import create_app
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import ADVANCE_BATCH, LATE_WORK_ROUNDS, Sandbox
from svc_sandbox.server import ServerThread
from svc_sandbox.testing.loopback import LoopbackServer
from tests.helpers import token_of
from tests.webhooks.conftest import call, setup_endpoint
from tests.webhooks.receiver import Receiver


def test_frozen_clock_requests_go_on_while_a_flush_waits_for_a_hanging_receiver(
    svc_server: RunningServer, hanging_receiver: Receiver
) -> None:
    setup_endpoint(svc_server, hanging_receiver)
    call(svc_server, "POST", "/_sandbox/events/trigger", {"type": "order.created"})
    flushed: list[Any] = []
    flusher = threading.Thread(
        target=lambda: flushed.append(call(svc_server, "POST", "/_sandbox/webhooks/flush"))
    )
    flusher.start()
    assert hanging_receiver.hanging.wait(10)

    # While the receiver hangs: an event-causing call, a commerce call and a read all answer.
    event = call(svc_server, "POST", "/_sandbox/events/trigger", {"type": "order.completed"})
    auth = {"Authorization": f"Bearer {token_of(svc_server.sandbox)}"}
    product = call(
        svc_server,
        "POST",
        "/api/products",
        {"title": "Book", "pricingModel": "fixed", "price": {"amount": 5000}},
        **auth,
    )
    info = call(svc_server, "GET", "/_sandbox")
    assert event["event"]["type"] == "order.completed"
    assert product["product"]["_id"] and info["name"] == "svc-sandbox"
    assert flusher.is_alive() and not hanging_receiver.release.is_set()
    assert len(hanging_receiver.received) == 1

    hanging_receiver.release.set()
    flusher.join(timeout=30)
    [report] = flushed
    assert [a["eventType"] for a in report["attempts"]] == ["order.created", "order.completed"]


@pytest.mark.parametrize("svc_sandbox", ["real"], indirect=True)
def test_real_clock_delivers_from_a_worker_that_never_holds_up_requests(
    svc_server: RunningServer, hanging_receiver: Receiver
) -> None:
    setup_endpoint(svc_server, hanging_receiver)
    first = call(svc_server, "POST", "/_sandbox/events/trigger", {"type": "order.created"})
    assert hanging_receiver.hanging.wait(10)  # the worker is stuck in the first POST

    second = call(svc_server, "POST", "/_sandbox/events/trigger", {"type": "order.completed"})
    clock = call(svc_server, "GET", "/_sandbox/clock")
    assert second["event"]["id"] != first["event"]["id"]
    assert clock["clock"]["mode"] == "real"
    assert not hanging_receiver.release.is_set()
    assert len(hanging_receiver.received) == 1

    hanging_receiver.release.set()
    received = hanging_receiver.wait_for(2)
    assert [json.loads(r.body)["id"] for r in received] == [
        first["event"]["id"],
        second["event"]["id"],
    ]


def test_a_receiver_that_polls_while_an_advance_delivers_to_it_is_answered() -> None:
    """On a flowing clock a request first runs the work due by then (Sandbox.catch_up), but it
    does not wait for an advance of the control plane: that one delivers webhooks as it goes,
    and the receiver polling the sandbox from its handler (a common integration) would wait
    for an advance that waits for it."""
    sandbox = Sandbox(clock_mode="scaled", clock_factor=1, port=0)
    server = ServerThread(create_app(sandbox), sandbox.settings).start()
    origin = f"http://127.0.0.1:{server.port}"

    def send(method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(origin + path, data, headers, method=method)
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    seen: list[Any] = []

    def on_post(path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        try:  # a production push decided at once: its decision is due as the poll comes
            customer = {"email": "buyer@example.com", "phone": "0911223344"}
            push = {"amount": 1000, "description": "x", "gateway": "telebirr", "customer": customer}
            made = send("POST", "/api/checkout", push, token_of(sandbox, "production"))
            seen.append(send("GET", f"/api/checkout/{made['sessionId']}")["status"])
        except OSError as error:  # the poll waited for the advance
            seen.append(error)
        return 200, b""

    receiver = LoopbackServer(on_post, "polling-receiver")
    try:
        send("PATCH", "/_sandbox/payments/provider", {"productionPushDelaySeconds": 0})
        org = next(o for o in sandbox.info()["organizations"] if o["environment"] == "sandbox")
        hook = {"orgId": org["id"], "url": receiver.origin + "/hooks"}
        send("POST", "/_sandbox/webhooks/endpoints", hook)
        send("POST", "/api/checkout", {"amount": 1000, "description": "x"}, token_of(sandbox))
        advanced = send("POST", "/_sandbox/clock/advance", {"duration": "31m"})
        assert "checkout.expire" in [entry["kind"] for entry in advanced["ran"]]
        assert seen == ["completed"]
    finally:
        receiver.close()
        server.close()
        sandbox.stop()


def test_a_request_runs_the_due_work_while_another_thread_holds_the_walk_lock() -> None:
    """A flowing clock's request runs what is due by now even when another thread is in a
    move of the clock: here one holding the walk lock and doing nothing, as the ticker does
    for a moment after taking it (the request used to skip the work then, and a backlog read
    just after two events showed one attempt due too few: a flaky test under load). The
    work runs beside the holder, under the state lock, without waiting for it."""
    sandbox = Sandbox(clock_mode="real", seed=1)
    http = create_app(sandbox).test_client()
    org = sandbox.info()["organizations"][0]["id"]
    sandbox.add_webhook_receiver(org, lambda body, headers: 200)
    holding, done = threading.Event(), threading.Event()

    def hold_the_walk_lock() -> None:
        with sandbox._moving:
            holding.set()
            done.wait(10)

    holder = threading.Thread(target=hold_the_walk_lock, daemon=True)
    holder.start()
    try:
        assert holding.wait(10)
        http.post("/_sandbox/events/trigger", json={"type": "order.created"})
        due = sandbox.scheduler.peek_due()
        assert due is not None and due <= sandbox.now()  # made by the trigger, not run yet
        assert http.get("/_sandbox/clock").status_code == 200  # its catch-up runs it
        after = sandbox.scheduler.peek_due()
        assert after is None or after > sandbox.now()
    finally:
        done.set()
        holder.join(10)
        sandbox.stop()


def test_a_delayed_request_on_a_frozen_clock_runs_due_work_but_sends_nothing() -> None:
    """A latency rule on a frozen clock moves the clock on by its delay before the request
    runs: what falls due meanwhile runs (the session expires), but the request does not send
    the attempts due (it made the API request wait for receivers); the next flush does."""
    sandbox = Sandbox(clock_mode="frozen", seed=1)
    http = create_app(sandbox).test_client()
    org = sandbox.info()["organizations"][0]["id"]
    calls: list[str] = []
    sandbox.add_webhook_receiver(org, lambda body, headers: calls.append(body.decode()) or 200)
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    session = http.post("/api/checkout", json={"amount": 1000, "description": "x"}, headers=auth)
    http.post("/_sandbox/events/trigger", json={"type": "order.created"})
    rule = {"method": "GET", "path": "/api/checkout/*", "delaySeconds": 1860}
    assert http.post("/_sandbox/faults/latency", json=rule).status_code == 201
    start = sandbox.now()

    polled = http.get(f"/api/checkout/{session.json['sessionId']}", headers=auth)

    assert polled.json["status"] == "expired"
    assert sandbox.now() - start == timedelta(seconds=1860)
    assert calls == []
    flushed = http.post("/_sandbox/webhooks/flush", json={}).json
    assert [a["eventType"] for a in flushed["attempts"]] == [
        "order.created",
        "checkout.session.expired",
    ]
    assert len(calls) == 2


def test_a_receiver_polling_a_delayed_path_while_an_advance_delivers_to_it_is_answered() -> None:
    """Frozen clock: an advance sends to a receiver that calls a path a latency rule delays.
    The delay moves the clock on without waiting for the advance (which waits for the
    receiver); it used to wait, and the receiver's call timed out."""
    sandbox = Sandbox(clock_mode="frozen", seed=1, port=0)
    server = ServerThread(create_app(sandbox), sandbox.settings).start()
    origin = f"http://127.0.0.1:{server.port}"
    token = token_of(sandbox)
    seen: list[Any] = []

    def on_post(path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        request = urllib.request.Request(
            origin + "/api/products", headers={"Authorization": f"Bearer {token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                seen.append(answer.status)
        except OSError as error:  # waited for the advance
            seen.append(error)
        return 200, b""

    receiver = LoopbackServer(on_post, "polling-receiver")
    http = create_app(sandbox).test_client()
    try:
        org = sandbox.info()["organizations"][0]["id"]
        http.post("/_sandbox/webhooks/endpoints", json={"orgId": org, "url": receiver.origin})
        http.post("/_sandbox/events/trigger", json={"type": "order.created"})
        rule = {"method": "GET", "path": "/api/products", "delaySeconds": 60}
        assert http.post("/_sandbox/faults/latency", json=rule).status_code == 201
        start = sandbox.now()

        advanced = http.post("/_sandbox/clock/advance", json={"seconds": 1})

        assert advanced.status_code == 200
        assert seen == [200]
        assert sandbox.now() - start == timedelta(seconds=60)
    finally:
        receiver.close()
        server.close()
        sandbox.stop()


@pytest.mark.parametrize(("chain", "sent_by_one_call"), [(5, 6), (1000, LATE_WORK_ROUNDS + 1)])
def test_an_explicit_call_sends_what_requests_make_meanwhile_for_a_bounded_number_of_rounds(
    chain: int, sent_by_one_call: int
) -> None:
    """Frozen clock: a receiver that answers each webhook by a request making another event
    (as traffic that never stops would). A short chain is delivered by the one flush; a long
    one made the flush send until it ended (never, under endless traffic): after the call's
    own round and ``LATE_WORK_ROUNDS`` rounds of only such late work, the rest is left to the
    next call."""
    sandbox = Sandbox(clock_mode="frozen", seed=1, port=0)
    server = ServerThread(create_app(sandbox), sandbox.settings).start()
    origin = f"http://127.0.0.1:{server.port}"
    made = [0]
    EVENT = {"type": "order.completed"}

    def post(path: str, body: Any = None) -> Any:
        request = urllib.request.Request(origin + path, json.dumps(body or {}).encode())
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())

    def calls_back(body: bytes, headers: dict[str, str]) -> int:
        if made[0] < chain:
            made[0] += 1
            post("/_sandbox/events/trigger", EVENT)
        return 200

    try:
        org = sandbox.info()["organizations"][0]["id"]
        sandbox.add_webhook_receiver(org, calls_back)
        post("/_sandbox/events/trigger", EVENT)
        first = post("/_sandbox/webhooks/flush")["attempts"]
        assert len(first) == sent_by_one_call
        assert {attempt["outcome"] for attempt in first} == {"succeeded"}
        rest: list[Any] = []
        while more := post("/_sandbox/webhooks/flush")["attempts"]:
            rest += more
        assert len(first) + len(rest) == chain + 1  # nothing lost, nothing sent twice
        assert len({a["deliveryId"] for a in first + rest}) == chain + 1
    finally:
        server.close()
        sandbox.stop()


def test_a_flush_of_more_attempts_at_one_instant_than_its_rounds_hold_sends_them_all() -> None:
    """Rounds count only what was made while the call sent: a backlog made before it, at one
    instant, more than ``LATE_WORK_ROUNDS`` batches of ``ADVANCE_BATCH``, goes out whole in
    the one call (a 100,000-session warp expires that many sessions at one instant)."""
    sandbox = Sandbox(clock_mode="frozen", seed=1, rate_limits=False)
    http = create_app(sandbox).test_client()
    org = sandbox.info()["organizations"][0]["id"]
    received = [0]

    def count(body: bytes, headers: dict[str, str]) -> int:
        received[0] += 1
        return 200

    sandbox.add_webhook_receiver(org, count)
    backlog = (LATE_WORK_ROUNDS + 2) * ADVANCE_BATCH
    for _ in range(backlog):
        sandbox.events.trigger(org, "sandbox", "order.completed")

    flushed = http.post("/_sandbox/webhooks/flush", json={})

    assert flushed.status_code == 200
    assert received[0] == backlog
    assert http.get("/_sandbox").json["webhooks"]["backlog"]["attemptsDue"] == 0


def test_an_advance_whose_receiver_makes_delayed_requests_returns_after_its_rounds() -> None:
    """Frozen clock: each webhook makes the receiver trigger an event and make a request a
    latency rule delays, which moves the clock and makes the new attempt due while the
    advance's flush was still sending: the flush took it too, no round ended, and a 10 s
    advance went on (5 h 33 min of sandbox time in the audit). Each flush now sends what was
    due as it began, and the late rounds end the call."""
    sandbox = Sandbox(clock_mode="frozen", seed=1, port=0, rate_limits=False)
    server = ServerThread(create_app(sandbox), sandbox.settings).start()
    origin = f"http://127.0.0.1:{server.port}"
    token = token_of(sandbox)
    calls = [0]

    def send(method: str, path: str, body: Any = None) -> None:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(origin + path, data, method=method)
        request.add_header("Content-Type", "application/json")
        request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()

    def calls_back(body: bytes, headers: dict[str, str]) -> int:
        calls[0] += 1
        if calls[0] <= 2000:  # bounded, so the previous code ended too
            send("POST", "/_sandbox/events/trigger", {"type": "order.completed"})
            send("GET", "/api/products")
        return 200

    try:
        org = sandbox.info()["organizations"][0]["id"]
        sandbox.add_webhook_receiver(org, calls_back)
        rule = {"method": "GET", "path": "/api/products", "delaySeconds": 1}
        send("POST", "/_sandbox/faults/latency", rule)
        send("POST", "/_sandbox/events/trigger", {"type": "order.completed"})
        send("POST", "/_sandbox/clock/advance", {"seconds": 10})
        assert calls[0] <= LATE_WORK_ROUNDS + 1
        assert sandbox.info()["webhooks"]["backlog"]["attemptsDue"] >= 1  # left for later
    finally:
        server.close()
        sandbox.stop()


def test_stopping_ends_a_drain_after_the_attempt_being_sent() -> None:
    """`serve` got SIGTERM while attempts were due on a flowing clock: the worker drained the
    whole queue first (retries falling due meanwhile), and the process stayed up for minutes.
    It stops after the attempt it is sending; what is left stays due and is exported."""
    sandbox = Sandbox(clock_mode="real", seed=1)
    org = sandbox.info()["organizations"][0]["id"]
    calls: list[bytes] = []
    first = threading.Event()

    def slow(body: bytes, headers: dict[str, str]) -> int:
        calls.append(body)
        first.set()
        threading.Event().wait(0.3)
        return 500

    sandbox.add_webhook_receiver(org, slow)
    for _ in range(6):
        sandbox.events.trigger(org, "sandbox", "order.completed")
    sandbox.start_background()
    assert first.wait(10)
    sandbox.stop()
    sent = len(calls)
    assert sent < 6  # not drained
    threading.Event().wait(0.5)
    assert len(calls) == sent  # nothing after stop returned
    exported = sandbox.export()["services"]["webhookDeliveries"]
    assert [d["status"] for d in exported["deliveries"]] == ["pending"] * 6  # none lost
    # The ones never sent are still due, the one taken but not sent put back among them.
    never_sent = [d for d in exported["deliveries"] if d["attempts"] == 0]
    assert len(never_sent) == 6 - sent
    due_ids = {d["delivery_id"] for d in exported["due"]}
    assert {d["id"] for d in never_sent} <= due_ids
