"""``svc_webhooks``: a capturing webhook receiver on 127.0.0.1, one inbox per test.

One HTTP server per test process (per xdist worker) answers 200 to every POST and files it
under its path, ``/<inbox>``, with the sandbox time it arrived at; each test's inbox is
registered as the webhook endpoint of its ``svc_org``. A webhook is verified against the instant
it arrived, so a test may move the clock on before it reads it. ``wait_for`` advances the
sandbox clock to the next due work instead of sleeping.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from svc_sandbox.client.models import WebhookEvent
from svc_sandbox.client.signing import SIGNATURE_HEADER, SignatureError
from svc_sandbox.client.webhooks import verify_webhook
from svc_sandbox.testing.emulator import Emulator, Tenant
from svc_sandbox.testing.loopback import LoopbackServer

#: Most clock moves one ``wait_for`` makes (each to the next scheduled effect).
MAX_STEPS = 100_000


@dataclass
class ReceivedWebhook:
    headers: dict[str, str]
    body: bytes
    #: The sandbox time it arrived at (None: the clock could not be read, see ``error``); its
    #: signature's replay window counts from this instant, not from when the test reads it.
    arrived_at: datetime | None
    #: The verified event; None when the signature or the body did not check out.
    event: WebhookEvent | None = None
    #: Why verification failed (SignatureError's message), else None.
    error: str | None = None


@dataclass
class Inbox:
    #: The sandbox clock of the test's emulator, read when a webhook arrives.
    clock: Callable[[], datetime]
    received: list[ReceivedWebhook] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class WebhookReceiver:
    """The process-wide receiving server."""

    def __init__(self) -> None:
        self._inboxes: dict[str, Inbox] = {}
        self._numbers = itertools.count(1)
        self._server = LoopbackServer(self._received, "svc-webhooks")

    def _received(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        inbox = self._inboxes.get(path.strip("/"))
        if inbox is None:
            return 404, b""
        try:
            item = ReceivedWebhook(headers, body, inbox.clock())
        except Exception as error:  # an unreadable clock must not lose the webhook
            reason = f"{type(error).__name__}: {error}"
            item = ReceivedWebhook(
                headers, body, None, error=f"no sandbox time at arrival: {reason}"
            )
        with inbox.lock:
            inbox.received.append(item)
        return 200, b""

    def open_inbox(self, clock: Callable[[], datetime]) -> tuple[str, Inbox]:
        key = f"hooks-{next(self._numbers)}"
        inbox = self._inboxes[key] = Inbox(clock)
        return f"{self._server.origin}/{key}", inbox

    def close_inbox(self, url: str) -> None:
        self._inboxes.pop(url.rsplit("/", 1)[-1], None)

    def close(self) -> None:
        self._server.close()


class SvcWebhooks:
    """The webhooks a test's organization received, each verified against its secret at the
    sandbox time it arrived (the 300 s replay tolerance counts on the sandbox clock)."""

    def __init__(self, emulator: Emulator, receiver: WebhookReceiver, tenant: Tenant) -> None:
        self._emulator = emulator
        self._receiver = receiver
        self.url, self._inbox = receiver.open_inbox(emulator.now)
        self.secret = emulator.add_webhook_endpoint(tenant.sandbox.id, self.url, None)
        emulator.add_webhook_endpoint(tenant.production.id, self.url, self.secret)

    def close(self) -> None:
        self._receiver.close_inbox(self.url)

    @property
    def received(self) -> list[ReceivedWebhook]:
        """Every POST so far, in arrival order (verified, against its arrival time, on first
        look)."""
        with self._inbox.lock:
            items = list(self._inbox.received)
        for item in items:
            if item.arrived_at is not None and item.event is None and item.error is None:
                self._verify(item, item.arrived_at)
        return items

    def _verify(self, item: ReceivedWebhook, arrived_at: datetime) -> None:
        header = next((v for k, v in item.headers.items() if k.lower() == "x-svc-signature"), None)
        try:
            item.event = verify_webhook(item.body, header, self.secret, now=arrived_at)
        except SignatureError as error:
            item.error = f"{SIGNATURE_HEADER} rejected ({error.reason}): {error}"

    def events(self, type: str | None = None) -> list[WebhookEvent]:
        """The verified events, in arrival order; only ``type`` when given."""
        return [
            item.event
            for item in self.received
            if item.event is not None and (type is None or item.event.type == type)
        ]

    def wait_for(
        self, type: str, *, within: timedelta = timedelta(days=1), **data: Any
    ) -> WebhookEvent:
        """The first verified ``type`` event whose ``data`` has the given fields (``sessionId=
        ...``). Sends what is due, then moves the sandbox clock from one scheduled effect to
        the next (never sleeping) for at most ``within`` of sandbox time."""
        deadline = self._emulator.now() + within
        self._emulator.advance(timedelta(0))
        for _ in range(MAX_STEPS):
            found = self._match(type, data)
            if found is not None:
                return found
            due = self._emulator.next_due()
            if due is None or due > deadline:
                break
            self._emulator.advance(max(due - self._emulator.now(), timedelta(0)))
        raise AssertionError(self._missing(type, data, within))

    def _match(self, type: str, data: dict[str, Any]) -> WebhookEvent | None:
        for item in self.received:
            event = item.event
            if event is None:
                raise AssertionError(f"a webhook failed verification: {item.error}")
            if event.type == type and all(event.data.get(k) == v for k, v in data.items()):
                return event
        return None

    def _missing(self, type: str, data: dict[str, Any], within: timedelta) -> str:
        seen = [(e.type, e.data.get("sessionId")) for e in self.events()]
        wanted = f"{type} webhook" + (f" with {data}" if data else "")
        return f"no {wanted} arrived within {within} of sandbox time; received {seen or 'none'}"
