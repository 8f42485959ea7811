"""Checkout sessions: creation (both body shapes of §4), collection modes, the session
lifecycle of §3, payment-link attempts, expiry, and the one order a session may yield.

Every public method runs under the sandbox lock, so approve, poll and expiry racing on
threads see one consistent session and a session yields at most one order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from typing_extensions import TypedDict

from svc_sandbox.commerce import checkout_input as rules
from svc_sandbox.commerce.checkout_links import CheckoutConfigService
from svc_sandbox.commerce.customers import Customer, CustomerService
from svc_sandbox.commerce.failures import SESSION_EXPIRED
from svc_sandbox.commerce.orders import CUSTOM_PAYMENT_TITLE, ORDER_LIFECYCLE, Order, OrderService
from svc_sandbox.commerce.payments import (
    Channel,
    Failure,
    PaymentAttempt,
    PaymentService,
)
from svc_sandbox.commerce.products import Product, ProductService, validate_product_ref
from svc_sandbox.commerce.schemas import CheckoutBody, CustomerBody, PayBody
from svc_sandbox.core.clock import isoformat, seconds_delay
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.durations import seconds_text
from svc_sandbox.core.errors import Conflict, NotFound, ValidationFailed, found
from svc_sandbox.core.ids import is_object_id
from svc_sandbox.core.lifecycle import Lifecycle, Transition
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, snapshot
from svc_sandbox.orgs.organizations import Organization, OrganizationService, Principal
from svc_sandbox.webhooks.events import EventLog

SESSION_LIFETIME = timedelta(minutes=30)
EXPIRE = "checkout.expire"


def open_at(session: CheckoutSession, instant: datetime) -> bool:
    """Whether ``session`` still takes a payment at ``instant``: strictly before its
    ``expiresAt`` (the one tie rule, docs/spec-gaps.md). The scheduler runs what is due at one
    instant in the order it was scheduled, and a session's expiry is scheduled when it opens,
    before any prompt's decision: at ``expiresAt`` the expiry goes first. A poll settles a
    session by the same rule, so a decision due at that instant ends it as ``expired``
    whichever runs it."""
    return instant < session.expires_at


CHECKOUT_ID = "{CHECKOUT_ID}"


class Mode(StrEnum):
    """How the buyer pays (§4 collection modes)."""

    FREE = "free"  # free product: order at once
    DIRECT = "direct"  # production + gateway: prompt pushed to the phone
    SIMULATOR = "simulator"  # sandbox + gateway: {simulate_url}/<session_id>
    LINK = "link"  # token, no gateway: payment link {pay_url}/cs_<id>
    HOSTED = "hosted"  # no token, no gateway: the provider's hosted page, gateway telebirr


#: Modes whose buyer pays on the payment-link page (attempts through POST /pay/{payToken}).
LINK_MODES = (Mode.LINK,)
#: §4: "A default gateway of telebirr is also stated for product checkout without a token".
HOSTED_GATEWAY = "telebirr"
#: Fields of the product body that "do not apply" to a custom amount (§4): ignored there.
PRODUCT_ONLY_FIELDS = ("checkoutLink", "collectedFields")


def fields_not_applying(body: CheckoutBody) -> list[str]:
    """The fields a custom-amount checkout sent that do not apply to it (ignored, reported)."""
    if body.productId is not None:
        return []
    return [name for name in PRODUCT_ONLY_FIELDS if getattr(body, name) is not None]


SESSION_LIFECYCLE = Lifecycle(
    "checkout session",
    [
        Transition("none", "open", "POST /checkout, paid checkout accepted"),
        Transition("none", "completed", "POST /checkout, free product (order created at once)"),
        Transition("open", "completed", "successful payment"),
        Transition("open", "expired", "30 minutes elapse unpaid, or a direct push fails"),
    ],
)


class ExpirePayload(TypedDict):
    """What a checkout.expire scheduler entry carries."""

    sessionId: str


@dataclass(slots=True)
class CheckoutSession:
    id: str
    org_id: str
    environment: str
    mode: Mode
    status: str
    amount: int
    created_at: datetime
    expires_at: datetime
    product_id: str
    product_title: str
    description: str | None = None
    customer_id: str | None = None
    customer_external_id: str | None = None
    gateway: str | None = None
    phone: str | None = None
    success_url: str | None = None
    checkout_link: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    collected_fields: dict[str, str] = field(default_factory=dict)
    order_id: str | None = None
    failure: Failure | None = None
    last_failure: Failure | None = None
    #: When a status poll last checked the payment provider (the per-session throttle).
    provider_checked_at: datetime | None = None

    @property
    def pay_token(self) -> str:
        return "cs_" + self.id

    @property
    def title(self) -> str:
        """What the buyer is paying for: the custom description, else the product title."""
        return self.description or self.product_title


@dataclass
class _Plan:
    """A checked checkout request: everything needed to open the session, nothing stored yet
    and no id drawn (a refusal after planning must not shift later ids)."""

    org: Organization
    environment: str
    mode: Mode
    amount: int
    #: None for a custom amount: the organization's placeholder, drawn when the session opens.
    product_id: str | None
    product_title: str
    description: str | None
    customer: CustomerBody | None
    gateway: str | None
    success_url: str | None
    checkout_link: str | None
    metadata: dict[str, str]
    collected_fields: dict[str, str]


class CheckoutService(Service):
    def __init__(
        self,
        ctx: ServiceContext,
        *,
        orgs: OrganizationService,
        products: ProductService,
        customers: CustomerService,
        orders: OrderService,
        events: EventLog,
        payments: PaymentService,
        config: CheckoutConfigService,
    ) -> None:
        super().__init__(ctx)
        self.orgs = orgs
        self.products = products
        self.customers = customers
        self.orders = orders
        self.events = events
        self.payments = payments
        self.config = config
        self.sessions: dict[str, CheckoutSession] = {}
        #: The internal "Custom payment" product id of each organization (§2 Order.productId).
        self.placeholders: dict[str, str] = {}
        self.scheduler.register(EXPIRE, self._expire_due, ExpirePayload)
        payments.subscribe(self._on_decided)
        payments.bind_sessions(self.settle, self._start_control_attempt)

    # --- creation --------------------------------------------------------------------------

    @locked
    def create(self, principal: Principal | None, body: CheckoutBody) -> dict[str, Any]:
        """POST /checkout: checks everything first (a refusal creates nothing), then opens."""
        plan = self._plan(principal, body)
        if plan.mode is not Mode.FREE:
            self.payments.refuse_checkout_if_faulted()
        session = self._open(plan)
        if session.mode is Mode.FREE:
            return {"sessionId": session.id, "orderId": session.order_id}
        return {
            "sessionId": session.id,
            "checkoutUrl": self.checkout_url(session),
            "mode": "direct" if session.mode is Mode.DIRECT else "redirect",
        }

    def _plan(self, principal: Principal | None, body: CheckoutBody) -> _Plan:
        product: Product | None = None
        if body.productId is None:
            if principal is None:
                raise ValidationFailed(rules.PRODUCT_ID_REQUIRED)
            description: str | None = rules.custom_description(body.description)
            amount = rules.custom_amount(body.amount)
        else:
            if body.description is not None:
                raise ValidationFailed(
                    "description is only for custom amounts: omit it when productId is given"
                )
            description = None
            amount = 0
        request_metadata: dict[str, str] = {}
        if body.metadata is not None:
            if principal is None:
                raise ValidationFailed("metadata requires an API token (token requests only)")
            request_metadata = rules.metadata(body.metadata)

        if body.productId is not None:
            product = self._checkout_product(principal, body.productId)
            amount = self._product_amount(product, body.amount)
        org = principal.org if principal is not None else self.orgs.get(product.org_id)  # type: ignore[union-attr]
        environment = (principal.environment if principal else org.environment).value

        mode = self._mode(amount, body.gateway, environment, principal is not None)
        self._check_customer(mode, body.customer)

        link_metadata: dict[str, str] = {}
        link_success: str | None = None
        link_id: str | None = None
        collected: dict[str, str] = {}
        if product is not None:
            collected = self.config.collect(org.id, product.id, body.collectedFields or {})
            link = self.config.applicable_link(body.checkoutLink, org.id, product.id)
            if link is not None:
                link_id, link_metadata, link_success = link.id, link.metadata, link.success_url
        success_url = body.successUrl
        if success_url is not None and principal is None and not _registered(org, success_url):
            success_url = None
        return _Plan(
            org=org,
            environment=environment,
            mode=mode,
            amount=amount,
            product_id=product.id if product else None,
            product_title=product.title if product else CUSTOM_PAYMENT_TITLE,
            description=description,
            customer=body.customer,
            gateway=HOSTED_GATEWAY if mode is Mode.HOSTED else body.gateway,
            success_url=success_url or link_success,
            checkout_link=link_id,
            metadata=rules.merge_metadata(
                product.metadata if product else {}, link_metadata, request_metadata
            ),
            collected_fields=collected,
        )

    def _checkout_product(self, principal: Principal | None, ref: str) -> Product:
        """Only a published product of the caller's organization (any organization's without
        a token) can be checked out; anything else is 404 (§4)."""
        validate_product_ref(ref, "productId")
        product = self.products.find(ref)
        if (
            product is None
            or not product.published
            or (principal is not None and product.org_id != principal.org.id)
        ):
            raise NotFound("Product not found")
        return product

    @staticmethod
    def _product_amount(product: Product, requested: Any) -> int:
        if product.pricing_model == "pwyw":
            return rules.pwyw_amount(requested, product.minimum_amount or 0)
        rules.ignored_amount(requested)
        if product.pricing_model == "fixed":
            return product.amount or 0
        return 0

    @staticmethod
    def _mode(amount: int, gateway: str | None, environment: str, token: bool) -> Mode:
        # A free product, and a fixed price of 0 or a pwyw amount of 0 (its minimum may be 0):
        # nothing to pay, so no provider is asked for 0 ETB (docs/spec-gaps.md). A custom
        # amount is never 0 (at least 100).
        if amount == 0:
            return Mode.FREE
        if gateway is not None:
            return Mode.DIRECT if environment == "production" else Mode.SIMULATOR
        return Mode.LINK if token else Mode.HOSTED

    @staticmethod
    def _check_customer(mode: Mode, customer: CustomerBody | None) -> None:
        """§2 Customer: email everywhere but a paid payment link; phone for a push."""
        if mode is not Mode.LINK and (customer is None or customer.email is None):
            raise ValidationFailed("customer.email is required")
        if mode in (Mode.DIRECT, Mode.SIMULATOR) and (customer is None or customer.phone is None):
            raise ValidationFailed(
                "customer.phone is required when gateway is set (the phone the prompt goes to)"
            )

    def _placeholder(self, org_id: str) -> str:
        if org_id not in self.placeholders:
            self.placeholders[org_id] = self.ids.object_id(self.products.products)
        return self.placeholders[org_id]

    def _open(self, plan: _Plan) -> CheckoutSession:
        """Opens a checked plan. Nothing here refuses: every check ran in ``_plan``."""
        product_id = plan.product_id or self._placeholder(plan.org.id)
        now = self.clock.now()
        customer: Customer | None = None
        if plan.customer is not None and plan.customer.email is not None:
            customer = self.customers.upsert(
                plan.org.id,
                plan.environment,
                plan.customer.email,
                name=plan.customer.name,
                phone=plan.customer.phone,
                external_id=plan.customer.externalId,
            )
        session_id = self.ids.object_id(self.sessions)
        session = CheckoutSession(
            id=session_id,
            org_id=plan.org.id,
            environment=plan.environment,
            mode=plan.mode,
            status="none",
            amount=plan.amount,
            created_at=now,
            expires_at=now + SESSION_LIFETIME,
            product_id=product_id,
            product_title=plan.product_title,
            description=plan.description,
            customer_id=customer.id if customer else None,
            customer_external_id=plan.customer.externalId if plan.customer else None,
            gateway=plan.gateway,
            phone=plan.customer.phone if plan.customer else None,
            success_url=plan.success_url.replace(CHECKOUT_ID, session_id)
            if plan.success_url
            else None,
            checkout_link=plan.checkout_link,
            metadata=plan.metadata,
            collected_fields=plan.collected_fields,
        )
        self.sessions[session.id] = session
        if plan.mode is Mode.FREE:
            SESSION_LIFECYCLE.move(session, "completed")
            order = self._new_order(session, "paid")
            self._emit_order("order.completed", session, order)
            return session
        SESSION_LIFECYCLE.move(session, "open")
        self.scheduler.schedule(session.expires_at, EXPIRE, {"sessionId": session.id})
        if plan.mode in (Mode.DIRECT, Mode.SIMULATOR):
            self._attempt(session, self._channel(session), plan.gateway or "", session.phone or "")
        return session

    def checkout_url(self, session: CheckoutSession) -> str | None:
        """Free (nothing to pay) and direct: none. Sandbox push or hosted: the simulator.
        Production hosted: the emulated provider page. Token without gateway: the payment
        link."""
        if session.mode in (Mode.FREE, Mode.DIRECT):
            return None
        if session.mode is Mode.LINK:
            return f"{self.settings.root('pay_url')}/{session.pay_token}"
        if session.environment == "production":
            return f"{self.settings.root('provider_url')}/{session.id}"
        return self.simulator_page(session)

    @staticmethod
    def _simulated(session: CheckoutSession) -> bool:
        """The sandbox simulator decides sandbox sessions only: a production session's prompts
        are the provider settings' and the control plane's, never a page anyone on the network
        can reach."""
        return session.environment == "sandbox"

    def simulator_page(self, session: CheckoutSession) -> str | None:
        """The simulator's page of ``session``; None for a session the simulator does not
        serve, or with nothing to pay (free: its order is paid at once)."""
        if not self._simulated(session) or session.mode is Mode.FREE:
            return None
        return f"{self.settings.root('simulate_url')}/{session.id}"

    # --- payment attempts ------------------------------------------------------------------

    def _attempt(
        self,
        session: CheckoutSession,
        channel: Channel,
        gateway: str,
        phone: str,
        plan: bool = True,
    ) -> PaymentAttempt:
        """Sends a prompt; the session's order is created (pending) with its first prompt."""
        if session.order_id is None:
            self._new_order(session, "pending")
        return self.payments.start(
            session.id, session.org_id, session.environment, channel, gateway, phone, plan=plan
        )

    @locked
    def pay(self, pay_token: str, body: PayBody) -> CheckoutSession:
        """POST /pay/{payToken}: one attempt on a payment link (see docs/spec-gaps.md)."""
        session = self.by_pay_token(pay_token)
        self._ready_for_attempt(session)
        in_flight = self.payments.in_flight_of(session.id)
        if in_flight is not None:
            wait = (in_flight.decide_at or self.clock.now()) - self.clock.now()
            seconds = max(1, math.ceil(wait.total_seconds()))
            raise Conflict(
                "A payment prompt is already out: answer it on the phone or try again in "
                + seconds_text(seconds),
                headers={"Retry-After": str(seconds)},
            )
        if session.customer_id is None:
            if body.email is None:
                raise ValidationFailed("email is required")
            customer = self.customers.upsert(
                session.org_id, session.environment, body.email, name=body.name, phone=body.phone
            )
            session.customer_id = customer.id
        session.gateway, session.phone = body.gateway, body.phone
        self._attempt(session, Channel.LINK, body.gateway, body.phone)
        return session

    def _ready_for_attempt(self, session: CheckoutSession) -> None:
        """Before a buyer's new attempt: the session brought up to date, the provider asked
        about the prompt out (a notice still on its way is learned now), and still open."""
        self.settle(session.id)
        self._require_open(session)
        self.payments.check(session.id, "attempt")
        self._require_open(session)

    def _start_control_attempt(self, session_id: str) -> PaymentAttempt:
        """The control plane or simulator decides a session with no prompt out: a prompt is
        started for it (not planned: the caller decides it at once)."""
        session = self.get(session_id)
        self.settle(session_id)
        self._require_open(session)
        return self._attempt(
            session,
            self._channel(session),
            session.gateway or "telebirr",
            session.phone or "",
            plan=False,
        )

    @staticmethod
    def _channel(session: CheckoutSession) -> Channel:
        if session.mode in LINK_MODES:
            return Channel.LINK
        if session.mode is Mode.HOSTED and session.environment == "production":
            return Channel.HOSTED
        return Channel.PUSH if session.mode is Mode.DIRECT else Channel.SIMULATOR

    @locked
    def hosted_session(self, session_id: str) -> CheckoutSession:
        """A production no-token checkout, whose buyer pays on the emulated provider page."""
        session = self.sessions.get(session_id)
        if (
            session is None
            or session.mode is not Mode.HOSTED
            or session.environment != ("production")
        ):
            raise NotFound("Payment page not found")
        return session

    @locked
    def simulated_session(self, session_id: str) -> CheckoutSession:
        """A session the sandbox simulator page shows and decides (``_simulated``); another
        answers 404, as an unknown one does."""
        session = self.sessions.get(session_id)
        served = session if session is not None and self._simulated(session) else None
        return found(served, "Checkout session not found")

    @locked
    def simulator_waiting(self, session: CheckoutSession) -> str | None:
        """The simulator page of a session whose prompt waits for it (a sandbox prompt to a
        phone that is no deciding trigger), else None: where the payment-link page sends its
        buyer after an attempt, and what it links while the prompt is out."""
        attempt = self.payments.in_flight_of(session.id)
        if attempt is None or not self.payments.waits_for_simulator(attempt):
            return None
        return self.simulator_page(session)

    @locked
    def confirm_hosted(self, session_id: str, phone: str) -> CheckoutSession:
        """The buyer confirms on the provider page: one prompt, decided by the provider's
        configured outcome at once (a failure ends the session, as a push's does)."""
        session = self.hosted_session(session_id)
        self._ready_for_attempt(session)
        if self.payments.in_flight_of(session.id) is not None:
            raise Conflict("This payment is already waiting for the provider's decision")
        session.phone = phone
        self._attempt(session, Channel.HOSTED, session.gateway or HOSTED_GATEWAY, phone)
        return session

    def _on_decided(self, attempt: PaymentAttempt) -> None:
        session = self.sessions.get(attempt.session_id)
        if session is None or session.status != "open":
            return
        if attempt.failure is None:
            self._complete(session)
        elif session.mode in LINK_MODES:
            session.last_failure = attempt.failure  # the buyer may retry until expiry
        else:
            self._expire(session, attempt.failure)  # a failed push ends the session

    # --- settling: completion and expiry ---------------------------------------------------

    @locked
    def settle(self, session_id: str) -> None:
        """What a poll does (§4): applies the provider's due decision and a due expiry, in
        due order, even if the scheduler has not run them yet, each as its scheduler entry
        does (the same handler, the clock pinned at its due time): the outcome and its
        timestamps are the same whoever gets there first. (A request on a flowing clock has
        already run what was due when it began, ``Sandbox.catch_up``; this covers what fell
        due since, and an imported state's overdue work on a frozen clock.)"""
        session = self.sessions.get(session_id)
        if session is None or session.status != "open":
            return
        now = self.clock.now()
        attempt = self.payments.in_flight_of(session.id)
        due = attempt.decide_at if attempt is not None else None
        if attempt is not None and due is not None and due <= now and open_at(session, due):
            with self.clock.pinned(due):
                self.payments.run_planned(attempt)
        if session.status == "open" and not open_at(session, now):
            with self.clock.pinned(session.expires_at):
                self._expire_unpaid(session)

    def _expire_due(self, payload: dict[str, Any]) -> None:
        session = self.sessions.get(payload["sessionId"])
        if session is not None and session.status == "open":
            self._expire_unpaid(session)

    def _expire_unpaid(self, session: CheckoutSession) -> None:
        """The 30 minutes are up: one last check of the provider (a decision whose notice is
        late or lost still counts), then the session expires unless that paid it."""
        self.payments.check(session.id, "expiry")
        if session.status == "open":
            self._expire(session, self._expiry_failure(session))

    def _check_provider(self, session: CheckoutSession) -> None:
        """What a status poll adds (§3, §4): while the session is open and a prompt is out, it
        checks the payment provider, at most once every ``provider_check_interval_seconds``
        per session, so a poll resolves a late or lost notice."""
        if session.status != "open" or self.payments.in_flight_of(session.id) is None:
            return
        now = self.clock.now()
        interval = seconds_delay(self.settings.provider_check_interval_seconds)
        last = session.provider_checked_at
        if last is not None and last <= now < last + interval:
            return
        session.provider_checked_at = now
        self.payments.check(session.id, "poll")

    def _expiry_failure(self, session: CheckoutSession) -> Failure:
        """§6: the last attempt's reason, or ``session_expired`` if nobody tried. A prompt
        still out when the 30 minutes end was not answered in time."""
        if self.payments.in_flight_of(session.id) is not None:
            return Failure.of("payment_timed_out")
        return session.last_failure or Failure.of(SESSION_EXPIRED)

    def _complete(self, session: CheckoutSession) -> None:
        SESSION_LIFECYCLE.move(session, "completed")
        order = self.orders.get(session.order_id or "")
        self.orders.move(order, "paid")
        self._emit_order("order.completed", session, order)

    def _expire(self, session: CheckoutSession, failure: Failure) -> None:
        SESSION_LIFECYCLE.move(session, "expired")
        session.failure = failure
        attempt = self.payments.in_flight_of(session.id)
        if attempt is not None:
            self.payments.close(attempt, failure)
        if session.order_id is not None:
            self.orders.move(self.orders.get(session.order_id), "failed")
        self.events.emit(
            session.org_id,
            session.environment,
            "checkout.session.expired",
            {"sessionId": session.id, "failure": failure.to_public()},
        )

    @staticmethod
    def _require_open(session: CheckoutSession) -> None:
        if session.status == "completed":
            raise Conflict("This checkout is already paid")
        if session.status == "expired":
            raise Conflict("This checkout has expired: start a new checkout")

    # --- orders and events -----------------------------------------------------------------

    def _new_order(self, session: CheckoutSession, status: str) -> Order:
        ORDER_LIFECYCLE.check("none", status)
        customer = self.customers.get(session.customer_id) if session.customer_id else None
        now = self.clock.now()
        order = Order(
            id=self.ids.object_id(self.orders.orders),
            org_id=session.org_id,
            environment=session.environment,
            checkout_session_id=session.id,
            product_id=session.product_id,
            product_title=session.product_title,
            amount=session.amount,
            status=status,
            created_at=now,
            customer_id=customer.id if customer else None,
            customer_email=customer.email if customer else None,
            customer_name=customer.name if customer else None,
            metadata=dict(session.metadata),
            description=session.description,
            paid_at=now if status == "paid" else None,
            customer_external_id=session.customer_external_id,
            collected_fields=dict(session.collected_fields),
        )
        self.orders.add(order)
        session.order_id = order.id
        self._emit_order("order.created", session, order)
        return order

    def _emit_order(self, type_: str, session: CheckoutSession, order: Order) -> None:
        data: dict[str, Any] = {
            "sessionId": session.id,
            "orderId": order.id,
            "metadata": dict(order.metadata),
            "description": order.description,
            "amount": order.amount,
            "currency": "ETB",
            "customerExternalId": session.customer_external_id,
        }
        if type_ == "order.completed":
            data["paidAt"] = isoformat(order.paid_at) if order.paid_at else None
        self.events.emit(session.org_id, session.environment, type_, data)

    # --- reading ---------------------------------------------------------------------------

    @locked
    def get(self, session_id: str) -> CheckoutSession:
        return found(self.sessions.get(session_id), "Checkout session not found")

    @locked
    def by_pay_token(self, pay_token: str) -> CheckoutSession:
        session = None
        if pay_token.startswith("cs_"):
            session = self.sessions.get(pay_token[3:])
        if session is None or session.mode not in LINK_MODES:
            raise NotFound("Payment link not found")
        return session

    @locked
    def status(self, session_id: str) -> dict[str, Any]:
        """GET /checkout/{sessionId}: settles what is due, then CheckoutStatus (§2)."""
        if not is_object_id(session_id):
            raise ValidationFailed("sessionId must be 24 lowercase hex characters")
        session = self.get(session_id)
        self.settle(session_id)
        self._check_provider(session)
        return self.status_of(session)

    @locked
    def status_of(self, session: CheckoutSession) -> dict[str, Any]:
        order = self.orders.get(session.order_id) if session.order_id else None
        body: dict[str, Any] = {
            "sessionId": session.id,
            "status": session.status,
            "expiresAt": isoformat(session.expires_at),
            "amount": session.amount,
            "currency": "ETB",
            # §2: non-null means payment succeeded; the pending or failed order stays hidden.
            "orderId": order.id if order is not None and order.status == "paid" else None,
            "orderStatus": order.status if order is not None else None,
            "failure": session.failure.to_public() if session.failure else None,
        }
        if session.mode in LINK_MODES:
            body["attempt"] = {
                "inFlight": self.payments.in_flight_of(session.id) is not None,
                "lastFailure": session.last_failure.to_public() if session.last_failure else None,
            }
        return body

    @locked
    def describe(self, session_id: str) -> dict[str, Any]:
        """The control plane's view: the status plus what the buyer cannot see."""
        session = self.get(session_id)
        self.settle(session_id)
        return {
            **self.status_of(session),
            "mode": session.mode.value,
            "organizationId": session.org_id,
            "environment": session.environment,
            "title": session.title,
            "checkoutUrl": self.checkout_url(session),
            "payToken": session.pay_token if session.mode in LINK_MODES else None,
            "successUrl": session.success_url,
            "metadata": dict(session.metadata),
            "createdAt": isoformat(session.created_at),
            "attempts": [a.to_public() for a in self.payments.attempts_of(session.id)],
            "providerTimeline": self.payments.timeline_of(session.id),
        }

    def export(self) -> dict[str, Any]:
        return {
            "sessions": [snapshot(s) for s in self.sessions.values()],
            "placeholders": dict(self.placeholders),
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.sessions = {s["id"]: from_json(CheckoutSession, s) for s in data["sessions"]}
        self.placeholders = dict(data["placeholders"])


def _registered(org: Organization, url: str) -> bool:
    """§4: without a token a successUrl counts only when its host matches a registered
    redirect URL of the organization."""
    host = urlsplit(url).hostname
    return host is not None and any(urlsplit(u).hostname == host for u in org.redirect_urls)
