"""Sandbox: the in-process handle that owns the clock, the ids, the state and every service.

Every test control is a method here first; the control plane, the pytest plugin and the CLI
are thin fronts over these methods.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any, Protocol

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
from svc_sandbox.contract.validation import commerce_contract, identity_contract
from svc_sandbox.core.clock import (
    Clock,
    ClockMode,
    isoformat,
    parse_instant,
    wall_now,
    wall_sleep,
)
from svc_sandbox.core.context import ServiceContext
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.ids import IdFactory
from svc_sandbox.core.journal import RequestJournal
from svc_sandbox.core.scheduler import RanEntry, Scheduler
from svc_sandbox.identity.apps import AppService
from svc_sandbox.identity.grants import AuthorizationService
from svc_sandbox.identity.keys import KeyService
from svc_sandbox.identity.limits import IdentityLimits
from svc_sandbox.identity.seed import identity_info, seed_identity
from svc_sandbox.identity.sessions import BrowserSessionService
from svc_sandbox.identity.tokens import TokenService
from svc_sandbox.identity.users import UserService
from svc_sandbox.latency import LatencyFaults
from svc_sandbox.orgs.organizations import Environment, KycStatus, OrganizationService
from svc_sandbox.settings import Settings
from svc_sandbox.webhooks.delivery import DeliveryService
from svc_sandbox.webhooks.dispatcher import Dispatcher
from svc_sandbox.webhooks.endpoints import EndpointService
from svc_sandbox.webhooks.events import EventLog

EXPORT_FORMAT = 1


class Stateful(Protocol):
    def export(self) -> dict[str, Any]: ...
    def restore(self, data: dict[str, Any]) -> None: ...


class AfterWork(Protocol):
    """Work that must run outside the lock once due work made it ready (webhook delivery)."""

    def pending(self) -> bool:
        """True when something is ready: advancing pauses there to let it run first."""
        ...

    def __call__(self, background: bool = False) -> None:
        """Does it; ``background`` is True when the real or scaled clock's ticker calls."""
        ...


