"""An in-process receiver may move the clock from inside its own delivery (``advance``,
``set_time``, ``run_due``, the control plane through a test client): the move runs the due
work and returns; what falls due goes out after the receiver answers. It used to wait for
itself whenever an attempt was due: the call sending held the flush lock (a frozen clock's
advance or flush) or waited for the attempts out (a real clock's background sender), and the
receiver's move waited for that call. Every call runs in a thread with a deadline, so a hang
fails the test instead of the suite."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.core.clock import isoformat
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.settings import Settings
from tests.helpers import token_of
from tests.webhooks.conftest import call, setup_endpoint, wait_until
from tests.webhooks.receiver import Receiver

DEADLINE_SECONDS = 10.0

Move = Callable[[Sandbox, FlaskClient], Any]

MOVES: dict[str, Move] = {
    "advance": lambda sb, http: sb.advance(timedelta(minutes=1)),
    "set_time": lambda sb, http: sb.set_time(sb.now() + timedelta(minutes=1)),
    "run_due": lambda sb, http: sb.run_due(),
    "control advance": lambda sb, http: http.post("/_sandbox/clock/advance", json={"seconds": 60}),
    "control flush": lambda sb, http: http.post("/_sandbox/webhooks/flush", json={}),
}


def in_thread(call: Callable[[], Any]) -> Any:
    """``call``'s result, from a thread that must end within the deadline."""
    results: list[Any] = []
    thread = threading.Thread(target=lambda: results.append(call()), daemon=True)
    thread.start()
    thread.join(DEADLINE_SECONDS)
    assert not thread.is_alive(), "the call waited for itself"
    [result] = results
    return result


class MovingReceiver:
    """Answers 200; on its first webhook it triggers ``trigger`` more events, then makes
    ``move`` (the clock moved by a receiver reacting to a webhook)."""

    def __init__(self, sandbox: Sandbox, http: FlaskClient, move: Move, trigger: int) -> None:
        self.sandbox, self.http, self.move, self.trigger = sandbox, http, move, trigger
        self.received: list[bytes] = []
        self.moved = threading.Event()

    def __call__(self, body: bytes, headers: dict[str, str]) -> int:
        self.received.append(body)
        if len(self.received) == 1:
            for _ in range(self.trigger):
                created = self.http.post("/_sandbox/events/trigger", json={"type": "order.created"})
                assert created.status_code == 201
            self.move(self.sandbox, self.http)
            self.moved.set()
        return 200


def frozen_with(move: Move, trigger: int) -> tuple[Sandbox, FlaskClient, MovingReceiver]:
    sandbox = Sandbox(Settings.load({"clock_mode": "frozen", "seed": 7}))
    http = create_app(sandbox).test_client()
    receiver = MovingReceiver(sandbox, http, move, trigger)
    sandbox.add_webhook_receiver(sandbox.info()["organizations"][0]["id"], receiver)
    return sandbox, http, receiver


@pytest.mark.parametrize("move", MOVES.values(), ids=MOVES.keys())
def test_a_frozen_clock_flush_delivers_what_its_receiver_made_due_while_moving_the_clock(
    move: Move,
) -> None:
    """Two events due; the receiver of the first makes a third and moves the clock: the one
    flush delivers all three, in order, and leaves nothing due."""
    sandbox, http, receiver = frozen_with(move, trigger=1)
    for _ in range(2):
        http.post("/_sandbox/events/trigger", json={"type": "order.completed"})
    report = in_thread(lambda: http.post("/_sandbox/webhooks/flush", json={}).json)
    assert [a["eventType"] for a in report["attempts"]] == [
        "order.completed",
        "order.completed",
        "order.created",
    ]
    assert [a["outcome"] for a in report["attempts"]] == ["succeeded"] * 3
    assert len(receiver.received) == 3
    assert sandbox.info()["webhooks"]["backlog"]["attemptsDue"] == 0


