"""The waitress server of `serve` and the svc_server fixture: idle connections do not stall it;
closing a served emulator while clients hold keep-alive connections and requests are in flight
lets nothing escape from the server's threads, logs no waitress error and closes every socket
(pytest turns a thread's exception into an error)."""

from __future__ import annotations

import http.client
import json
import logging
import os
import socket
import threading
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest

from svc_sandbox.app import create_app
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.server import ServerThread

#: waitress's own default connection limit, which 105 idle connections used to exhaust.
WAITRESS_DEFAULT_LIMIT = 100


def test_more_idle_connections_than_waitress_default_do_not_stall_the_server(
    svc_server: RunningServer,
) -> None:
    assert svc_server.sandbox.settings.connection_limit > WAITRESS_DEFAULT_LIMIT + 50
    address = urlsplit(svc_server.url)
    idle = [
        socket.create_connection((address.hostname, address.port), timeout=10)
        for _ in range(WAITRESS_DEFAULT_LIMIT + 50)
    ]
    try:
        with urllib.request.urlopen(svc_server.url + "/_sandbox", timeout=20) as response:
            assert json.loads(response.read())["name"] == "svc-sandbox"
    finally:
        for connection in idle:
            connection.close()


def test_the_limits_are_settings_with_flags() -> None:
    from svc_sandbox.cli import build_parser, settings_from_args

    args = ["serve", "--connection-limit", "200", "--channel-timeout", "5"]
    settings = settings_from_args(build_parser().parse_args(args))
    assert (settings.connection_limit, settings.channel_timeout) == (200, 5.0)