class Sandbox:
    def __init__(self, settings: Settings | None = None, **overrides: Any) -> None:
        if settings is None:
            settings = Settings.load(overrides)
        elif overrides:
            settings = settings.model_copy(update=overrides)
        self.settings = settings
        self.lock = threading.RLock()
        self.clock = Clock(settings.clock_mode, self._start_instant(), settings.clock_factor)
        self.ids = IdFactory(settings.seed)
        # Request ids have their own stream so that reads never shift resource ids; they are
        # not part of the exported state.
        self.request_ids = IdFactory(f"{settings.seed}:requests")
        self.scheduler = Scheduler()
        self.journal = RequestJournal()
        #: What clients exercised of the commerce contract and where they broke it.
        self.conformance = ConformanceRecorder(commerce_contract())
        #: The same for the identity provider's contract.
        self.identity_conformance = ConformanceRecorder(identity_contract())
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
        self.dispatcher = Dispatcher(self.deliveries)
        self.after_work.append(self.dispatcher)
        self.users = UserService(ctx)
        self.oauth_apps = AppService(ctx, self.orgs)
        self.signing_keys = KeyService(ctx)
        self.access_tokens = TokenService(ctx, self.users, self.oauth_apps, self.signing_keys)
        self.oauth = AuthorizationService(ctx, self.users, self.oauth_apps, self.access_tokens)
        self.browser_sessions = BrowserSessionService(ctx, self.users)
        self.identity_limits = IdentityLimits(ctx)
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
        }
        self._seed_defaults()
        self._initial = self.export()
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

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
        for name, environment in (
            ("Sandbox Org", Environment.SANDBOX),
            ("Production Org", Environment.PRODUCTION),
        ):
            org = self.orgs.create(name, environment, developer_mode=True, kyc=KycStatus.APPROVED)
            self.orgs.create_token(org.id, name="seeded")
            if self.settings.webhook_url:
                endpoint = self.webhook_endpoints.create(
                    org.id, self.settings.webhook_url, description="--webhook-url"
                )
                # One secret for both default endpoints: the one GET /_sandbox shows.
                self.webhook_endpoints.default_secret = endpoint.secret
        seed_identity(self)

    # --- time -------------------------------------------------------------------------

    def now(self) -> datetime:
        return self.clock.now()

    def advance(self, delta: timedelta) -> list[RanEntry]:
        """Moves the clock forward, running due work in due-time order, each at its due time."""
        if delta < timedelta(0):
            raise ValidationFailed("duration must not be negative")
        with self.lock:
            target = self.clock.now() + delta
        return self._move_to(target)

    def delay(self, delta: timedelta) -> None:
        """A request's injected latency: a frozen clock advances by it (running what falls
        due); a real or scaled clock waits it out in wall time (divided by the factor)."""
        if self.clock.mode is ClockMode.FROZEN:
            self.advance(delta)
        else:
            wall_sleep(delta.total_seconds() / self.clock.factor)

    def set_time(self, instant: datetime) -> list[RanEntry]:
        """Sets the clock; moving forward runs the work due on the way."""
        with self.lock:
            if instant <= self.clock.now():
                self.clock.set(instant)
                instant = self.clock.now()
        return self._move_to(instant)

    def run_due(self, background: bool = False) -> list[RanEntry]:
        """Runs what is due now (a real or scaled clock's ticker calls this, ``background``)."""
        with self.lock:
            now = self.clock.now()
        return self._move_to(now, background)

    def _move_to(self, target: datetime, background: bool = False) -> list[RanEntry]:
        """Runs due work up to ``target``; when an entry leaves after-work ready (a webhook
        attempt due), the clock stops at that entry's time, the lock is let go while the
        after-work runs, and then the walk goes on. So a retry scheduled by a failed attempt
        runs in its turn, before later entries."""
        ran: list[RanEntry] = []
        while True:
            with self.lock:
                step = self._run_until(target, stop_for_work=not background)
                ran += step
                paused = not background and self._work_pending()
                now = self.clock.now()
                if paused and step and step[-1].due > now:
                    self.clock.set(step[-1].due)
                elif not paused and target > now:
                    self.clock.set(target)
            self._after_work(background)
            if not paused or (not step and self._work_pending()):
                return ran

    def _run_until(self, target: datetime, stop_for_work: bool = False) -> list[RanEntry]:
        ran: list[RanEntry] = []
        try:
            while (
                not (stop_for_work and self._work_pending())
                and (entry := self.scheduler.pop_due(target)) is not None
            ):
                self.clock.pin(entry.due)
                self.scheduler.run(entry)
                ran.append(RanEntry(entry.due, entry.kind, entry.payload))
        finally:
            self.clock.pin(None)
        return ran

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
        self._ticker = threading.Thread(target=self._tick, name="svc-sandbox-clock", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.settings.tick_seconds):
            self.run_due(background=True)

    def stop(self) -> None:
        self._stop.set()
        self.dispatcher.stop()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
            self._ticker = None

    # --- state --------------------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        with self.lock:
            return {
                "format": EXPORT_FORMAT,
                "version": __version__,
                "clock": {
                    "now": isoformat(self.clock.now()),
                    "exact": self.clock.now().isoformat(),
                },
                "ids": self.ids.export(),
                "scheduler": self.scheduler.export(),
                "services": {name: s.export() for name, s in self._services.items()},
            }

    def restore(self, data: dict[str, Any]) -> None:
        """Replaces the whole state with an export; a malformed document changes nothing."""
        if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
            raise ValidationFailed(f"format must be {EXPORT_FORMAT} (an export of this sandbox)")
        with self.lock:
            before = self.export()
            try:
                self._restore(data)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                self._restore(before)
                raise ValidationFailed(f"state document is malformed: {exc!r}") from None

    def _restore(self, data: dict[str, Any]) -> None:
        missing = set(self._services) - set(data["services"])
        if missing:
            raise KeyError(f"services.{sorted(missing)[0]}")
        self.ids.restore(data["ids"])
        self.scheduler.restore(data["scheduler"])
        for name, service in self._services.items():
            service.restore(data["services"][name])
        self.clock.set(parse_instant(data["clock"]["exact"]))

    def reset(self) -> None:
        """Back to the seeded state. A frozen or scaled clock goes back to its start too."""
        with self.lock:
            keep = self.clock.now()
            self.restore(self._initial)
            if self.clock.mode is ClockMode.REAL:
                self.clock.set(keep)
        self.journal.clear()
        self.conformance.clear()
        self.identity_conformance.clear()

    def next_request_id(self) -> str:
        with self.lock:
            return "req_" + self.request_ids.object_id()

    # --- description ------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        with self.lock:
            orgs = []
            for org in self.orgs.all():
                entry = org.to_public()
                entry["tokens"] = [t.to_public() for t in self.orgs.tokens_of(org.id)]
                entry["webhookEndpoints"] = [
                    e.to_public() for e in self.webhook_endpoints.list_for(org.id)
                ]
                orgs.append(entry)
            return {
                "name": "svc-sandbox",
                "version": __version__,
                "seed": self.settings.seed,
                "clock": self.clock.describe(),
                "roots": self.settings.roots(),
                "rateLimits": self.settings.rate_limits,
                "organizations": orgs,
                "scheduled": len(self.scheduler.pending()),
                "webhooks": {
                    "url": self.settings.webhook_url,
                    "secret": self.webhook_endpoints.default_secret,
                },
                "identity": identity_info(self),
            }
