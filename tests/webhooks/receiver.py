"""Real HTTP webhook receivers on 127.0.0.1 for the tests: one that records what arrives and
answers as told (a status, a hang, a reset, garbage, or closing without an answer), and a
keep-alive one that counts its connections."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: Longest a "hang" answer waits before it gives up by itself (keeps every test bounded).
HANG_LIMIT_SECONDS = 15.0


Behaviour = int | str | Callable[[], object]


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    """Answers with ``behaviours`` in turn, then with ``default``.

    A behaviour is an int status, or "hang", "reset", "garbage", "close", or a callable run
    before answering 200 (a receiver reacting to a webhook by calling the sandbox).
    """

    def __init__(self, default: int | str = 200) -> None:
        self.default = default
        self.behaviours: list[Behaviour] = []
        self.received: list[Received] = []
        self.arrived = threading.Condition()
        #: Set to end every hang.
        self.release = threading.Event()
        self.hanging = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/hooks"

    def start(self) -> Receiver:
        self._thread.start()
        return self

    def close(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Waits (bounded) until ``count`` requests arrived; returns them."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, timeout)
            return list(self.received)

    def _next_behaviour(self) -> Behaviour:
        with self.arrived:
            return self.behaviours.pop(0) if self.behaviours else self.default

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                behaviour = receiver._next_behaviour()
                with receiver.arrived:
                    receiver.received.append(Received(self.path, dict(self.headers), body))
                    receiver.arrived.notify_all()
                if callable(behaviour):
                    behaviour()
                    behaviour = 200
                if behaviour == "hang":
                    receiver.hanging.set()
                    receiver.release.wait(HANG_LIMIT_SECONDS)
                    behaviour = 200
                if behaviour == "reset":
                    linger = struct.pack("ii", 1, 0)
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                    self.connection.close()
                    self.close_connection = True
                    return
                if behaviour == "garbage":
                    self.wfile.write(b"this is not http\r\n\r\n")
                    self.close_connection = True
                    return
                if behaviour == "close":
                    self.close_connection = True
                    return
                assert isinstance(behaviour, int)
                self.send_response(behaviour)
                if 300 <= behaviour < 400:
                    self.send_header("Location", "http://127.0.0.1:1/elsewhere")
                payload = b'{"received":true}'
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


@contextmanager
def running_receiver(default: int | str = 200) -> Iterator[Receiver]:
    receiver = Receiver(default).start()
    try:
        yield receiver
    finally:
        receiver.close()


class KeepAliveReceiver:
    """HTTP/1.1 receiver that counts connections and can close one after its next answer.

    ``idle_timeout`` closes a connection left idle that long (as real servers do: node 5 s);
    ``hold``, when set to an Event, makes each POST wait for it before answering (``entered``
    tells the test a POST is in); ``chunked`` answers with a chunked body."""

    def __init__(
        self,
        idle_timeout: float | None = None,
        hold: threading.Event | None = None,
        chunked: bool = False,
    ) -> None:
        self.connections = 0
        self.bodies: list[bytes] = []
        self.close_next = False
        self.closed = threading.Event()
        #: Connections that ended (the sender closed them, or ``idle_timeout`` did).
        self.ended = 0
        self.entered = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True
            timeout = idle_timeout

            def log_message(self, format: str, *args: object) -> None:
                return

            def setup(self) -> None:
                super().setup()
                receiver.connections += 1

            def do_POST(self) -> None:
                close, receiver.close_next = receiver.close_next, False  # before answering
                receiver.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
                if hold is not None:
                    receiver.entered.set()
                    hold.wait(HANG_LIMIT_SECONDS)
                self.send_response(200)
                if chunked:  # as Node and many frameworks answer by default
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    self.wfile.write(b"2\r\nok\r\n0\r\n\r\n")
                else:
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                # No "Connection: close": the sender cannot know until it sees the socket.
                self.close_connection = close

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def shutdown_request(self, request: Any) -> None:
                super().shutdown_request(request)
                receiver.ended += 1
                receiver.closed.set()

        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def wait_ended(self, count: int, timeout: float = 10.0) -> bool:
        """Waits (bounded) until ``count`` connections ended; says whether they did."""
        deadline = time.monotonic() + timeout
        while self.ended < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.ended >= count

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@contextmanager
def keep_alive_receivers(count: int, **options: Any) -> Iterator[list[KeepAliveReceiver]]:
    """``count`` keep-alive receivers, each on a port of its own."""
    receivers: list[KeepAliveReceiver] = []
    try:
        for _ in range(count):
            receivers.append(KeepAliveReceiver(**options))
        yield receivers
    finally:
        for receiver in receivers:
            receiver.close()
