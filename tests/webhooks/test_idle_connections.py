"""The sender's idle keep-alive connections stay bounded: a receiver per test (a new port each
time) must not leave a socket per test behind. At most ``MAX_IDLE_CONNECTIONS`` idle (the one
idle longest closed first), none idle past ``IDLE_SECONDS`` once the sender is used again,
none to an origin no endpoint points at any more, none after a reset or an import. Open
sockets are counted in /proc (Linux), as the audit counted them."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.webhooks.sender import MAX_IDLE_CONNECTIONS, Sender, origin
from tests.webhooks.conftest import add_endpoint, flush, trigger
from tests.webhooks.receiver import keep_alive_receivers

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/net/tcp").exists(), reason="counts open sockets in /proc (Linux)"
)

BODY = b'{"type":"order.completed"}'
HEADERS = {"Content-Type": "application/json"}


def sockets_to(ports: Collection[int]) -> int:
    """This process's TCP sockets whose far end is 127.0.0.1 on one of ``ports``: the
    sender's connections to those receivers (open, or half-closed by the receiver)."""
    wanted: set[str] = set()
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[2].rsplit(":", 1)[1], 16) in ports:
                wanted.add(f"socket:[{fields[9]}]")
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") in wanted
        except OSError:  # closed meanwhile (the listing's own descriptor)
            continue
    return count


@pytest.fixture
def http(svc_sandbox: Sandbox) -> FlaskClient:
    return create_app(svc_sandbox).test_client()


def deliver_once(http: FlaskClient) -> dict[str, Any]:
    trigger(http, "order.completed")
    [attempt] = flush(http)
    assert attempt["outcome"] == "succeeded", attempt
    return attempt


@pytest.mark.parametrize("then", ["delete", "disable"])
def test_a_receiver_per_test_leaves_a_bounded_number_of_connections(
    svc_sandbox: Sandbox, http: FlaskClient, then: str
) -> None:
    """The audit's run: a receiver per test, each started, sent one webhook and stopped, its
    endpoint then deleted (nothing left) or only disabled (the newest ones stay, up to the
    bound). It left one socket per receiver until `serve` ran out of descriptors."""
    count = MAX_IDLE_CONNECTIONS + 8
    with keep_alive_receivers(count) as receivers:
        for receiver in receivers:
            endpoint = add_endpoint(http, receiver.url)
            deliver_once(http)
            receiver.close()  # the test is over: its receiver is gone
            path = f"/_sandbox/webhooks/endpoints/{endpoint['id']}"
            if then == "delete":
                assert http.delete(path, json={}).status_code == 200
            else:
                assert http.patch(path, json={"enabled": False}).status_code == 200
        ports = [r.port for r in receivers]
        kept = [] if then == "delete" else ports[-MAX_IDLE_CONNECTIONS:]
        assert sockets_to(ports) == len(kept)
        newest = receivers[count - len(kept) :]
        assert svc_sandbox.dispatcher.sender.idle() == [origin(r.url) for r in newest]
        assert svc_sandbox.dispatcher.sender.connections_opened == count


def test_the_connection_idle_longest_is_closed_first_and_a_hot_one_stays() -> None:
    sender = Sender(max_idle=2)
    with keep_alive_receivers(3) as (a, b, c):
        for receiver in (a, b, a, c, a):
            assert sender.post(receiver.url, BODY, HEADERS, 5).succeeded
        assert sender.idle() == [origin(c.url), origin(a.url)]
        assert b.wait_ended(1), "the sender kept the connection idle longest"
        assert (a.connections, b.connections, c.connections) == (1, 1, 1)  # a reused twice
        assert sockets_to([a.port, b.port, c.port]) == 2
        sender.close()
        assert sockets_to([a.port, b.port, c.port]) == 0


def test_a_connection_idle_past_the_idle_time_is_closed_at_the_next_use() -> None:
    # An idle time long enough that two POSTs in a row stay within it on a loaded CI machine.
    sender = Sender(idle_seconds=1.0)
    with keep_alive_receivers(2) as (a, b):
        assert sender.post(a.url, BODY, HEADERS, 5).succeeded
        assert sender.post(a.url, BODY, HEADERS, 5).succeeded  # within the idle time: reused
        assert a.connections == 1
        time.sleep(1.1)
        assert sender.post(b.url, BODY, HEADERS, 5).succeeded
        assert sender.idle() == [origin(b.url)]
        assert a.wait_ended(1) and sockets_to([a.port]) == 0
        assert sender.post(a.url, BODY, HEADERS, 5).succeeded  # a new connection
        assert a.connections == 2
        sender.close()


@pytest.mark.parametrize("how", ["reset", "import"])
def test_a_reset_or_an_import_closes_every_connection(
    svc_sandbox: Sandbox, http: FlaskClient, how: str
) -> None:
    with keep_alive_receivers(3) as receivers:
        for receiver in receivers:
            add_endpoint(http, receiver.url)
        trigger(http, "order.completed")
        assert [a["outcome"] for a in flush(http)] == ["succeeded"] * 3
        ports = [r.port for r in receivers]
        assert sockets_to(ports) == 3
        state = http.get("/_sandbox/state").json
        if how == "reset":
            assert http.post("/_sandbox/reset", json={}).status_code == 200
        else:
            assert http.put("/_sandbox/state", json=state).status_code == 200
        assert sockets_to(ports) == 0
        assert svc_sandbox.dispatcher.sender.idle() == []
        assert all(r.wait_ended(1) for r in receivers)
        if how == "import":  # the imported endpoints are delivered to on new connections
            trigger(http, "order.completed")
            assert [a["outcome"] for a in flush(http)] == ["succeeded"] * 3
            assert [r.connections for r in receivers] == [2, 2, 2]


