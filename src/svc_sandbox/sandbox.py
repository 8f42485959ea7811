"""Sandbox: the in-process handle that owns the clock, the ids, the state and every service.

Every test control is a method here first; the control plane, the pytest plugin and the CLI
are thin fronts over these methods.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, NamedTuple, Protocol

from svc_sandbox import __version__
from svc_sandbox.commerce.checkout import CheckoutService
from svc_sandbox.commerce.checkout_links import CheckoutConfigService
from svc_sandbox.commerce.customers import CustomerService
from svc_sandbox.commerce.limits import CheckoutLimits
from svc_sandbox.commerce.notices import NotificationFaults
from svc_sandbox.commerce.orders import OrderService
from svc_sandbox.commerce.payments import PaymentService
from svc_sandbox.commerce.payouts import PayoutService
from svc_sandbox.commerce.products import ProductService
from svc_sandbox.commerce.triggers import TriggerService, read_trigger_file
from svc_sandbox.contract.conformance import ConformanceRecorder
from svc_sandbox.contract.document import COMMERCE, IDENTITY, WALLET
from svc_sandbox.contract.validation import (
    commerce_contract,
    identity_contract,
    wallet_contract,
)
from svc_sandbox.core import json_input
from svc_sandbox.core.clock import (
    MAX_ADVANCE,
    Clock,
    ClockMode,
    as_utc,
    isoformat,
    out_of_range,
    parse_instant,
    to_millisecond,
    wall_now,
)
from svc_sandbox.core.collector import collector_paused
from svc_sandbox.core.context import ServiceContext
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.ids import IdFactory, RequestIds
from svc_sandbox.core.journal import RequestJournal
from svc_sandbox.core.locking import let_others_in
from svc_sandbox.core.records import FORMAT, to_json
from svc_sandbox.core.release import release_later
from svc_sandbox.core.scheduler import RanEntry, Scheduler
from svc_sandbox.core.validation import shown
from svc_sandbox.identity.apps import AppService
from svc_sandbox.identity.grants import AuthorizationService
from svc_sandbox.identity.keys import KeyService
from svc_sandbox.identity.limits import IdentityLimits
from svc_sandbox.identity.seed import identity_info, seed_identity
from svc_sandbox.identity.sessions import BrowserSessionService
from svc_sandbox.identity.tokens import TokenService
from svc_sandbox.identity.users import UserService
from svc_sandbox.latency import LatencyFaults, waiting_limit
from svc_sandbox.orgs.organizations import Environment, KycStatus, OrganizationService
from svc_sandbox.outputs import write_file
from svc_sandbox.settings import Settings
from svc_sandbox.wallet.ledger import WalletService
from svc_sandbox.webhooks.delivery import DeliveryService
from svc_sandbox.webhooks.dispatcher import Dispatcher
from svc_sandbox.webhooks.endpoints import EndpointService, WebhookEndpoint
from svc_sandbox.webhooks.events import EventLog
from svc_sandbox.webhooks.sender import Receiver

#: Entries an advance runs per hold of the lock before letting other requests in.
ADVANCE_BATCH = 256
#: How often a move waiting for the walk lock checks whether its holder flushes (then joins).
JOIN_CHECK_SECONDS = 0.01
#: How many rounds in a row an explicit advance, set, run-due or flush sends only what requests
#: made while it sent (a receiver calling back, other clients, a delayed request moving the
#: clock). Past them it stops sending: it runs the rest of its due work and leaves the attempts
#: due for the next call, so a call returns under traffic that never stops (it used to send
#: until the traffic stopped). A backlog made before the call never counts.
LATE_WORK_ROUNDS = 100


class _Step(NamedTuple):
    """What one hold of the lock of a walk did (``Sandbox._run_until``)."""

    ran: list[RanEntry]
    #: It stopped at ``ADVANCE_BATCH`` with more entries due by its limit.
    more: bool
    #: It stopped for work ready (webhook attempts due): the walk sends, then goes on.
    paused: bool
    #: Every entry it ran was scheduled after the walk last let go of the lock to send.
    fresh: bool


class Stateful(Protocol):
    def export(self) -> dict[str, Any]:
        """A snapshot of the service's state: records copied (core.records.snapshot), made
        JSON by ``to_json`` outside the lock."""
        ...

    def restore(self, data: dict[str, Any]) -> None:
        """Loads a validated part of a document; assigns new containers, never edits the
        old ones (the Sandbox's rollback relies on it)."""
        ...


class AfterWork(Protocol):
    """Work that must run outside the lock once due work made it ready (webhook delivery)."""

    def pending(self) -> bool:
        """True when something is ready: advancing pauses there to let it run first."""
        ...

    def __call__(self, background: bool = False) -> None:
        """Does it; ``background`` is True when the real or scaled clock's ticker calls."""
        ...


#: The seeded state's export, encoded, by settings and start instant: seeding is a pure
#: function of the two, and a test suite builds a Sandbox per test with the same ones. Each
#: Sandbox decodes its own copy (json.loads: a third of ``to_json``'s cost), so none is shared.
_SEEDED_EXPORTS: dict[str, str] = {}
SEEDED_EXPORTS_KEPT = 16


class Sandbox:
    def __init__(self, settings: Settings | None = None, **overrides: Any) -> None:
        if settings is None:
            settings = Settings.load(overrides)
        elif overrides:
            settings = settings.model_copy(update=overrides)
        self.settings = settings
        self.lock = threading.RLock()
        #: Bumped each time a reset or an import replaces the state, or the clock is set back:
        #: a move aimed from the old state or time (an advance paused outside the lock, a
        #: delayed request's) stops rather than carry on in the new one. Read with the target.
        self.generation = 0
        #: One move of the clock at a time (advance, set, run-due). Each works out its target
        #: from the clock as it finds it and lets the state lock go between batches, so two
        #: that overlapped would both aim near the same instant and time would be lost.
        self._moving = threading.RLock()
        self.clock = Clock(settings.clock_mode, self._start_instant(), settings.clock_factor)
        self.ids = IdFactory(settings.seed)
        #: X-Request-Id: a stream of its own (reads never shift resource ids), not exported
        #: (an export is the same whatever was read); a reset restarts it, an import branches it.
        self.request_ids = RequestIds(settings.seed)
        self.scheduler = Scheduler()
        self.journal = RequestJournal(self.clock.now)
        #: What clients exercised of the commerce contract and where they broke it.
        self.conformance = ConformanceRecorder(commerce_contract())
        #: The same for the identity provider's and the wallet's contracts; ``recorders``
        #: names the three by contract document.
        self.identity_conformance = ConformanceRecorder(identity_contract())
        self.wallet_conformance = ConformanceRecorder(wallet_contract())
        self.recorders = {
            COMMERCE: self.conformance,
            IDENTITY: self.identity_conformance,
            WALLET: self.wallet_conformance,
        }
        #: Requests waiting out an injected delay in wall time, each holding a server worker.
        self._waiting = threading.BoundedSemaphore(waiting_limit(settings.threads))
        #: Called after due work ran, outside the lock (webhook delivery hooks in here).
        self.after_work: list[AfterWork] = []

        #: What every service shares; a new service takes it plus the services it uses.
        self.ctx = ServiceContext(self.lock, self.clock, self.ids, self.scheduler, settings)
        ctx = self.ctx
        self.orgs = OrganizationService(ctx)
        self.products = ProductService(ctx)
        self.orders = OrderService(ctx)
        self.events = EventLog(ctx)
        self.customers = CustomerService(ctx)
        self.checkout_config = CheckoutConfigService(ctx, self.orgs, self.products)
        self.triggers = TriggerService(ctx)
        self.notice_faults = NotificationFaults(ctx, self.orgs)
        self.payments = PaymentService(ctx, self.triggers, self.notice_faults)
        self.latency = LatencyFaults(ctx, self.orgs)
        self.checkout = CheckoutService(
            ctx,
            orgs=self.orgs,
            products=self.products,
            customers=self.customers,
            orders=self.orders,
            events=self.events,
            payments=self.payments,
            config=self.checkout_config,
        )
        self.limits = CheckoutLimits(ctx)
        self.payouts = PayoutService(ctx, self.orgs, self.orders)
        self.webhook_endpoints = EndpointService(ctx)
        self.deliveries = DeliveryService(ctx, self.events, self.webhook_endpoints)
        self.dispatcher = Dispatcher(self.deliveries, self.settings.webhook_senders)
        self.after_work.append(self.dispatcher)
        self.users = UserService(ctx)
        self.oauth_apps = AppService(ctx, self.orgs)
        self.signing_keys = KeyService(ctx)
        self.access_tokens = TokenService(ctx, self.users, self.oauth_apps, self.signing_keys)
        self.oauth = AuthorizationService(ctx, self.users, self.oauth_apps, self.access_tokens)
        self.browser_sessions = BrowserSessionService(ctx, self.users)
        self.identity_limits = IdentityLimits(ctx)
        self.wallets = WalletService(ctx, self.users)
        self._services: dict[str, Stateful] = {
            "orgs": self.orgs,
            "products": self.products,
            "orders": self.orders,
            "events": self.events,
            "webhookEndpoints": self.webhook_endpoints,
            "webhookDeliveries": self.deliveries,
            "customers": self.customers,
            "checkoutConfig": self.checkout_config,
            "triggers": self.triggers,
            "notificationFaults": self.notice_faults,
            "latencyFaults": self.latency,
            "payments": self.payments,
            "checkout": self.checkout,
            "checkoutLimits": self.limits,
            "payouts": self.payouts,
            "users": self.users,
            "oauthApps": self.oauth_apps,
            "signingKeys": self.signing_keys,
            "tokens": self.access_tokens,
            "authorizations": self.oauth,
            "browserSessions": self.browser_sessions,
            "identityLimits": self.identity_limits,
            "wallets": self.wallets,
        }
        #: The last import's document as it was sent, by the import's request id: a recording
        #: (scenarios/recorder.py) starts at it as at a reset, and replays it. Until the next
        #: import or reset.
        self.last_import: tuple[str, bytes] | None = None
        self._seed_defaults()
        #: The seeded state's export (for reset and clear_controls), or its JSON text until
        #: first used: most Sandboxes a test suite builds are never reset, and decoding it
        #: was a quarter of building one.
        self._seeded: dict[str, Any] | str = self._seeded_export()
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    @property
    def _initial(self) -> dict[str, Any]:
        """The seeded state's export, this Sandbox's own copy (decoded on first use)."""
        seeded = self._seeded
        if isinstance(seeded, str):
            seeded = self._seeded = json.loads(seeded)
        return seeded

    def _seeded_export(self) -> dict[str, Any] | str:
        """``export()`` right after seeding, or its JSON text from ``_SEEDED_EXPORTS`` when
        that holds it. Not kept for a real clock (its start is never the same) or a
        ``--triggers`` file (its content may change under the same name)."""
        if self.settings.clock_mode is ClockMode.REAL or self.settings.triggers_file:
            return self.export()
        key = f"{self.settings.model_dump_json()}@{self.clock.now().isoformat()}"
        encoded = _SEEDED_EXPORTS.get(key)
        if encoded is not None:
            return encoded
        document = self.export()
        if len(_SEEDED_EXPORTS) >= SEEDED_EXPORTS_KEPT:
            _SEEDED_EXPORTS.clear()  # bounded; refilled by the next few builds
        _SEEDED_EXPORTS[key] = json.dumps(document)
        return document

    def _start_instant(self) -> datetime:
        if self.settings.clock_mode is ClockMode.REAL:
            return wall_now()
        return parse_instant(self.settings.clock_start)

    def _seed_defaults(self) -> None:
        """The seeded organizations (and ``--triggers``) every fresh or reset sandbox starts
        with."""
        if self.settings.triggers_file:
            for trigger in read_trigger_file(self.settings.triggers_file):
                self.triggers.add(trigger)
        orgs = [
            self.orgs.create(name, environment, developer_mode=True, kyc=KycStatus.APPROVED)
            for name, environment in (
                ("Sandbox Org", Environment.SANDBOX),
                ("Production Org", Environment.PRODUCTION),
            )
        ]
        for org in orgs:
            self.orgs.create_token(org.id, name="seeded")
        seed_identity(self)
        if self.settings.wallet_seed_minor:
            for user in self.users.all():
                self.wallets.fund(user.id, self.settings.wallet_seed_minor, note="seeded")
        # Last: the seeded credentials above are the same for a seed whether or not
        # --webhook-url is given (the endpoints' ids and secret are drawn from the same ids).
        url = self.settings.webhook_url
        if url:
            for org in orgs:
                endpoint = self.webhook_endpoints.create(org.id, url, description="--webhook-url")
                # One secret for both default endpoints: the one GET /_sandbox shows.
                self.webhook_endpoints.default_secret = endpoint.secret

    # --- time -------------------------------------------------------------------------

    def now(self) -> datetime:
        return self.clock.now()

    def advance(self, delta: timedelta, field: str = "duration") -> list[RanEntry]:
        """Moves the clock forward, running due work in due-time order, each at its due time.
        A refusal names ``field``, what the caller sent the duration as."""
        if not isinstance(delta, timedelta):
            raise ValidationFailed(f"{field} must be a timedelta, not {type(delta).__name__}")
        if delta < timedelta(0):
            raise ValidationFailed(f"{field} must not be negative")
        if delta > MAX_ADVANCE:
            raise ValidationFailed(f"{field} must be at most {MAX_ADVANCE.days} days")
        with self._walking() as send:
            with self.lock:
                # The clock keeps milliseconds (core/clock.py): a finer part is cut.
                target = to_millisecond(self.clock.now() + delta)
                target = self._bounded(target, f"{field} takes the clock too far: it")
                generation = self.generation
            return self._move_to(target, generation, send=send)

    @contextmanager
    def _walking(self, background: bool = False) -> Iterator[bool]:
        """The walk lock of an advance, set or run-due; gives whether the move sends. A move
        from inside an in-process receiver's delivery, or made (or waiting) while the lock's
        holder flushes (sends, or waits for the background senders' attempts out), joins it:
        it runs the due work without the lock and without sending, as ``_pass_time`` does. It
        may come from the receiver the flush waits for (over HTTP the sandbox cannot tell who
        calls): waiting would hold that receiver until its attempt timed out."""
        if self.dispatcher.delivering():
            yield False
            return
        acquired = self._moving.acquire(blocking=False)
        while not acquired:
            if self.dispatcher.flushing():
                yield False
                self._send_what_the_flush_left(background)
                return
            acquired = self._moving.acquire(timeout=JOIN_CHECK_SECONDS)
        try:
            yield True
        finally:
            self._moving.release()

    def _send_what_the_flush_left(self, background: bool) -> None:
        """After a joined move: the flushing call sends what the move made due (it looks for
        such work after each flush), unless it has ended meanwhile (another client's long
        advance can outlast it); then this move sends it, taking the walk lock."""
        if not self.dispatcher.flushing() and self._work_pending():
            with self._moving:
                self._move_to(*self._now_and_generation(), background=background)

    def delay_request(
        self, method: str, path: str, token: str | None
    ) -> tuple[timedelta | None, bool]:
        """Applies the latency fault (latency.py) to a request about to be handled; the delay
        it applied (None: none) and whether its delay was skipped. A frozen clock moves on by
        the delay, running what falls due but sending no webhook (``_pass_time``); a real or
        scaled clock waits it out in wall time (divided by the factor), holding the request's
        server worker: beyond ``waiting_limit(threads)`` waiting at once, a request is
        answered without its delay and the rule does not count it."""
        if self.clock.mode is ClockMode.FROZEN:
            delay = self.latency.take(method, path, token)
            if delay is None:
                return None, False
            if delay.length:
                self._pass_time(delay.length)
            return delay.length, False
        if self.latency.take(method, path, token, count=False) is None:
            return None, False
        if not self._waiting.acquire(blocking=False):
            return None, True
        try:  # taken again, counted: the rule may have run out or gone meanwhile
            delay = self.latency.take(method, path, token, waiting=True)
            if delay is not None:
                self.latency.wait(delay, delay.length.total_seconds() / self.clock.factor)
        finally:
            self._waiting.release()
        return (delay.length if delay is not None else None), False

    def _pass_time(self, delay: timedelta) -> None:
        """Moves a frozen clock on by ``delay`` for an API request, running the work due on
        the way, each entry at its due time. Unlike ``advance`` it sends no webhook (an API
        request never does: the attempts that fall due wait for the next explicit advance,
        set, run-due or flush) and it does not wait for an explicit call that is sending (its
        receiver may be the one making this request). Entries run under the lock, so a walk
        of the control plane going on meanwhile still runs everything in due order; the
        clock only ever moves forward. Past the clock's last instant it stays where it is."""
        now, generation = self._now_and_generation()
        target = to_millisecond(now + delay)
        if out_of_range(target) is None:
            self._move_to(target, generation, background=True, send=False)

    @staticmethod
    def _bounded(instant: datetime, what: str) -> datetime:
        problem = out_of_range(instant)
        if problem:
            raise ValidationFailed(f"{what} {problem}")
        return instant

    def set_time(self, instant: datetime) -> list[RanEntry]:
        """Sets the clock; moving forward runs the work due on the way. A naive ``instant``
        is taken as UTC, as ``POST /_sandbox/clock/set`` reads one (``--svc-url`` then gives
        the same time as in-process)."""
        if not isinstance(instant, datetime):
            raise ValidationFailed(f"now must be a datetime, not {type(instant).__name__}")
        instant = self._bounded(to_millisecond(as_utc(instant)), "now")
        with self._walking() as send:
            with self.lock:
                if instant <= self.clock.now():
                    # What ended by the time the clock leaves stays ended (identity/lifetime.py).
                    self._prune_expired()
                    self.clock.set(instant)
                    instant = self.clock.now()
                    self.payments.clock_set_back(instant)
                    self.generation += 1  # a delayed request's move aimed from the old time
                generation = self.generation
            return self._move_to(instant, generation, send=send)

    def run_due(self, background: bool = False) -> list[RanEntry]:
        """Runs what is due now (a real or scaled clock's ticker calls this, ``background``)."""
        with self._walking(background) as send:
            return self._move_to(*self._now_and_generation(), background, send)

    def _now_and_generation(self) -> tuple[datetime, int]:
        with self.lock:
            return self.clock.now(), self.generation

    def catch_up(self) -> None:
        """Before a request on a real or scaled clock: runs the work due by now, each entry at
        its due time, as the ticker would (``run_due(background=True)``), so that what the
        request sees and stamps does not depend on whether the ticker got there first (a
        poll just after a session's expiry finds it expired at ``expiresAt``, not at the
        poll). When another thread is moving the clock (the ticker, or an advance, set or
        run-due of the control plane, which delivers webhooks as it goes and may be waiting
        for a receiver that calls back here) it does not wait for that move: it runs the work
        due by now beside it, entries under the lock and in due order, as a delayed request's
        move does (``_pass_time``). (It used to skip the work when the move was not the
        ticker's, and the ticker was told apart by a flag set just after it took the walk
        lock: in between, a request saw attempts due as not yet due.) A frozen clock has
        nothing to catch up: only ``advance`` and ``set`` move it, and they run what falls
        due."""
        if self.clock.mode is ClockMode.FROZEN:
            return
        due = self.scheduler.peek_due()
        if due is None or due > self.clock.now():
            return
        if self._moving.acquire(blocking=False):
            try:
                self.run_due(background=True)
            finally:
                self._moving.release()
        else:
            self._move_to(*self._now_and_generation(), background=True)

    def _move_to(
        self, target: datetime, generation: int, background: bool = False, send: bool = True
    ) -> list[RanEntry]:
        """Runs due work up to ``target``; when an entry leaves after-work ready (a webhook
        attempt due), the clock stops after the entries due at that same instant, the lock
        is let go while the after-work runs, and then the walk goes on. So a retry scheduled
        by a failed attempt runs in its turn, before later entries. The lock is also let go
        after every ``ADVANCE_BATCH`` entries (the clock then reads the last one's due time),
        so a long advance never stalls other requests; the order stays the due order.
        ``send=False`` runs the due work only: the after-work (sending) is left for later.
        ``generation`` is the one read with ``target``: a reset, import or set back since
        then ends the move where it is.

        The cyclic garbage collector is paused meanwhile (for the process): a warp makes and
        drops records by the hundred thousand, none in a cycle, and the collections they
        triggered walked the whole state (a tenth of a 24 h warp of 10,000 sessions, a fifth
        at 100,000); what a receiver or a request leaves in cycles is collected after."""
        with collector_paused():
            return self._walk_to(target, generation, background, send)

    def _walk_to(
        self, target: datetime, generation: int, background: bool, send: bool
    ) -> list[RanEntry]:
        ran: list[RanEntry] = []
        explicit = send and not background
        #: The scheduler's last entry when the walk last let go of the lock to send: entries
        #: after it were made while it sent.
        mark = self.scheduler.last_seq
        #: Rounds in a row that sent only such late work; at LATE_WORK_ROUNDS, no more.
        rounds = 0
        while True:
            sending = explicit and rounds < LATE_WORK_ROUNDS
            with self.lock:
                if self.generation != generation:
                    # A reset or import replaced the state while the lock was let go: this
                    # advance ends where it was, as if it had finished before the reset.
                    return ran
                step = self._run_until(target, sending, mark)
                ran += step.ran
                paused = step.paused
                if sending and not paused and not step.more:
                    paused = self._work_pending()  # made by a request meanwhile: send it too
                now = self.clock.now()
                if (paused or step.more) and step.ran and step.ran[-1].due > now:
                    self.clock.set(step.ran[-1].due)
                elif not paused and not step.more and target > now:
                    self.clock.set(target)
                if paused:
                    rounds = rounds + 1 if step.fresh else 0
                    mark = self.scheduler.last_seq
            if step.more and not paused:
                let_others_in()
                continue
            if send and (paused or not explicit):
                self._after_work(background)
            if not paused or (not step.ran and self._work_pending()):
                self._prune_expired()
                return ran

    def _prune_expired(self) -> None:
        """Drops the identity records past their lifetime (identity/tokens.py) once the clock
        has moved; their own calls do it too, so this only frees them without waiting."""
        with self.lock:
            self.oauth.prune()
            self.browser_sessions.prune()

    def _run_until(self, target: datetime, stop_for_work: bool = False, mark: int = 0) -> _Step:
        """Runs up to ``ADVANCE_BATCH`` due entries (see ``_Step``). With ``stop_for_work`` it
        stops after the instant at which an entry left work ready, or at once when work is
        ready."""
        ran: list[RanEntry] = []
        if stop_for_work and self._work_pending():
            return _Step(ran, more=False, paused=True, fresh=True)
        limit = target
        stopping = False  # (not ``limit is not target``: an entry's due may be that object)
        fresh = True
        # Each entry runs with the clock pinned at its due time (for this thread only); the
        # pin before the batch comes back after it.
        before = self.clock.pin(None)
        try:
            while (entry := self.scheduler.pop_due(limit)) is not None:
                self.clock.pin(entry.due)
                self.scheduler.run(entry)
                ran.append(RanEntry(entry.due, entry.kind, entry.payload))
                fresh = fresh and entry.seq > mark
                if stop_for_work and not stopping and self._work_pending():
                    limit, stopping = entry.due, True  # finish this instant, then pause
                if len(ran) >= ADVANCE_BATCH:
                    upcoming = self.scheduler.next_due()
                    more = upcoming is not None and upcoming <= limit
                    return _Step(ran, more, stopping, fresh)
        finally:
            self.clock.pin(before)
        return _Step(ran, False, stopping, fresh)

    def _work_pending(self) -> bool:
        return any(hook.pending() for hook in self.after_work)

    def _after_work(self, background: bool = False) -> None:
        for hook in self.after_work:
            hook(background)

    def start_background(self) -> None:
        """In real and scaled mode, runs due work as the clock flows (until ``stop``)."""
        if self.clock.mode is ClockMode.FROZEN or self._ticker is not None:
            return
        self._stop.clear()
        self.dispatcher.start()
        self._ticker = threading.Thread(target=self._tick, name="svc-sandbox-clock", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.settings.tick_seconds):
            self.run_due(background=True)

    def stop(self) -> None:
        self._stop.set()
        self.latency.end_waits()  # a delayed request must not hold the server's exit up
        self.dispatcher.stop()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
            self._ticker = None

    # --- webhooks -----------------------------------------------------------------------

    def add_webhook_receiver(
        self,
        org_id: str,
        receiver: Receiver,
        secret: str | None = None,
        event_types: list[str] | None = None,
    ) -> WebhookEndpoint:
        """A webhook endpoint served by a Python callable in this process: it gets the exact
        signed bytes and headers an HTTP receiver would and answers a status (2xx succeeds).
        Warps in tests and scenarios then never touch a socket. An unknown organization is a
        NotFound, as on the control plane (an endpoint must name a record the state holds).
        A reset or an import lets the callable go (it is not state): attach it again
        (``attach_webhook_receiver``)."""
        with self.lock:
            self.orgs.get(org_id)
            return self.webhook_endpoints.create_in_process(org_id, receiver, secret, event_types)

    def attach_webhook_receiver(self, endpoint_id: str, receiver: Receiver) -> WebhookEndpoint:
        """Attaches ``receiver`` to an existing in-process endpoint: after an import or a
        reset, the endpoint the state holds gets its callable back without a new endpoint
        (whose id would shift every id after it from the original run's)."""
        with self.lock:
            return self.webhook_endpoints.attach(endpoint_id, receiver)

    # --- state --------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """A consistent copy of the whole state, taken under the lock: records are copied,
        not encoded, so the lock is held briefly; ``export`` encodes it outside the lock."""
        with self.lock, collector_paused():
            now = self.clock.now()  # read once: a flowing clock moves between two reads
            return {
                "format": FORMAT,
                "version": __version__,
                "clock": {"now": isoformat(now), "exact": now.isoformat()},
                "ids": self.ids.export(),
                "scheduler": self.scheduler.export(),
                "services": {name: s.export() for name, s in self._services.items()},
            }

    def export(self) -> dict[str, Any]:
        """The whole state as a JSON document (the format of state_format.py)."""
        document: dict[str, Any] = to_json(self.snapshot())
        return document

    def restore(self, data: Any) -> None:
        """Replaces the whole state with an export. The document is validated as a whole
        first (400 naming the path): its format, then that every reference between its
        records names a record it holds, then that the wallets' records keep the ledger's
        rules; nothing changes unless all of it is valid."""
        from svc_sandbox import state_consistency, state_format  # not on the start-up path

        state_format.validate(data, self.scheduler.payload_types())
        if self.settings.state_references == "check":
            from svc_sandbox import state_references  # imports only: not on the start-up path

            state_references.check(data)
        # After the references: a ledger's users must exist, an attempt's delivery.
        state_consistency.check_ledger(data)
        state_consistency.check_attempts(data, self.deliveries.max_attempts)
        try:
            self._swap_in(data, imported=True)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValidationFailed(f"state document could not be applied: {shown(exc)}") from None

    def state_schema(self) -> dict[str, Any]:
        """The export format as JSON Schema (what ``restore`` validates against)."""
        from svc_sandbox import state_format

        return state_format.schema(self.scheduler.payload_types())

    def import_file(self, path: str) -> None:
        """``serve --state FILE``: restores an export read from a file (same checks)."""
        with open(path, "rb") as source:
            self.restore(json_input.decode(source.read(), "state file"))

    def export_file(self, path: str) -> None:
        """``serve --export-on-exit FILE``: writes the export whole or not at all."""
        write_file(path, json.dumps(self.export(), separators=(",", ":")).encode())

    def _swap_in(self, data: dict[str, Any], imported: bool = False) -> None:
        """Applies a valid document; if anything raises, the old state is put back.
        ``imported`` (an import, not a reset): what flows on never goes back (see ``_restore``).

        Every ``restore`` assigns new containers rather than changing the old ones, so
        holding each service's attributes (references, not copies) is the whole rollback:
        O(number of services) whatever the state size."""
        with self.lock, collector_paused():
            held = self._hold()
            try:
                self._restore(data, imported)
            except BaseException:
                self._put_back(held)
                raise
            self.generation += 1
        # Freeing the old state is the one cost that grows with it (10 ms per 2,000 paid
        # sessions): a worker thread lets go of it, so reset and import return at once.
        release_later(held)

    def _hold(self) -> list[tuple[Any, dict[str, Any]]]:
        owners: list[Any] = [self.scheduler, *self._services.values()]
        held = [(owner, dict(vars(owner))) for owner in owners]
        held.append((self.ids, self.ids.export()))
        held.append((self.clock, {"instant": self.clock.now()}))
        return held

    def _put_back(self, held: list[tuple[Any, dict[str, Any]]]) -> None:
        for owner, attributes in held:
            if owner is self.ids:
                self.ids.restore(attributes)
            elif owner is self.clock:
                self.clock.set(attributes["instant"])
            else:
                vars(owner).update(attributes)

    def _restore(self, data: dict[str, Any], imported: bool = False) -> None:
        """Loads ``data``. An import never sets a real or scaled clock back (the integration
        around it reads wall time too), and branches the request ids (core/ids.py
        ``RequestIds``) where a reset restarts them."""
        instant = parse_instant(data["clock"]["exact"])
        if imported and self.clock.mode is not ClockMode.FROZEN:
            instant = max(instant, self.clock.now())
        self.scheduler.restore(data["scheduler"])
        for name, service in self._services.items():
            service.restore(data["services"][name])
        self.ids.restore(data["ids"])
        self.clock.set(instant)
        # Last: nothing after it can fail, so a rollback never gives an id out twice.
        if imported:
            self.request_ids.branch(json.dumps(data["ids"], separators=(",", ":")))
        else:
            self.request_ids.restart()

    def reset(self) -> None:
        """Back to the seeded state. A frozen or scaled clock goes back to its start too.

        Rebuilds from the small seeded snapshot (trusted: not validated again) and never
        exports the current state first, so it costs the same at any state size."""
        with self.lock:
            keep = self.clock.now()
            self._swap_in(self._initial)
            if self.clock.mode is ClockMode.REAL:
                self.clock.set(keep)
            self.last_import = None
        self.journal.clear()
        for recorder in self.recorders.values():
            recorder.clear()

    def clear_controls(self) -> None:
        """Clears what a test sets for the whole sandbox rather than for its own organization,
        leaving the data and the clock alone: provider faults and settings (back to the
        serve flags), latency and notification rules, the receiver fault, custom triggers
        (back to ``--triggers``) and the rate limiters' counters. The pytest plugin calls it
        after each test of a shared (module or session) Sandbox; it costs a few attribute
        assignments, whatever the state holds."""
        with self.lock:
            self.payments.reset_config()
            self.latency.clear()
            self.notice_faults.clear()
            self.deliveries.set_fault(0)
            self.triggers.restore(self._initial["services"]["triggers"])
            self.limits.restore({})
            self.identity_limits.restore({})

    def warm_up(self) -> None:
        """What the first requests would otherwise pay: every contract's validators compiled,
        and the active signing key built from its seeded material (0.3 to 2 s: the search
        for its primes). Both depend only on what is already drawn, so running them early
        draws no id and changes no answer (``serve`` runs this on a thread once it is ready).
        """
        for recorder in self.recorders.values():
            recorder.contract.warm()
        _ = self.signing_keys.active().private_key  # built once, then cached (keys.py)

    def next_request_id(self) -> str:
        return self.request_ids.next()

    # --- description ------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        with self.lock:
            # One pass over tokens and endpoints (not one scan per organization): linear in
            # what the answer holds; the queue is counted, not sorted.
            tokens: dict[str, list[dict[str, Any]]] = {}
            for token in self.orgs.tokens.values():
                tokens.setdefault(token.org_id, []).append(token.to_public())
            endpoints: dict[str, list[dict[str, Any]]] = {}
            for endpoint in self.webhook_endpoints.list_for():
                endpoints.setdefault(endpoint.org_id, []).append(endpoint.to_public())
            orgs = []
            for org in self.orgs.all():
                entry = org.to_public()
                entry["tokens"] = tokens.get(org.id, [])
                entry["webhookEndpoints"] = endpoints.get(org.id, [])
                orgs.append(entry)
            return {
                "name": "svc-sandbox",
                "version": __version__,
                "seed": self.settings.seed,
                # The seed of the id source the state draws from: the configured seed, until
                # an import brings another document's (a reset goes back to ``seed``).
                "stateSeed": self.ids.seed,
                "clock": self.clock.describe(),
                "roots": self.settings.roots(),
                "dashboard": self.settings.origin + "/_sandbox/ui",
                "rateLimits": self.settings.rate_limits,
                # Every setting by its `serve` name: what a client (svc-sandbox run
                # --base-url) compares with the settings it needs.
                "settings": self.settings.shown(),
                "organizations": orgs,
                "scheduled": self.scheduler.count(),
                "webhooks": {
                    "url": self.settings.webhook_url,
                    "secret": self.webhook_endpoints.default_secret,
                    # How far delivery is behind (a flowing clock's sender, a hanging receiver).
                    "backlog": self.deliveries.backlog(),
                },
                "identity": identity_info(self),
            }
