"""Webhook deliveries: which event goes to which endpoint, when each attempt is due, and the
journal of every attempt. Plain state under the sandbox lock; no HTTP here.

An event emitted for an organization becomes one delivery per matching enabled endpoint. The
first attempt is a scheduler entry due at the event's time; when the scheduler runs it, the
attempt joins the *due* queue. The dispatcher (webhooks/dispatcher.py) takes due attempts one
at a time (``take_next``), POSTs them outside the lock and reports back
(``record_and_take_next``), which journals the attempt and schedules the next retry counted
from the attempt's due time, or settles the delivery.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from typing_extensions import TypedDict

from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import Conflict, NotFound, ValidationFailed, found
from svc_sandbox.core.lifecycle import Lifecycle, Transition
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, snapshot
from svc_sandbox.webhooks.endpoints import EndpointService, WebhookEndpoint
from svc_sandbox.webhooks.events import Event, EventLog
from svc_sandbox.webhooks.sender import INPROCESS_SCHEME, Outcome, origin
from svc_sandbox.webhooks.signing import SIGNATURE_HEADER, sign

ATTEMPT_KIND = "webhook.attempt"
USER_AGENT = "svc-sandbox-webhooks/1"
#: What every delivery id starts with (core/ids.py draws the rest).
DELIVERY_PREFIX = "whd_"
#: The error of an attempt whose signature could not be made (not sent; retried).
SIGNING_FAILED = "signing_failed"


class DeliveryStatus(StrEnum):
    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


DELIVERY_LIFECYCLE = Lifecycle(
    "webhook delivery",
    [
        Transition("pending", "succeeded", "an attempt got a 2xx within the timeout"),
        Transition("pending", "failed", "the last retry failed, or the endpoint was deleted"),
    ],
)


class AttemptPayload(TypedDict):
    """What a webhook attempt scheduler entry carries."""

    deliveryId: str
    attempt: int


@dataclass(slots=True)
class Delivery:
    id: str
    event_id: str
    event_type: str
    endpoint_id: str
    org_id: str
    created_at: datetime
    status: DeliveryStatus = DeliveryStatus.PENDING
    attempts: int = 0
    next_attempt_at: datetime | None = None
    redelivery_of: str | None = None

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "eventId": self.event_id,
            "eventType": self.event_type,
            "endpointId": self.endpoint_id,
            "organizationId": self.org_id,
            "status": self.status.value,
            "attempts": self.attempts,
            "nextAttemptAt": _iso(self.next_attempt_at),
            "redeliveryOf": self.redelivery_of,
            "createdAt": isoformat(self.created_at),
        }


@dataclass(slots=True)
class Attempt:
    delivery_id: str
    event_id: str
    event_type: str
    endpoint_id: str
    org_id: str
    number: int
    #: The attempt's due time on the sandbox clock; also the signature's ``t``.
    time: datetime
    url: str
    signature: str
    succeeded: bool
    status_code: int | None
    error: str | None
    message: str
    #: Wall time the receiver took: an observation, not state, so exported as 0 (an export is
    #: the same bytes for the same seed and requests).
    duration_ms: float
    response_snippet: str
    next_attempt_at: datetime | None = None

    def to_public(self) -> dict[str, Any]:
        return {
            "deliveryId": self.delivery_id,
            "eventId": self.event_id,
            "eventType": self.event_type,
            "endpointId": self.endpoint_id,
            "organizationId": self.org_id,
            "attempt": self.number,
            "time": isoformat(self.time),
            "url": self.url,
            "signature": self.signature,
            "outcome": "succeeded" if self.succeeded else "failed",
            "statusCode": self.status_code,
            "error": self.error,
            "message": self.message,
            "durationMs": self.duration_ms,
            "responseSnippet": self.response_snippet,
            "nextAttemptAt": _iso(self.next_attempt_at),
        }


def _exported(attempt: Attempt) -> Attempt:
    """A copy of ``attempt`` for an export, its wall-time duration 0 (see ``Attempt``)."""
    copied = snapshot(attempt)
    copied.duration_ms = 0.0
    return copied


@dataclass(order=True, slots=True)
class DueAttempt:
    due: datetime
    seq: int
    delivery_id: str = field(compare=False)
    number: int = field(compare=False)


@dataclass
class ReceiverFault:
    """Makes the next ``count`` attempts fail whatever the receiver answers."""

    count: int = 0
    #: True: still POST (the receiver sees the event), then count the attempt as failed.
    send: bool = False

    def to_public(self) -> dict[str, Any]:
        return {"count": self.count, "send": self.send}


#: Where an attempt goes, for sending one at a time per receiver: the origin of its URL (its
#: kept connection's key), or an in-process endpoint's own URL.
Lane = tuple[str, str, int | None] | str


def lane_of(url: str) -> Lane:
    """The lane of an endpoint URL: attempts of one lane go out one at a time, in due order."""
    return url if url.startswith(INPROCESS_SCHEME) else origin(url)


@dataclass(slots=True)
class Outgoing:
    """One attempt taken off the due queue, ready to POST (or to settle without sending)."""

    due: DueAttempt
    #: The record the attempt was taken for: after a reset or an import, a delivery with the
    #: same id (ids repeat from the seed) is another record, which this outcome must not touch.
    delivery: Delivery
    url: str
    body: bytes
    headers: dict[str, str]
    timeout: float
    #: When set, the attempt fails with this outcome; ``send`` says whether it POSTs anyway.
    forced: Outcome | None = None
    send: bool = True
    #: No retry after this attempt (the endpoint is gone).
    final: bool = False

    @property
    def lane(self) -> Lane | None:
        """The receiver this attempt waits on, None when it is not sent."""
        return lane_of(self.url) if self.send and self.url else None


def _iso(instant: datetime | None) -> str | None:
    return None if instant is None else isoformat(instant)


class DeliveryService(Service):
    def __init__(
        self,
        ctx: ServiceContext,
        events: EventLog,
        endpoints: EndpointService,
    ) -> None:
        super().__init__(ctx)
        self.events = events
        self.endpoints = endpoints
        self.retry_delays: list[timedelta] = ctx.settings.webhook_retry_delays
        self.timeout: float = ctx.settings.webhook_timeout_seconds
        self.deliveries: dict[str, Delivery] = {}
        self.deliveries_kept = ctx.settings.deliveries_kept
        #: The journal keeps the ``webhook_attempts_kept`` most recent attempts.
        self.attempts: deque[Attempt] = deque(maxlen=ctx.settings.webhook_attempts_kept)
        #: Attempts due and not sent yet: a heap on (due, seq), so the order is deterministic.
        self.due: list[tuple[datetime, int, DueAttempt]] = []
        #: Attempts taken off ``due`` whose POST is out (by ``seq``) until their outcome is
        #: recorded: an export taken meanwhile lists them as due, so an import sends them.
        self.sending: dict[int, DueAttempt] = {}
        #: Due attempts set aside by ``take_next`` because their receiver was busy with an
        #: earlier one (parallel sending, per lane), a heap per lane; a take that finds the
        #: lane free moves its earliest back to ``due``.
        self.parked: dict[Lane, list[tuple[datetime, int, DueAttempt]]] = {}
        self._settled = 0
        self.fault = ReceiverFault()
        self._due_seq = 0
        #: Attempts recorded since the start (the journal keeps only the latest ones).
        self.attempts_made = 0
        self.scheduler.register(ATTEMPT_KIND, self.on_attempt_due, AttemptPayload)
        events.subscribe(self.on_event)
        # An endpoint moved to another URL (or deleted): its set-aside attempts were keyed by
        # the lane they had then; they compete again under the lane they have now.
        endpoints.urls_in_use.append(lambda urls: self._set_aside_back())

    @property
    def max_attempts(self) -> int:
        return 1 + len(self.retry_delays)

    # --- producing deliveries (under the lock) ----------------------------------------------

    def on_event(self, event: Event) -> None:
        """EventLog listener: one delivery per matching enabled endpoint, first attempt at once."""
        for endpoint in self.endpoints.matching(event.org_id, event.type):
            self._start(event, endpoint, event.created)

    def _start(
        self, event: Event, endpoint: WebhookEndpoint, due: datetime, of: str | None = None
    ) -> Delivery:
        delivery = Delivery(
            id=self.ids.object_id(self.deliveries, DELIVERY_PREFIX),
            event_id=event.id,
            event_type=event.type,
            endpoint_id=endpoint.id,
            org_id=event.org_id,
            created_at=self.clock.now(),
            redelivery_of=of,
        )
        self.deliveries[delivery.id] = delivery
        self.events.hold(event.id)  # retention keeps the event until the delivery settles
        self._schedule(delivery, 1, due)
        return delivery

    def _schedule(self, delivery: Delivery, number: int, due: datetime) -> None:
        delivery.next_attempt_at = due
        self.scheduler.schedule(due, ATTEMPT_KIND, {"deliveryId": delivery.id, "attempt": number})

    def on_attempt_due(self, payload: dict[str, Any]) -> None:
        """Scheduler handler (the scheduler runs its entries under the lock): the attempt is
        due now; the dispatcher sends it outside the lock."""
        delivery = self.deliveries.get(payload["deliveryId"])
        if delivery is None or delivery.status is not DeliveryStatus.PENDING:
            return
        self._due_seq += 1
        now = self.clock.now()
        due = DueAttempt(now, self._due_seq, delivery.id, payload["attempt"])
        heapq.heappush(self.due, (now, self._due_seq, due))

    @locked
    def redeliver(self, event_id: str, endpoint_id: str | None = None) -> list[Delivery]:
        """Sends ``event_id`` again, now, as new deliveries with their own retries."""
        event = self.events.get(event_id)
        if event is None:
            raise NotFound(f"event {event_id} not found")
        if endpoint_id is not None:
            endpoint = self.endpoints.get(endpoint_id)
            if endpoint.org_id != event.org_id:
                raise ValidationFailed(
                    f"endpointId {endpoint_id} belongs to another organization than the event"
                )
            # A named endpoint takes the event whatever its filter (the redelivery is asked
            # for by hand); a disabled one would only record attempts that are never sent.
            if not endpoint.enabled:
                raise Conflict(
                    f"webhook endpoint {endpoint_id} is disabled: enable it to redeliver to it"
                )
            targets = [endpoint]
        else:
            targets = self.endpoints.matching(event.org_id, event.type)
        if not targets:
            raise Conflict(f"no enabled webhook endpoint of the organization takes {event.type}")
        originals = [d.id for d in self.deliveries.values() if d.event_id == event_id]
        of = originals[0] if originals else None
        return [self._start(event, target, self.clock.now(), of) for target in targets]

    @locked
    def set_fault(self, count: int, send: bool = False) -> ReceiverFault:
        self.fault = ReceiverFault(count, send)
        return self.fault

    # --- the dispatcher's side --------------------------------------------------------------

    @locked
    def has_waiting(self, busy: Collection[Lane] = ()) -> bool:
        """True while some due attempt could be taken: one in the queue, or one set aside for
        a lane not in ``busy`` (any more). With no lane busy: while any attempt is due."""
        return bool(self.due) or any(lane not in busy for lane in self.parked)

    def _set_aside_back(self) -> None:
        """Every attempt set aside goes back to the queue."""
        for entries in self.parked.values():
            for entry in entries:
                heapq.heappush(self.due, entry)
        self.parked = {}

    @property
    def last_due_seq(self) -> int:
        """The number of the attempt made due last (those made due later have more)."""
        return self._due_seq

    @locked
    def take_next(self, busy: Collection[Lane] = (), newest: int | None = None) -> Outgoing | None:
        """The earliest due attempt, signed, or None when nothing is due. An attempt to a lane
        in ``busy`` (its receiver has an earlier one in flight) is set aside, not taken: each
        receiver gets its attempts one at a time and in due order. ``newest``: only attempts
        made due up to that number (``last_due_seq``); later ones stay due."""
        return self._take_next(busy, newest)

    def _take_next(self, busy: Collection[Lane] = (), newest: int | None = None) -> Outgoing | None:
        # Each free lane's earliest set-aside attempt competes again (the rest wait their
        # turn: moving them all back, to be set aside again at the next take, made a queue
        # of n attempts to one receiver cost n^2).
        for free in [lane for lane in self.parked if lane not in busy]:
            entries = self.parked[free]
            heapq.heappush(self.due, heapq.heappop(entries))
            if not entries:
                del self.parked[free]
        later: list[tuple[datetime, int, DueAttempt]] = []  # past ``newest``: left due
        try:
            while self.due:
                entry = heapq.heappop(self.due)
                due = entry[2]
                if newest is not None and due.seq > newest:
                    later.append(entry)
                    continue
                delivery = self.deliveries.get(due.delivery_id)
                if delivery is None or delivery.status is not DeliveryStatus.PENDING:
                    continue
                endpoint = self.endpoints.endpoints.get(delivery.endpoint_id) if busy else None
                if endpoint is not None and (lane := lane_of(endpoint.url)) in busy:
                    heapq.heappush(self.parked.setdefault(lane, []), entry)
                    continue
                outgoing = self._outgoing(due, delivery)
                self.sending[due.seq] = due
                return outgoing
            return None
        finally:
            for entry in later:
                heapq.heappush(self.due, entry)

    def _outgoing(self, due: DueAttempt, delivery: Delivery) -> Outgoing:
        body = self.events.body_of(delivery.event_id)
        endpoint = self.endpoints.endpoints.get(delivery.endpoint_id)
        if endpoint is None:
            gone = Outcome(None, "endpoint_deleted", "the endpoint was deleted; not sent")
            return Outgoing(due, delivery, "", body, {}, self.timeout, gone, send=False, final=True)
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
        try:
            # Signed as it goes out: at its due time, or later when a flowing clock's sender
            # got to it late (receivers refuse a t over 300 s old, §8).
            headers[SIGNATURE_HEADER] = sign(body, endpoint.secret, max(due.due, self.clock.now()))
        except ValueError as exc:
            # A secret the control plane refuses (empty) can only come from an older import;
            # the attempt is recorded as failed, not sent, and the retries go on, so the
            # delivery is neither lost nor a 500 of the clock move that made it due (a PATCH
            # of the secret in time delivers it).
            unsigned = Outcome(None, SIGNING_FAILED, f"the attempt could not be signed: {exc}")
            return Outgoing(
                due, delivery, endpoint.url, body, headers, self.timeout, unsigned, send=False
            )
        if not endpoint.enabled:
            off = Outcome(None, "endpoint_disabled", "the endpoint is disabled; not sent")
            return Outgoing(
                due, delivery, endpoint.url, body, headers, self.timeout, off, send=False
            )
        if self.fault.count > 0:
            self.fault.count -= 1
            forced = Outcome(None, "fault_injected", "receiver-outcome fault: counted as failed")
            return Outgoing(
                due,
                delivery,
                endpoint.url,
                body,
                headers,
                self.timeout,
                forced,
                send=self.fault.send,
            )
        return Outgoing(due, delivery, endpoint.url, body, headers, self.timeout)

    @locked
    def record_and_take_next(
        self, outgoing: Outgoing, outcome: Outcome, newest: int | None = None
    ) -> tuple[Attempt | None, Outgoing | None]:
        """Records the attempt's outcome, then takes the next due attempt (up to ``newest``),
        under one hold of the lock (the dispatcher's loop)."""
        return self._record(outgoing, outcome), self._take_next(newest=newest)

    @locked
    def record(self, outgoing: Outgoing, outcome: Outcome) -> Attempt | None:
        """Records the attempt's outcome (the parallel senders' side: they take one at a time
        per lane, ``take_next(busy)``)."""
        return self._record(outgoing, outcome)

    @locked
    def put_back(self, outgoing: Outgoing) -> None:
        """An attempt taken but not sent (the sender is stopping) is due again, unchanged."""
        due = outgoing.due
        if self.sending.get(due.seq) is due:
            del self.sending[due.seq]
            heapq.heappush(self.due, (due.due, due.seq, due))

    def _record(self, outgoing: Outgoing, outcome: Outcome) -> Attempt | None:
        """Journals the attempt and schedules the next one or settles the delivery."""
        due = outgoing.due
        if self.sending.get(due.seq) is due:
            del self.sending[due.seq]
        delivery = self.deliveries.get(due.delivery_id)
        if delivery is not outgoing.delivery or delivery.status is not DeliveryStatus.PENDING:
            return None  # the state was reset or restored while the POST was out
        succeeded = outcome.succeeded
        delivery.attempts = due.number
        delivery.next_attempt_at = None
        if succeeded:
            self._settle(delivery, DeliveryStatus.SUCCEEDED)
        elif due.number < self.max_attempts and not outgoing.final:
            self._schedule(delivery, due.number + 1, due.due + self.retry_delays[due.number - 1])
        else:
            self._settle(delivery, DeliveryStatus.FAILED)
        # Positional, in the fields' order (each argument names its field): matching sixteen
        # keywords cost 8,000 instructions an attempt, 5% of a warp.
        attempt = Attempt(
            delivery.id,
            delivery.event_id,
            delivery.event_type,
            delivery.endpoint_id,
            delivery.org_id,
            due.number,
            due.due,
            outgoing.url,
            outgoing.headers.get(SIGNATURE_HEADER, ""),
            succeeded,
            outcome.status_code,
            outcome.error,
            outcome.message,
            outcome.duration_ms,
            outcome.snippet,
            delivery.next_attempt_at,
        )
        self.attempts.append(attempt)  # the deque drops the oldest beyond the retention
        self.attempts_made += 1
        return attempt

    def _settle(self, delivery: Delivery, status: DeliveryStatus) -> None:
        DELIVERY_LIFECYCLE.move(delivery, status)
        self.events.release(delivery.event_id)
        self._settled += 1
        if self._settled > self.deliveries_kept + self.deliveries_kept // 10:
            self._trim()

    def _trim(self) -> None:
        """Drops the oldest settled deliveries beyond the retention (pending ones stay)."""
        excess = self._settled - self.deliveries_kept
        for delivery in list(self.deliveries.values()):
            if excess <= 0:
                break
            if delivery.status is not DeliveryStatus.PENDING:
                del self.deliveries[delivery.id]
                excess -= 1
                self._settled -= 1

    # --- reading ----------------------------------------------------------------------------

    @locked
    def get(self, delivery_id: str) -> Delivery:
        return found(self.deliveries.get(delivery_id), f"webhook delivery {delivery_id} not found")

    @locked
    def query(self, filters: dict[str, str | None]) -> list[Delivery]:
        """Deliveries, oldest first, matching every given public field (``{"eventId": ...}``)."""
        wanted = _given(filters)
        if not wanted:  # the dashboard's newest rows: no public view of every delivery kept
            return list(self.deliveries.values())
        return [d for d in self.deliveries.values() if _fits(d.to_public(), wanted)]

    @locked
    def of_new_event(self, event_id: str) -> list[Delivery]:
        """The deliveries an event just emitted started: the newest ones, so found from the
        end (a trigger scanned every delivery kept under the lock: the soak's triggers
        slowed from 32 to 316 ms as deliveries piled up)."""
        started = []
        for delivery in reversed(self.deliveries.values()):
            if delivery.event_id != event_id:
                break
            started.append(delivery)
        return started[::-1]

    @locked
    def query_attempts(self, filters: dict[str, str | None]) -> list[Attempt]:
        """Attempts, in the order they were made, matching every given public field."""
        wanted = _given(filters)
        if not wanted:
            return list(self.attempts)
        return [a for a in self.attempts if _fits(a.to_public(), wanted)]

    @locked
    def attempts_since(self, mark: int) -> list[Attempt]:
        """The attempts made after ``attempts_made`` was ``mark``."""
        kept = list(self.attempts)
        return kept[max(0, len(kept) - (self.attempts_made - mark)) :]

    @locked
    def backlog(self) -> dict[str, Any]:
        """How far delivery is behind: deliveries not settled, attempts due and not answered
        yet (waiting or in flight), and since when the oldest of them is due. Counted, not
        walked: O(1) in the queue (parked attempts are walked per lane, not per attempt)."""
        waiting = len(self.due) + sum(len(entries) for entries in self.parked.values())
        oldest = [entries[0] for entries in (self.due, *self.parked.values()) if entries]
        oldest += [(d.due, d.seq, d) for d in self.sending.values()]
        due_since = min(oldest)[0] if oldest else None
        return {
            "pendingDeliveries": len(self.deliveries) - self._settled,
            "attemptsDue": waiting + len(self.sending),
            "attemptsSending": len(self.sending),
            "oldestDueAt": _iso(due_since),
            "lagSeconds": 0.0
            if due_since is None
            else max(0.0, (self.clock.now() - due_since).total_seconds()),
        }

    # --- state ------------------------------------------------------------------------------

    def _all_due(self) -> list[DueAttempt]:
        """Every attempt due and not recorded: waiting, set aside for a busy lane, in flight."""
        parked = (d for entries in self.parked.values() for _, _, d in entries)
        return [*(d for _, _, d in self.due), *parked, *self.sending.values()]

    def export(self) -> dict[str, Any]:
        return {
            "deliveries": [snapshot(d) for d in self.deliveries.values()],
            "attempts": [_exported(a) for a in self.attempts],
            # An attempt being POSTed is still due as far as a copy of the state goes: the
            # import sends it (the outcome here belongs to this process only).
            "due": [snapshot(d) for d in sorted(self._all_due())],
            "dueSeq": self._due_seq,
            "fault": snapshot(self.fault),
        }

    def restore(self, data: dict[str, Any]) -> None:
        deliveries = [from_json(Delivery, d) for d in data["deliveries"]]
        self.deliveries = {d.id: d for d in deliveries}
        self.attempts = deque(
            (from_json(Attempt, a) for a in data["attempts"]), maxlen=self.attempts.maxlen
        )
        self.attempts_made = len(self.attempts)
        due = sorted(from_json(DueAttempt, d) for d in data["due"])
        self.due = [(d.due, d.seq, d) for d in due]  # a sorted list is a heap
        self.sending = {}
        self.parked = {}
        pending = [d for d in deliveries if d.status is DeliveryStatus.PENDING]
        self._settled = len(deliveries) - len(pending)
        self.events.set_holds([d.event_id for d in pending])
        self._due_seq = data["dueSeq"]
        self.fault = from_json(ReceiverFault, data["fault"])


def _given(filters: dict[str, str | None]) -> dict[str, str]:
    return {name: value for name, value in filters.items() if value is not None}


def _fits(view: dict[str, Any], filters: dict[str, str]) -> bool:
    return all(str(view[name]) == value for name, value in filters.items())
