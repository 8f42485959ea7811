"""The scenario's webhook receiver: a real HTTP server on 127.0.0.1 that records each delivery
and answers the statuses it was told, in turn, then 200."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from svc_sandbox.testing.loopback import LoopbackServer


def answers_problem(answers: Any) -> str | None:
    """Why ``answers`` is not a list of HTTP statuses (100-599) for the receiver, or None."""
    if not isinstance(answers, list):
        return f"answers needs a list of HTTP statuses, got {answers!r}"
    for status in answers:
        if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
            return f"answers holds {status!r}, not an HTTP status (100-599)"
    return None


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
        self._server = LoopbackServer(self._received, "scenario-webhook-receiver")

    @property
    def url(self) -> str:
        return self._server.origin + "/webhooks"

    def answer(self, statuses: list[int]) -> None:
        with self._lock:
            self.answers = list(statuses)

    def received(self) -> list[Delivery]:
        with self._lock:
            return list(self.deliveries)

    def close(self) -> None:
        self._server.close()

    def _received(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        with self._lock:
            status = self.answers.pop(0) if self.answers else 200
            self.deliveries.append(Delivery(headers, body, status))
        return status, b'{"received":true}'