def test_an_idle_connection_closes_after_a_channel_timeout_under_30_seconds() -> None:
    """waitress looks for idle connections every 30 s unless told: `--channel-timeout 1` kept
    one open for about 30 s."""
    sandbox = Sandbox(clock_mode="frozen", channel_timeout=1)
    sandbox.settings.host, sandbox.settings.port = "127.0.0.1", 0
    served = ServerThread(create_app(sandbox), sandbox.settings).start()
    try:
        idle = socket.create_connection(("127.0.0.1", served.port), timeout=15)
        with idle:
            idle.sendall(b"GET /_sandbox/clock HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            received = b""
            while True:  # the answer, then the end of the connection (b"") once closed
                chunk = idle.recv(65536)
                if not chunk:
                    break
                received += chunk
        assert received.startswith(b"HTTP/1.1 200")
    finally:
        served.close()


#: Servers started and closed by each thread, and the threads doing it at once.
ROUNDS = 12
THREADS = 4


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def serve_and_close(sandbox: Sandbox, failures: list[BaseException]) -> None:
    try:
        for _ in range(ROUNDS):
            server = ServerThread(
                create_app(sandbox), sandbox.settings.model_copy(update={"port": 0})
            ).start()
            idle = [
                http.client.HTTPConnection(server.host, server.port, timeout=5) for _ in range(3)
            ]
            for connection in idle:  # keep-alive: answered, left open
                connection.request("GET", "/_sandbox")
                connection.getresponse().read()
            busy = [
                socket.create_connection((server.host, server.port), timeout=5) for _ in range(6)
            ]
            for connection in busy:  # requests in flight when the server closes
                connection.sendall(b"GET /_sandbox HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 3)
            half = socket.create_connection((server.host, server.port), timeout=5)
            half.sendall(b"GET /_sandbox HTTP/1.1\r\n")  # a request still arriving
            server.close()
            server.close()  # twice does nothing
            for connection in idle:
                connection.close()
            for connection in busy:
                connection.close()
            half.close()
    except BaseException as exc:  # noqa: BLE001 - reported by the test, from its own thread
        failures.append(exc)


def test_closing_servers_with_open_connections_under_threads_raises_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sandbox = Sandbox(clock_mode="frozen", seed=1)
    caplog.set_level(logging.WARNING, logger="waitress")
    before = open_fds()
    failures: list[BaseException] = []
    threads = [
        threading.Thread(target=serve_and_close, args=(sandbox, failures)) for _ in range(THREADS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert failures == []
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []
    assert open_fds() <= before  # every listening, connection and trigger fd closed


def test_a_server_on_port_0_names_the_port_it_picked_in_the_pages_policy() -> None:
    """`serve --port 0`, `exec` and the plugin build the app before the server picks its port:
    the pages' CSP (form-action, connect-src) and the Host refusal name the served origin."""
    sandbox = Sandbox(clock_mode="frozen", seed=1, port=0)
    server = ServerThread(create_app(sandbox), sandbox.settings).start()
    try:
        origin = f"http://127.0.0.1:{server.port}"
        assert sandbox.settings.root("pay_url") == origin + "/pay"
        token = sandbox.info()["organizations"][0]["tokens"][0]["token"]
        request = urllib.request.Request(
            origin + "/api/checkout",
            data=json.dumps({"amount": 1000, "description": "Port 0"}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            link = json.loads(response.read())["checkoutUrl"]
        assert link.startswith(origin + "/pay/")
        for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}"):
            page = urllib.request.Request(link, headers={"Host": host})
            with urllib.request.urlopen(page, timeout=10) as response:
                policy = response.headers["Content-Security-Policy"]
            directives = dict(d.split(" ", 1) for d in policy.split("; "))
            assert directives["form-action"] == f"'self' {origin}"
            assert directives["connect-src"] == f"'self' {origin}"
        refused = urllib.request.Request(origin + "/_sandbox", headers={"Host": "evil.example"})
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(refused, timeout=10)
        assert f"use {origin}," in json.loads(answer.value.read())["error"]
    finally:
        server.close()


def head_of_answer(server: ServerThread, request: bytes) -> tuple[int, str]:
    """The status and Content-Type of the answer to ``request``, sent without its body."""
    with socket.create_connection((server.host, server.port), timeout=10) as connection:
        connection.sendall(request)
        with connection.makefile("rb") as answer:
            status = int(answer.readline().split()[1])
            content_type = ""
            while (line := answer.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() == "content-type":
                    content_type = value.strip()
            return status, content_type


@pytest.mark.parametrize(
    ("overrides", "size"),
    [
        ({}, 700 * 1024**2),  # over the default state limit (512 MiB) and its margin
        ({"max_state_bytes": 1024}, 2 * 1024**2),  # over the 1 MiB of every route
    ],
)
def test_a_body_far_over_what_the_app_takes_is_refused_before_it_is_sent(
    overrides: dict[str, int], size: int
) -> None:
    """waitress refuses it from the Content-Length alone (413, its plain text, docs/spec-gaps.md)
    instead of buffering up to 1 GiB for the app to refuse; a body a little over the app's
    limit still gets the app's JSON 413."""
    sandbox = Sandbox(clock_mode="frozen", seed=1, port=0, **overrides)
    server = ServerThread(create_app(sandbox), sandbox.settings).start()
    try:
        for path in ("/_sandbox/state", "/api/products"):
            head = (
                f"PUT {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {size}\r\n\r\n"
            )
            assert head_of_answer(server, head.encode()) == (413, "text/plain; charset=utf-8")
        over = b"[" + b" " * (1024 * 1024) + b"]"
        request = urllib.request.Request(
            server.origin + "/_sandbox/orgs",
            data=over,
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 413
        assert json.loads(refused.value.read())["code"] == "request_entity_too_large"
    finally:
        server.close()


def test_a_loop_error_while_stopping_is_one_line_not_a_traceback(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Twice in full test runs, `serve`'s stop printed a traceback from the server thread
    (cut after one frame: the process exited while it printed). Once stopping, an error of the
    loop is said in one line; before, it is raised as ever. The error is select()'s on a
    descriptor it cannot take (-1, where a closed socket's number could be reused at once by
    another thread and not fail)."""
    sandbox = Sandbox(clock_mode="frozen")
    sandbox.settings.host, sandbox.settings.port = "127.0.0.1", 0
    served = ServerThread(create_app(sandbox), sandbox.settings)
    served._closing.set()  # what close() sets first: the stop has begun
    served.start()
    with urllib.request.urlopen(served.origin + "/_sandbox", timeout=10) as response:
        assert response.status == 200  # looping
    sockets = served._server._map
    sockets[-1] = _Unselectable()
    served._server.trigger.pull_trigger()  # wake the loop: its next select() meets -1
    served._thread.join(timeout=10)
    assert not served._thread.is_alive()
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "svc-sandbox: the server loop ended while stopping: ValueError: " in err
    from waitress import wasyncore

    del sockets[-1]
    served._server.task_dispatcher.shutdown()
    wasyncore.close_all(sockets, ignore_all=True)  # what the ended loop left open


class _Unselectable:
    """A map entry whose descriptor select() refuses (what a socket closed under the loop is)."""

    accepting = False

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False
