"""Sandbox: the in-process handle that owns the clock, the ids, the state and every service.

Every test control is a method here first; the control plane, the pytest plugin and the CLI
are thin fronts over these methods.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

from svc_sandbox import __version__
from svc_sandbox.commerce.checkout import CheckoutService
from svc_sandbox.commerce.checkout_links import CheckoutConfigService
from svc_sandbox.commerce.customers import CustomerService
from svc_sandbox.commerce.limits import CheckoutLimits
from svc_sandbox.commerce.orders import OrderService
from svc_sandbox.commerce.payments import PaymentService, ProviderConfig
from svc_sandbox.commerce.payouts import PayoutService
from svc_sandbox.commerce.products import ProductService
from svc_sandbox.contract.conformance import ConformanceRecorder
from svc_sandbox.contract.validation import commerce_contract
from svc_sandbox.core.clock import Clock, ClockMode, isoformat, parse_instant, wall_now
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.ids import IdFactory
from svc_sandbox.core.journal import RequestJournal
from svc_sandbox.core.scheduler import RanEntry, Scheduler
from svc_sandbox.orgs.organizations import Environment, KycStatus, OrganizationService
from svc_sandbox.settings import Settings
from svc_sandbox.webhooks.events import EventLog

EXPORT_FORMAT = 1


class Stateful(Protocol):
    def export(self) -> dict[str, Any]: ...
    def restore(self, data: dict[str, Any]) -> None: ...


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
        #: Called after due work ran, outside the lock (webhook delivery hooks in here).
        self.after_work: list[Callable[[], None]] = []

        self.orgs = OrganizationService(self.lock, self.clock, self.ids)
        self.products = ProductService(self.lock, self.clock, self.ids)
        self.orders = OrderService(self.lock, self.clock, self.ids)
        self.events = EventLog(self.lock, self.clock, self.ids)
        self.customers = CustomerService(self.lock, self.clock, self.ids)
        self.checkout_config = CheckoutConfigService(self.lock, self.clock, self.ids)
        self.payments = PaymentService(
            self.lock,
            self.clock,
            self.ids,
            self.scheduler,
            ProviderConfig(
                push_outcome=settings.production_push_outcome,
                push_delay_seconds=settings.production_push_delay_seconds,
            ),
        )
        self.checkout = CheckoutService(
            self.lock,
            self.clock,
            self.ids,
            self.scheduler,
            settings,
            orgs=self.orgs,
            products=self.products,
            customers=self.customers,
            orders=self.orders,
            events=self.events,
            payments=self.payments,
            config=self.checkout_config,
        )
        self.limits = CheckoutLimits(self.lock, self.clock, settings)
        self.payouts = PayoutService(
            self.lock, self.clock, self.ids, self.scheduler, settings, self.orgs, self.orders
        )
        self._services: dict[str, Stateful] = {
            "orgs": self.orgs,
            "products": self.products,
            "orders": self.orders,
            "events": self.events,
            "customers": self.customers,
            "checkoutConfig": self.checkout_config,
            "payments": self.payments,
            "checkout": self.checkout,
            "checkoutLimits": self.limits,
            "payouts": self.payouts,
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
        """The seeded organizations every fresh or reset sandbox starts with."""
        for name, environment in (
            ("Sandbox Org", Environment.SANDBOX),
            ("Production Org", Environment.PRODUCTION),
        ):
            org = self.orgs.create(name, environment, developer_mode=True, kyc=KycStatus.APPROVED)
            self.orgs.create_token(org.id, name="seeded")

    # --- time -------------------------------------------------------------------------

    def now(self) -> datetime:
        return self.clock.now()

    def advance(self, delta: timedelta) -> list[RanEntry]:
        """Moves the clock forward, running due work in due-time order, each at its due time."""
        if delta < timedelta(0):
            raise ValidationFailed("duration must not be negative")
        with self.lock:
            target = self.clock.now() + delta
            ran = self._run_until(target)
            self.clock.set(target)
        self._after_work()
        return ran

    def set_time(self, instant: datetime) -> list[RanEntry]:
        """Sets the clock; moving forward runs the work due on the way."""
        with self.lock:
            ran = self._run_until(instant) if instant > self.clock.now() else []
            self.clock.set(instant)
        self._after_work()
        return ran

    def run_due(self) -> list[RanEntry]:
        """Runs what is due now (a real or scaled clock's ticker calls this)."""
        with self.lock:
            ran = self._run_until(self.clock.now())
        self._after_work()
        return ran

    def _run_until(self, target: datetime) -> list[RanEntry]:
        ran: list[RanEntry] = []
        try:
            while (entry := self.scheduler.pop_due(target)) is not None:
                self.clock.pin(entry.due)
                self.scheduler.run(entry)
                ran.append(RanEntry(entry.due, entry.kind, entry.payload))
        finally:
            self.clock.pin(None)
        return ran

    def _after_work(self) -> None:
        for hook in self.after_work:
            hook()

    def start_background(self) -> None:
        """In real and scaled mode, runs due work as the clock flows (until ``stop``)."""
        if self.clock.mode is ClockMode.FROZEN or self._ticker is not None:
            return
        self._stop.clear()
        self._ticker = threading.Thread(target=self._tick, name="svc-sandbox-clock", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.settings.tick_seconds):
            self.run_due()

    def stop(self) -> None:
        self._stop.set()
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
            }