@pytest.mark.parametrize("move", ["advance", "set_time"])
def test_a_receivers_move_inside_an_advance_moves_the_clock_once(move: str) -> None:
    """The receiver's minute is added to the sandbox clock; the outer advance still ends at
    its own target (the clock never goes back)."""
    sandbox, http, receiver = frozen_with(MOVES[move], trigger=0)
    start = sandbox.now()
    for _ in range(2):
        http.post("/_sandbox/events/trigger", json={"type": "order.completed"})
    in_thread(lambda: sandbox.advance(timedelta(seconds=10)))
    assert receiver.moved.is_set()
    assert sandbox.now() == start + timedelta(minutes=1)
    in_thread(lambda: sandbox.advance(timedelta(minutes=5)))
    assert sandbox.now() == start + timedelta(minutes=6)


def test_a_receivers_move_runs_the_due_work_on_its_way() -> None:
    """An open checkout session expires inside the receiver's advance of 31 minutes; its
    event goes out after the receiver answers, from the same flush."""
    sandbox, http, receiver = frozen_with(lambda sb, _: sb.advance(timedelta(minutes=31)), 0)
    org = sandbox.info()["organizations"][0]
    token = next(t["token"] for t in org["tokens"])
    created = http.post(
        "/api/checkout",
        json={"amount": 500, "description": "expires in the receiver's advance"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert created.status_code == 200, created.json
    http.post("/_sandbox/events/trigger", json={"type": "order.completed"})
    report = in_thread(lambda: http.post("/_sandbox/webhooks/flush", json={}).json)
    types = [a["eventType"] for a in report["attempts"]]
    assert types[-1] == "checkout.session.expired"
    status = http.get(f"/api/checkout/{created.json['sessionId']}").json
    assert status["status"] == "expired"


def test_a_real_clock_background_receiver_moves_the_clock_while_an_advance_waits_for_it() -> None:
    """A real clock: the background sender's receiver is in its delivery when an explicit
    advance begins (that advance waits for the attempts out); the receiver then moves the
    clock itself. Both return, and the event it made is delivered."""
    sandbox = Sandbox(Settings.load({"clock_mode": "real", "seed": 7, "tick_seconds": 0.05}))
    http = create_app(sandbox).test_client()
    entered, go_on = threading.Event(), threading.Event()

    def move(sb: Sandbox, client: FlaskClient) -> None:
        entered.set()
        assert go_on.wait(DEADLINE_SECONDS)
        sb.advance(timedelta(seconds=1))

    receiver = MovingReceiver(sandbox, http, move, trigger=1)
    sandbox.add_webhook_receiver(sandbox.info()["organizations"][0]["id"], receiver)
    sandbox.start_background()
    try:
        http.post("/_sandbox/events/trigger", json={"type": "order.completed"})
        assert entered.wait(DEADLINE_SECONDS)
        advancing = threading.Thread(
            target=lambda: sandbox.advance(timedelta(seconds=1)), daemon=True
        )
        advancing.start()
        time.sleep(0.2)  # the advance is waiting for the attempt out (no event marks it)
        go_on.set()
        advancing.join(DEADLINE_SECONDS)
        assert not advancing.is_alive(), "the advance and the receiver waited for each other"
        assert receiver.moved.wait(DEADLINE_SECONDS)
        deadline = time.monotonic() + DEADLINE_SECONDS
        while len(receiver.received) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(receiver.received) == 2
    finally:
        in_thread(sandbox.stop)  # bounded: a regression fails here instead of hanging


def test_the_same_seed_gives_the_same_bodies_when_a_receiver_moves_the_clock() -> None:
    def run() -> tuple[list[bytes], list[tuple[str, str, str]]]:
        _, http, receiver = frozen_with(MOVES["advance"], trigger=1)
        http.post("/_sandbox/events/trigger", json={"type": "order.completed"})
        report = in_thread(lambda: http.post("/_sandbox/webhooks/flush", json={}).json)
        attempts = [(a["eventId"], a["time"], a["signature"]) for a in report["attempts"]]
        return receiver.received, attempts

    first = run()
    assert len(first[0]) == 2
    assert first == run()


# --- over HTTP: a receiver calling the control plane from inside its delivery ---------------

#: A move a receiver makes through the control plane: its path and body (from the clock now).
HTTP_MOVES: dict[str, tuple[str, Callable[[datetime], dict[str, Any] | None]]] = {
    "advance": ("/_sandbox/clock/advance", lambda now: {"seconds": 60}),
    "set": ("/_sandbox/clock/set", lambda now: {"now": isoformat(now + timedelta(minutes=1))}),
    "run-due": ("/_sandbox/clock/run-due", lambda now: None),
    "flush": ("/_sandbox/webhooks/flush", lambda now: None),
}


def clock_now(server: RunningServer) -> datetime:
    now: str = call(server, "GET", "/_sandbox/clock")["clock"]["now"]
    return datetime.fromisoformat(now)


def http_move(server: RunningServer, move: str, answers: list[Any]) -> Callable[[], None]:
    path, body = HTTP_MOVES[move]
    return lambda: answers.append(call(server, "POST", path, body(clock_now(server))))


@pytest.mark.parametrize("move", HTTP_MOVES)
def test_a_receiver_moving_a_frozen_clock_over_http_inside_an_advance_is_answered(
    svc_server: RunningServer, receiver: Receiver, move: str
) -> None:
    """The advance that sends to the receiver waits for its answer; the receiver's own move
    (control plane, another connection) no longer waits for that advance: it is answered,
    then the receiver answers, and its one attempt succeeds. It used to wait for the advance
    until the attempt timed out (10 s) and the delivery was retried."""
    answers: list[Any] = []
    receiver.behaviours.append(http_move(svc_server, move, answers))
    setup_endpoint(svc_server, receiver)
    start = clock_now(svc_server)
    call(svc_server, "POST", "/_sandbox/events/trigger", {"type": "order.completed"})

    in_thread(lambda: call(svc_server, "POST", "/_sandbox/clock/advance", {"seconds": 3600}))

    [answer] = answers
    if move in ("advance", "set"):  # made while the advance stood at its first attempt
        assert answer["clock"]["now"] == isoformat(start + timedelta(minutes=1))
    made = call(svc_server, "GET", "/_sandbox/webhooks/attempts")["items"]
    assert [(a["attempt"], a["outcome"]) for a in made] == [(1, "succeeded")]
    assert len(receiver.received) == 1
    assert clock_now(svc_server) == start + timedelta(hours=1)


@pytest.mark.parametrize("svc_sandbox", ["real"], indirect=True)
def test_a_receiver_moving_a_real_clock_over_http_while_an_advance_waits_for_it(
    svc_server: RunningServer, receiver: Receiver
) -> None:
    """Real clock: the background sender's attempt is out; an advance that makes another
    attempt due waits for it before sending; the receiver, meanwhile, advances the clock
    itself. Its advance is answered, it answers, and the advance sends the next attempt."""
    go, answers = threading.Event(), []
    advance_60 = http_move(svc_server, "advance", answers)
    receiver.behaviours.append(lambda: (go.wait(DEADLINE_SECONDS), advance_60()))
    setup_endpoint(svc_server, receiver)
    auth = {"Authorization": f"Bearer {token_of(svc_server.sandbox)}"}
    call(svc_server, "POST", "/api/checkout", {"amount": 500, "description": "x"}, **auth)
    call(svc_server, "POST", "/_sandbox/events/trigger", {"type": "order.completed"})
    receiver.wait_for(1)

    outer = threading.Thread(
        target=lambda: answers.append(
            call(svc_server, "POST", "/_sandbox/clock/advance", {"seconds": 3600})
        ),
        daemon=True,
    )
    outer.start()
    wait_until(svc_server.sandbox.dispatcher.flushing)  # the advance waits for the attempt
    go.set()
    outer.join(DEADLINE_SECONDS)
    assert not outer.is_alive(), "the advance waited for its receiver's timeout"

    assert_each_delivered_once(svc_server)
    assert len(answers) == 2


def assert_each_delivered_once(server: RunningServer) -> None:
    """The receiver's event and the session's expiry, each delivered by one attempt."""
    made = call(server, "GET", "/_sandbox/webhooks/attempts")["items"]
    outcomes = sorted((a["eventType"], a["attempt"], a["outcome"]) for a in made)
    assert outcomes == [
        ("checkout.session.expired", 1, "succeeded"),
        ("order.completed", 1, "succeeded"),
    ]


def open_sessions(http: FlaskClient, token: str, count: int) -> None:
    """``count`` open checkout sessions of ``token``'s organization, through the API."""
    auth = {"Authorization": f"Bearer {token}"}
    for _ in range(count):
        body = {"amount": 500, "description": "x"}
        assert http.post("/api/checkout", json=body, headers=auth).status_code == 200


#: Sessions whose expiry an advance walks through before the one that makes an attempt due
#: (production's: no endpoint, so no attempt), so that a move made meanwhile finds the advance
#: running due work, not yet flushing.
WALKED = 3000
#: The tests opening WALKED sessions with one token: rate limits off.
UNLIMITED = {"rate_limits": False}


def wait_until_the_advance_walks(server: RunningServer, start: datetime) -> None:
    """Until the clock reaches the sessions' expiry (the advance's first batch of them)."""
    wait_until(lambda: clock_now(server) >= start + timedelta(minutes=29))


@pytest.mark.parametrize("svc_sandbox", [{"clock_mode": "real", **UNLIMITED}], indirect=True)
def test_a_receivers_move_made_while_the_advance_walks_joins_it_once_it_flushes(
    svc_server: RunningServer, svc_http: FlaskClient, receiver: Receiver
) -> None:
    """Real clock: the background sender's attempt is out at the receiver; an advance walks
    through thousands of expiries, the last of which makes an attempt due, so it will flush
    and wait for the attempt out. The receiver moves the clock while the advance still walks:
    its move waits for the advance until the advance flushes, then joins it and is answered,
    and its attempt succeeds. It used to wait for the advance until its attempt timed out."""
    start = clock_now(svc_server)
    answers: list[Any] = []

    def move_once_the_advance_walks() -> None:
        wait_until_the_advance_walks(svc_server, start)
        answers.append(call(svc_server, "POST", "/_sandbox/clock/advance", {"seconds": 1}))

    receiver.behaviours.append(move_once_the_advance_walks)
    setup_endpoint(svc_server, receiver)
    open_sessions(svc_http, token_of(svc_server.sandbox, "production"), WALKED)
    # Expires last: its event is the receiver's.
    open_sessions(svc_http, token_of(svc_server.sandbox), 1)
    call(svc_server, "POST", "/_sandbox/events/trigger", {"type": "order.completed"})
    receiver.wait_for(1)

    in_thread(lambda: call(svc_server, "POST", "/_sandbox/clock/advance", {"duration": "31m"}))
    receiver.wait_for(2)

    assert_each_delivered_once(svc_server)
    assert len(answers) == 1


@pytest.mark.parametrize("svc_sandbox", [UNLIMITED], indirect=True)
def test_a_move_that_outlasts_the_flush_it_joined_sends_what_it_made_due(
    svc_server: RunningServer, svc_http: FlaskClient, receiver: Receiver
) -> None:
    """Frozen clock: a flush is sending to a receiver; another client's advance joins it and
    walks through thousands of expiries, the last of which makes an attempt due. The receiver
    answers as soon as the advance walks, so the flush ends first: the advance then sends
    the attempt itself. It used to leave it due, for nobody until the next call."""
    start = clock_now(svc_server)
    receiver.behaviours.append(lambda: wait_until_the_advance_walks(svc_server, start))
    setup_endpoint(svc_server, receiver)
    open_sessions(svc_http, token_of(svc_server.sandbox, "production"), WALKED)
    open_sessions(svc_http, token_of(svc_server.sandbox), 1)
    call(svc_server, "POST", "/_sandbox/events/trigger", {"type": "order.completed"})
    flush = threading.Thread(
        target=lambda: call(svc_server, "POST", "/_sandbox/webhooks/flush"), daemon=True
    )
    flush.start()
    receiver.wait_for(1)  # the flush is sending: the advance below joins it
    in_thread(lambda: call(svc_server, "POST", "/_sandbox/clock/advance", {"duration": "31m"}))
    flush.join(DEADLINE_SECONDS)

    backlog = call(svc_server, "GET", "/_sandbox")["webhooks"]["backlog"]
    assert backlog["attemptsDue"] == 0
    assert [json.loads(r.body)["type"] for r in receiver.received] == [
        "order.completed",
        "checkout.session.expired",
    ]
