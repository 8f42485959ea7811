"""The event log: every event the sandbox emits, in order, with sandbox ids and timestamps.

Producers (checkout, orders) call ``emit``; consumers (webhook delivery) subscribe with
``subscribe`` and are called, under the sandbox lock, for each new event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from svc_sandbox.client.signing import encode, envelope, sample_data
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, to_json
from svc_sandbox.core.validation import one_of

EVENT_TYPES = ("order.created", "order.completed", "checkout.session.expired")


def check_event_type(value: str, field_name: str = "type") -> str:
    return one_of(value, EVENT_TYPES, field_name)


@dataclass
class Event:
    id: str
    type: str
    created: datetime
    org_id: str
    environment: str
    data: dict[str, Any] = field(default_factory=dict)

    def envelope(self) -> dict[str, Any]:
        """The JSON document a receiver gets (see docs/webhooks.md, The envelope)."""
        return envelope(self.id, self.type, self.created, self.environment, self.org_id, self.data)

    def body(self) -> bytes:
        """The exact bytes every delivery of this event sends."""
        return encode(self.envelope())


Listener = Callable[[Event], None]


class EventLog(Service):
    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        self.events: list[Event] = []
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    @locked
    def emit(self, org_id: str, environment: str, type_: str, data: dict[str, Any]) -> Event:
        if type_ not in EVENT_TYPES:
            raise ValueError(f"unknown event type {type_!r}")
        event = Event(
            id="evt_" + self.ids.object_id(),
            type=type_,
            created=self.clock.now(),
            org_id=org_id,
            environment=environment,
            data=data,
        )
        self.events.append(event)
        for listener in self._listeners:
            listener(event)
        return event

    @locked
    def trigger(
        self, org_id: str, environment: str, type_: str, data: dict[str, Any] | None = None
    ) -> Event:
        """Emits a test event (like ``stripe trigger``): the example data of the type with fresh
        ids, with the given ``data`` fields replacing the example's."""
        check_event_type(type_)
        now = self.clock.now()
        example = sample_data(type_, self.ids.object_id(), self.ids.object_id(), now)
        return self.emit(org_id, environment, type_, {**example, **(data or {})})

    @locked
    def query(
        self, org_id: str | None = None, type_: str | None = None, session_id: str | None = None
    ) -> list[Event]:
        return [
            e
            for e in self.events
            if (org_id is None or e.org_id == org_id)
            and (type_ is None or e.type == type_)
            and (session_id is None or e.data.get("sessionId") == session_id)
        ]

    @locked
    def get(self, event_id: str) -> Event | None:
        return next((e for e in self.events if e.id == event_id), None)

    def export(self) -> dict[str, Any]:
        return {"events": [to_json(e) for e in self.events]}

    def restore(self, data: dict[str, Any]) -> None:
        self.events = [from_json(Event, e) for e in data["events"]]