def test_a_refused_import_keeps_the_connections(http: FlaskClient) -> None:
    with keep_alive_receivers(1) as [receiver]:
        add_endpoint(http, receiver.url)
        deliver_once(http)
        answer = http.put("/_sandbox/state", json={"format": "not a state"})
        assert answer.status_code == 400
        assert sockets_to([receiver.port]) == 1
        deliver_once(http)
        assert receiver.connections == 1


def test_a_connection_stays_while_another_endpoint_points_at_its_origin(
    svc_sandbox: Sandbox, http: FlaskClient
) -> None:
    with keep_alive_receivers(2) as (shared, other):
        first = add_endpoint(http, shared.url)
        second = add_endpoint(http, shared.url.replace("/hooks", "/other-path"))
        trigger(http, "order.completed")
        assert [a["outcome"] for a in flush(http)] == ["succeeded"] * 2
        assert (
            http.delete(f"/_sandbox/webhooks/endpoints/{first['id']}", json={}).status_code == 200
        )
        assert sockets_to([shared.port]) == 1
        path = f"/_sandbox/webhooks/endpoints/{second['id']}"
        assert http.patch(path, json={"url": other.url}).status_code == 200
        assert sockets_to([shared.port]) == 0  # no endpoint points there any more
        assert shared.wait_ended(1)
        deliver_once(http)
        assert svc_sandbox.dispatcher.sender.idle() == [origin(other.url)]
        assert shared.connections == 1


def test_a_connection_out_during_a_reset_is_closed_when_it_comes_back() -> None:
    hold = threading.Event()
    sender = Sender()
    with keep_alive_receivers(1, hold=hold) as [receiver]:
        outcome: list[bool] = []
        post = threading.Thread(
            target=lambda: outcome.append(sender.post(receiver.url, BODY, HEADERS, 10).succeeded)
        )
        post.start()
        try:
            assert receiver.entered.wait(10)
            sender.close()  # what a reset does, while the POST is out
        finally:
            hold.set()
            post.join(10)
        assert outcome == [True]
        assert sender.idle() == []
        assert receiver.wait_ended(1) and sockets_to([receiver.port]) == 0


#: Run in a process allowed few descriptors: receivers one after another, each sent one
#: webhook, then stopped, its endpoint left (disabled). Prints each attempt's outcome.
RECEIVER_PER_TEST = """
import json, resource, sys
from tests.webhooks.receiver import KeepAliveReceiver
from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox

limit, count = int(sys.argv[1]), int(sys.argv[2])
sandbox = Sandbox(clock_mode="frozen", seed=1, port=0, webhook_timeout_seconds=2)
http = create_app(sandbox).test_client()
resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
outcomes = []
try:
    for _ in range(count):
        receiver = KeepAliveReceiver(idle_timeout=0.05)
        endpoint = http.post("/_sandbox/webhooks/endpoints", json={"url": receiver.url}).json
        http.post("/_sandbox/events/trigger", json={"type": "order.completed"})
        flushed = http.post("/_sandbox/webhooks/flush", json={}).json
        outcomes += [a["message"] for a in flushed["attempts"]]
        if outcomes[-1] != "answered 200":
            break
        receiver.close()
        path = "/_sandbox/webhooks/endpoints/" + endpoint["id"]
        http.patch(path, json={"enabled": False})
except OSError as exc:
    outcomes.append(f"{type(exc).__name__}: {exc}")
print(json.dumps(outcomes))
"""


def test_a_receiver_per_test_does_not_run_the_process_out_of_descriptors() -> None:
    """The audit's crash, made small: with 64 descriptors allowed, 100 receivers one after
    another. Keeping a socket per receiver ran out of descriptors ("Too many open files");
    bounded, every delivery succeeds."""
    root = Path(__file__).parents[2]
    run = subprocess.run(
        [sys.executable, "-c", RECEIVER_PER_TEST, "64", "100"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    outcomes = json.loads(run.stdout)
    assert outcomes == ["answered 200"] * 100, [m for m in outcomes if m != "answered 200"][:3]


def test_a_connection_past_descriptor_1023_is_still_reused() -> None:
    """A busy server's sockets get descriptors past 1023, which ``select`` refuses: asking it
    whether the receiver closed the idle connection failed, so it was never reused."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if max(soft, hard) < 1200 and hard != resource.RLIM_INFINITY:
        pytest.skip("the system allows fewer than 1200 descriptors")
    if soft != resource.RLIM_INFINITY and soft < 1200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1200, hard))
    padding: list[int] = []
    sender = Sender()
    try:
        with keep_alive_receivers(1) as [receiver]:
            while not padding or padding[-1] < 1100:
                padding.append(os.open(os.devnull, os.O_RDONLY))
            for _ in range(3):
                assert sender.post(receiver.url, BODY, HEADERS, 5).succeeded
            assert receiver.connections == 1
    finally:
        sender.close()
        for fd in padding:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
