"""The scenario's webhook receiver: a real HTTP server on 127.0.0.1 that records each delivery
and answers the statuses it was told, in turn, then 200."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Delivery:
    headers: dict[str, str]
    body: bytes
    answered: int
    #: Set when an expect_webhook step took it.
    claimed: bool = False

    def envelope(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None


class WebhookReceiver:
    def __init__(self) -> None:
        self.answers: list[int] = []
        self.deliveries: list[Delivery] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scenario-webhook-receiver",
            daemon=True,
        )
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/webhooks"

    def answer(self, statuses: list[int]) -> None:
        with self._lock:
            self.answers = list(statuses)

    def received(self) -> list[Delivery]:
        with self._lock:
            return list(self.deliveries)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver._lock:
                    status = receiver.answers.pop(0) if receiver.answers else 200
                    receiver.deliveries.append(Delivery(dict(self.headers), body, status))
                payload = b'{"received":true}'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler
