"""The event log: every event the sandbox emits, in order, with sandbox ids and timestamps.

Producers (checkout, orders) call ``emit``; consumers (webhook delivery) subscribe with
``subscribe`` and are called, under the sandbox lock, for each new event.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from svc_sandbox.client.signing import encode, envelope, sample_data
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.json_input import MAX_DEPTH, nesting
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, snapshot
from svc_sandbox.core.validation import one_of

#: What every event id starts with (core/ids.py draws the rest).
EVENT_PREFIX = "evt_"

EVENT_TYPES = ("order.created", "order.completed", "checkout.session.expired")
#: How deep a triggered event's ``data`` may nest: the export holds it 5 levels under its root
#: (services.events.events[i].data), and the import takes a document of MAX_DEPTH levels.
TRIGGER_DATA_NESTING = MAX_DEPTH - 8


def check_event_type(value: str, field_name: str = "type") -> str:
    return one_of(value, EVENT_TYPES, field_name)


@dataclass(frozen=True, slots=True)
class Event:
    """An event as emitted: never changed after (``data`` included), so state snapshots
    share it (core/records.py)."""

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
    """Events by id, oldest first. Keeps the newest ``events_kept`` (a setting) plus every
    event a pending delivery still has to send (``hold``/``release``)."""

    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        self._by_id: dict[str, Event] = {}
        self._listeners: list[Listener] = []
        self._holds: Counter[str] = Counter()
        #: The encoded body of each held event (every attempt sends the same bytes).
        self._bodies: dict[str, bytes] = {}
        self.kept = ctx.settings.events_kept

    @property
    def events(self) -> list[Event]:
        """Every event kept, oldest first."""
        return list(self._by_id.values())

    def hold(self, event_id: str) -> None:
        """A pending delivery needs this event: retention keeps it until ``release``."""
        self._holds[event_id] += 1

    def release(self, event_id: str) -> None:
        self._holds[event_id] -= 1
        if self._holds[event_id] <= 0:
            del self._holds[event_id]
            self._bodies.pop(event_id, None)
            self._trim()

    def set_holds(self, event_ids: list[str]) -> None:
        self._holds = Counter(event_ids)
        self._bodies = {}

    def body_of(self, event_id: str) -> bytes:
        """The bytes every delivery of the event sends (encoded once while a delivery holds
        it); ``{}`` for an event no longer kept."""
        body = self._bodies.get(event_id)
        if body is None:
            event = self._by_id.get(event_id)
            body = event.body() if event is not None else b"{}"
            if event_id in self._holds:
                self._bodies[event_id] = body
        return body

    def _trim(self) -> None:
        """Drops the oldest events beyond the retention (amortized: a tenth at a time)."""
        if len(self._by_id) <= self.kept + self.kept // 10:
            return
        excess = len(self._by_id) - self.kept
        for event_id in list(self._by_id)[:excess]:
            if event_id not in self._holds:
                del self._by_id[event_id]

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    @locked
    def emit(self, org_id: str, environment: str, type_: str, data: dict[str, Any]) -> Event:
        if type_ not in EVENT_TYPES:
            raise ValueError(f"unknown event type {type_!r}")
        event = Event(
            id=self.ids.object_id(self._by_id, EVENT_PREFIX),
            type=type_,
            created=self.clock.now(),
            org_id=org_id,
            environment=environment,
            data=data,
        )
        self._by_id[event.id] = event
        for listener in self._listeners:
            listener(event)
        self._trim()
        return event

    @locked
    def trigger(
        self, org_id: str, environment: str, type_: str, data: dict[str, Any] | None = None
    ) -> Event:
        """Emits a test event (like ``stripe trigger``): the example data of the type with fresh
        ids, with the given ``data`` fields replacing the example's."""
        check_event_type(type_)
        if data is not None and nesting(data) > TRIGGER_DATA_NESTING:
            # The export keeps an event's data a few levels deeper than this body did, and an
            # import is held to the 64 levels of any body: it must be able to read it back.
            raise ValidationFailed(f"data nests deeper than {TRIGGER_DATA_NESTING} levels")
        now = self.clock.now()
        example = sample_data(type_, self.ids.object_id(), self.ids.object_id(), now)
        return self.emit(org_id, environment, type_, {**example, **(data or {})})

    @locked
    def query(
        self, org_id: str | None = None, type_: str | None = None, session_id: str | None = None
    ) -> list[Event]:
        return [
            e
            for e in self._by_id.values()
            if (org_id is None or e.org_id == org_id)
            and (type_ is None or e.type == type_)
            and (session_id is None or e.data.get("sessionId") == session_id)
        ]

    @locked
    def get(self, event_id: str) -> Event | None:
        return self._by_id.get(event_id)

    def export(self) -> dict[str, Any]:
        return {"events": [snapshot(e) for e in self._by_id.values()]}

    def restore(self, data: dict[str, Any]) -> None:
        events = [from_json(Event, e) for e in data["events"]]
        self._by_id = {e.id: e for e in events}
