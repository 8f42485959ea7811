"""A long advance lets other requests in between batches of due entries, and still runs them in
due order with the same result as an advance nobody interrupted. ``GET /_sandbox/clock``
counts the queue and lists its next entries without sorting it."""

from __future__ import annotations

import gc
import json
import threading
import urllib.request
from datetime import timedelta
from typing import Any

from flask.testing import FlaskClient

from svc_sandbox.commerce.schemas import CheckoutBody
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import ADVANCE_BATCH, Sandbox

SESSIONS = ADVANCE_BATCH * 16


def open_sessions(sandbox: Sandbox, count: int) -> None:
    org = sandbox.orgs.all()[0]
    principal = sandbox.orgs.authenticate(sandbox.orgs.tokens_of(org.id)[0].token)
    body = CheckoutBody.model_validate({"amount": 500, "description": "batch"})
    for _ in range(count):
        sandbox.checkout.create(principal, body)


def call(server: RunningServer, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def test_requests_get_in_during_a_long_advance(svc_server: RunningServer) -> None:
    sandbox = svc_server.sandbox
    open_sessions(sandbox, SESSIONS)
    seen: list[int] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():  # bounded by the advance below
            seen.append(call(svc_server, "GET", "/_sandbox/clock")["scheduledCount"])

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        ran = call(svc_server, "POST", "/_sandbox/clock/advance", {"duration": "1h"})["ran"]
    finally:
        done.set()
        poller.join(timeout=60)
    assert len(ran) == SESSIONS
    # Some answers came while part of the sessions had expired and part had not.
    assert any(0 < count < SESSIONS for count in seen), seen[:20]
    # Same due order and same events as an advance that nobody interrupted.
    alone = Sandbox(clock_mode="frozen", seed=1, strict=True)
    open_sessions(alone, SESSIONS)
    alone_ran = alone.advance(timedelta(hours=1))
    assert ran == [r.to_json() for r in alone_ran]
    assert [e.envelope() for e in sandbox.events.events] == [
        e.envelope() for e in alone.events.events
    ]


def test_the_clock_shows_the_next_entries_and_counts_the_rest(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    open_sessions(svc_sandbox, 3)
    clock = svc_http.get("/_sandbox/clock?limit=2").json
    assert clock["scheduledCount"] == 3
    assert [e["seq"] for e in clock["scheduled"]] == [1, 2]
    assert clock["scheduled"][0]["kind"] == "checkout.expire"
    assert svc_http.get("/_sandbox").json["scheduled"] == 3
    bad = svc_http.get("/_sandbox/clock?limit=0")
    assert bad.status_code == 400
    assert bad.json["error"] == "limit must be an integer between 1 and 1000"


def test_parallel_advances_add_up_even_when_each_lets_others_in(svc_server: RunningServer) -> None:
    """Each advance works out its target from the clock it finds and lets the lock go between
    batches; advances therefore run one after another, and four 1 h advances make 4 h."""
    sandbox = svc_server.sandbox
    open_sessions(sandbox, ADVANCE_BATCH * 4)
    start = sandbox.clock.now()
    barrier = threading.Barrier(4)

    def advance() -> None:
        barrier.wait(timeout=60)
        call(svc_server, "POST", "/_sandbox/clock/advance", {"duration": "1h"})

    threads = [threading.Thread(target=advance) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sandbox.clock.now() - start == timedelta(hours=4)
    assert sandbox.scheduler.next_due() is None  # every session expired once
    assert len(sandbox.events.events) == ADVANCE_BATCH * 4


def test_an_advance_pauses_the_cyclic_collector_and_gives_it_back() -> None:
    """A warp makes and drops records by the hundred thousand (none in a cycle): the
    collector waits until the advance is over, even one whose receiver raises."""
    sandbox = Sandbox(clock_mode="frozen", seed=1)
    org = sandbox.orgs.all()[0]
    during: list[bool] = []

    def receiver(body: bytes, headers: dict[str, str]) -> int:
        during.append(gc.isenabled())
        raise RuntimeError("receiver down")

    sandbox.add_webhook_receiver(org.id, receiver)
    open_sessions(sandbox, 3)
    assert gc.isenabled()
    sandbox.advance(timedelta(hours=1))
    assert gc.isenabled()
    # Each session's expiry event, its first attempt and the retries due within the hour.
    assert len(during) == sandbox.deliveries.attempts_made > 3
    assert not any(during)


def test_an_advance_leaves_a_collector_the_caller_switched_off_switched_off() -> None:
    sandbox = Sandbox(clock_mode="frozen", seed=1)
    open_sessions(sandbox, 2)
    gc.disable()
    try:
        ran = sandbox.advance(timedelta(hours=1))
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert len(ran) == 2
