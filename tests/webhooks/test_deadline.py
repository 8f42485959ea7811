"""The webhook timeout is one deadline per attempt (spec §6: "Must return 2xx within 10
seconds"; §8: "Webhook | 10 s response timeout"), and the answer is its status line and
headers: receivers that drip their answer, or never finish its body, on raw sockets."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.webhooks.conftest import add_endpoint, flush, trigger
from tests.webhooks.receiver import running_receiver

TIMEOUT_SECONDS = 0.3
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"


def client_with_timeout() -> FlaskClient:
    sandbox = Sandbox(clock_mode="frozen", seed=1, port=0, webhook_timeout_seconds=TIMEOUT_SECONDS)
    return create_app(sandbox).test_client()


class RawReceiver:
    """Accepts connections on 127.0.0.1 and answers the first request on each with
    ``answer(conn)``, one thread per connection."""

    def __init__(self, answer: Callable[[socket.socket], None]) -> None:
        self.answer = answer
        self.connections = 0
        self.done = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.02)  # accept() wakes up to see ``done``
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/hooks"

    def _serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                self.answer(conn)
            except OSError:
                pass  # the sandbox hung up

    def close(self) -> None:
        self.done.set()
        self._thread.join(timeout=10)
        self._listener.close()


@contextmanager
def raw_receiver(answer: Callable[[socket.socket], None]) -> Iterator[RawReceiver]:
    receiver = RawReceiver(answer)
    try:
        yield receiver
    finally:
        receiver.close()


def test_an_answer_dripped_byte_by_byte_times_out_at_the_deadline() -> None:
    sent: list[int] = []
    # Each byte comes well within the timeout, the whole answer well after it.
    interval = TIMEOUT_SECONDS / 3

    def drip(conn: socket.socket) -> None:
        for byte in ANSWER:
            conn.sendall(bytes([byte]))
            sent.append(byte)
            if sent and len(sent) < len(ANSWER):
                threading.Event().wait(interval)

    client = client_with_timeout()
    with raw_receiver(drip) as dripping, running_receiver(200) as healthy:
        add_endpoint(client, dripping.url)
        add_endpoint(client, healthy.url)
        trigger(client, "order.completed")
        first, second = flush(client)
        dripping.done.set()
    assert (first["outcome"], first["error"], first["statusCode"]) == ("failed", "timeout", None)
    assert first["message"] == f"no answer within {TIMEOUT_SECONDS:g} s"
    assert first["durationMs"] < len(ANSWER) * interval * 1000 / 2  # not held by the drip
    assert len(sent) < len(ANSWER)  # the sandbox hung up before the answer was complete
    assert (second["outcome"], second["statusCode"]) == ("succeeded", 200)
    assert len(healthy.received) == 1


HEADS_WITHOUT_A_WHOLE_BODY = {
    "no length, connection left open": b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nok",
    "a length it does not fill": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nok",
}


@pytest.mark.parametrize(
    "head", HEADS_WITHOUT_A_WHOLE_BODY.values(), ids=list(HEADS_WITHOUT_A_WHOLE_BODY)
)
def test_a_2xx_head_in_time_is_a_success_without_its_body(head: bytes) -> None:
    def unfinished(conn: socket.socket) -> None:
        conn.sendall(head)
        receiver.done.wait(10)  # sends nothing more, keeps the connection open

    client = client_with_timeout()
    with raw_receiver(unfinished) as receiver:
        add_endpoint(client, receiver.url)
        trigger(client, "order.completed")
        [attempt] = flush(client)
        assert (attempt["outcome"], attempt["error"], attempt["statusCode"]) == (
            "succeeded",
            None,
            200,
        )
        assert attempt["message"] == "answered 200"
        assert attempt["responseSnippet"] == "ok"
        deliveries = client.get("/_sandbox/webhooks/deliveries").json["items"]  # type: ignore[index]
        assert [(d["status"], d["attempts"]) for d in deliveries] == [("succeeded", 1)]
        trigger(client, "order.completed")
        assert [a["outcome"] for a in flush(client)] == ["succeeded"]
        assert receiver.connections == 2  # the unfinished answer's connection was not reused
