"""The commerce money flow against a reference model (hypothesis, stateful).

A ``RuleBasedStateMachine`` drives one seeded Sandbox (frozen clock, strict contract mode) only
over HTTP, through the Flask test client, as a merchant, a buyer and a QA engineer on the
control plane would: products of every pricing model, checkout sessions in every mode,
payment-link attempts, provider decisions, clock moves, orders, the balance, withdrawals with
their cap and idempotency keys. Beside it, ``Model`` says what should happen, written from
service-spec.md (sections cited as §N) and, where the spec is silent, from docs/spec-gaps.md
(cited by row name), never from the emulator's code.

After every request (``CheckedClient``): no 5xx; a refusal has the spec's error shape (§7)
and leaves the state export unchanged. After every rule: what the emulator answered is what
the model says (statuses, amounts, orders, balance, withdrawals, events). At the end of each
example the same requests replayed on a fresh Sandbox of the same seed give byte-identical
answers (same seed + same requests => same ids, tokens, bodies).

The default run is small enough for CI (40 examples of up to 30 steps) and derandomized, so a
failure is the same on every machine. A deep run, e.g. before a release or after a change to
the money rules (a few minutes):

    SVC_MODEL_EXAMPLES=300 SVC_MODEL_STEPS=40 pytest tests/commerce/test_money_model.py

Also described in docs/testing.md ("The model-based money-flow test").
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from flask.testing import FlaskClient
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from werkzeug.test import TestResponse

from svc_sandbox.app import create_app
from svc_sandbox.client import FAILURE_CODES as SPEC_FAILURE_CODES
from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import checkout, org_id, status_of
from tests.commerce.earnings import earn
from tests.commerce.payout_helpers import balance_body, withdraw
from tests.helpers import create_product, token_of

SEED = 11
EXAMPLES = int(os.environ.get("SVC_MODEL_EXAMPLES", "40"))
STEPS = int(os.environ.get("SVC_MODEL_STEPS", "30"))

# --- the spec's numbers, as the model reads them ---------------------------------------------
SESSION_LIFETIME = 30 * 60  # §8 "Session lifetime (and payment link)": 30 minutes
PROMPT_TIMEOUT = 150  # §8 retry guard; spec-gaps "What happens to a prompt nobody answers"
MINIMUM_CUSTOM_AMOUNT = 100  # §8 "Custom amount": at least 100
MINIMUM_WITHDRAWAL = 10_000  # §8 "Withdrawal minimum"
AUTOMATIC_PAYOUT = 1_000_000  # §3, §8: up to this pays out automatically, above waits for review
DAILY_CAP = 10_000_000  # §8 "Withdrawal per organization" per rolling 24 hours
DAY = 24 * 60 * 60
PAYOUT_PENDING_SECONDS = 60  # spec-gaps "Withdrawal lifecycle": pending -> processing
PAYOUT_PROCESSING_SECONDS = 300  # spec-gaps "Withdrawal lifecycle": processing -> completed
DEFAULT_FEE_RATE = "0.07"  # §8 "Withdrawal fee": 7% by default
TAX_RATE = Decimal("0.15")  # spec-gaps "Tax: rate and base": 15% of the fee
PAY_ATTEMPTS_PER_WINDOW = 30  # §8 "POST /pay/{payToken}": 30 attempts per 5 minutes per IP
PAY_WINDOW = 5 * 60

GATEWAYS = ("telebirr", "mpesa", "cbe")
#: The §7 session failure codes (the client library's table) a decision may carry:
#: ``session_expired`` only the clock gives.
FAILURE_CODES = tuple(code for code in SPEC_FAILURE_CODES if code != "session_expired")
#: What the production provider may be set to decide (spec-gaps "Production direct push
#: outcome": a failure code, ``approve``, or ``none`` to wait for the control plane).
PROVIDER_OUTCOMES = (
    *["approve"] * 4,
    "none",
    "payment_rejected",
    "payment_failed",
    "payment_canceled",
    "payment_timed_out",
)
#: §8 sandbox trigger phones: the push's numbers and the payment-link page's numbers.
PUSH_PAYS, PUSH_FAILS = "251900000001", "251900000002"
LINK_PAYS, LINK_FAILS = "0900000001", "0900000002"
BUYER_PHONE = "0911223344"
#: §7, quoted: the custom-amount validation messages.
CUSTOM_AMOUNT_MESSAGES = {
    "description is required when productId is omitted (what the buyer is paying for)",
    "description must be at most 120 characters",
    "amount is required when productId is omitted: an integer in ETB minor units, "
    "at least 100 (1.00 ETB)",
    "metadata must be an object of string values",
    "metadata can have at most 20 keys",
    "metadata.a must be a string, number or boolean",
}
OWNER_WALLET_MESSAGE = "The owner's wallet cannot cover this payout now"  # spec-gaps "402"


def fee_parts(amount: int, fee_rate: str) -> tuple[int, int, int]:
    """§8 "each part rounded to the nearest santim", as spec-gaps "Rounding" reads it: the fee
    on the amount, the tax on the rounded fee, halves up; the net is what is left."""
    fee = int((amount * Decimal(fee_rate)).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    tax = int((fee * TAX_RATE).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    return fee, tax, amount - fee - tax


def is_santim(value: object) -> bool:
    """A JSON integer (not a float, a string or a boolean)."""
    return isinstance(value, int) and not isinstance(value, bool)


# --- the reference model -------------------------------------------------------------------


@dataclass
class Product:
    id: str
    token: str
    environment: str
    pricing: str  # fixed | pwyw | free
    amount: int  # the fixed price, or the pwyw minimum (0 for free)
    status: str


@dataclass
class Attempt:
    """One payment prompt. ``decide_at`` is when the provider decides it (None: nobody will
    unless the control plane does), with ``outcome`` (``approve`` or a failure code)."""

    decide_at: int | None
    outcome: str | None
    in_flight: bool = True


@dataclass
class Session:
    id: str
    environment: str
    kind: str  # push (direct or simulator) | link (token, no gateway) | free
    amount: int
    created: int
    status: str = "open"
    order: str | None = None  # the order's status; None while the session has none
    failure: str | None = None
    last_failure: str | None = None
    prompt: Attempt | None = None  # the attempt still in flight

    @property
    def expires(self) -> int:
        return self.created + SESSION_LIFETIME


@dataclass
class Withdrawal:
    id: str
    amount: int
    status: str
    created: int
    next_step: int | None  # when the clock moves it on (None: it waits for a review)


@dataclass
class Model:
    """What the spec says the emulator holds; it moves only when a rule tells it what the user
    did or that the clock moved."""

    now: int = 0
    products: list[Product] = field(default_factory=list)
    sessions: dict[str, Session] = field(default_factory=dict)
    withdrawals: dict[str, Withdrawal] = field(default_factory=dict)
    withdrawal_keys: dict[str, str] = field(default_factory=dict)
    provider_outcome: str = "approve"  # spec-gaps "Production direct push outcome" defaults
    provider_delay: int = 10
    fee_rate: str = DEFAULT_FEE_RATE
    owner_can_cover: bool = True
    pay_attempts: list[int] = field(default_factory=list)

    # -- money
    def balance(self) -> int:
        """spec-gaps "Earnings": paid production orders minus every withdrawal not rejected."""
        earned = sum(
            s.amount
            for s in self.sessions.values()
            if s.environment == "production" and s.order == "paid"
        )
        held = sum(w.amount for w in self.withdrawals.values() if w.status != "rejected")
        return earned - held

    def in_cap_window(self) -> list[Withdrawal]:
        """spec-gaps "Rolling 24-hour cap": not rejected, created less than 24 h ago."""
        return [
            w
            for w in self.withdrawals.values()
            if w.status != "rejected" and w.created > self.now - DAY
        ]

    def relative_amount(self, name: str) -> int:
        """``balance`` or ``room`` (what the daily cap still lets through), ``+1`` for one more."""
        base, _, more = name.partition("+")
        room = DAILY_CAP - sum(w.amount for w in self.in_cap_window())
        return (self.balance() if base == "balance" else min(room, self.balance())) + int(more or 0)

    def cap_retry_after(self, amount: int) -> int:
        """Seconds until enough of the window's withdrawals have left it for ``amount``."""
        needed = sum(w.amount for w in self.in_cap_window()) + amount - DAILY_CAP
        for w in sorted(self.in_cap_window(), key=lambda w: w.created):
            needed -= w.amount
            if needed <= 0:
                return w.created + DAY - self.now
        raise AssertionError("an amount above the whole cap has no Retry-After")

    def withdrawal_status(self, amount: object, key: str | None, bad_field: str | None) -> int:
        """The status of POST /withdrawals, checks in spec-gaps "Order of the checks" order."""
        if bad_field is not None or (key is not None and key != key.strip()):
            return 400
        if key in self.withdrawal_keys:
            return 200  # §4: the original withdrawal, nothing new
        assert is_santim(amount)
        if amount > self.balance():  # type: ignore[operator]
            return 400  # §8 "Withdrawal maximum each": the withdrawable earnings
        if sum(w.amount for w in self.in_cap_window()) + amount > DAILY_CAP:  # type: ignore[operator]
            return 429
        return 201 if self.owner_can_cover else 402

    # -- payments
    def new_prompt(self, environment: str, channel: str, phone: str) -> Attempt:
        """A prompt sent now over ``channel`` (push or link). Sandbox: the §8 trigger phones
        decide at once, any other number waits for the simulator (a link prompt times out).
        Production: the provider decides after its delay, unless a link prompt times out first
        (spec-gaps "Production direct push outcome", "What happens to a prompt nobody
        answers")."""
        if environment == "sandbox":
            if phone in (PUSH_PAYS, LINK_PAYS):
                return Attempt(self.now, "approve")
            if phone in (PUSH_FAILS, LINK_FAILS):
                return Attempt(self.now, "payment_failed")
            plans: list[tuple[int, str]] = []
        elif self.provider_outcome == "none":
            plans = []
        else:
            plans = [(self.now + self.provider_delay, self.provider_outcome)]
        if channel == "link":
            plans.append((self.now + PROMPT_TIMEOUT, "payment_timed_out"))
        if not plans:
            return Attempt(None, None)
        decide_at, outcome = min(plans)
        return Attempt(decide_at, outcome)

    def send_prompt(self, session: Session, channel: str, phone: str) -> None:
        session.order = session.order or "pending"
        session.prompt = self.new_prompt(session.environment, channel, phone)
        if session.prompt.decide_at == self.now:
            self.decide(session, session.prompt.outcome or "approve")

    def decide(self, session: Session, outcome: str) -> None:
        """§3: a payment completes the session; a failure ends a push session but leaves a
        payment link open for another try, with ``attempt.lastFailure`` set."""
        if session.prompt is not None:
            session.prompt.in_flight = False
            session.prompt = None
        if outcome == "approve":
            session.status, session.order = "completed", "paid"
            return
        session.last_failure = outcome
        if session.kind != "link":
            session.status, session.failure, session.order = "expired", outcome, "failed"

    def expire(self, session: Session) -> None:
        """§3 "30 minutes elapse unpaid"; §6 and spec-gaps "Expiry failure": the reason is a
        prompt still out (timed out), else the last attempt's, else ``session_expired``."""
        if session.prompt is not None:
            session.prompt = None
            session.last_failure = "payment_timed_out"
        session.status = "expired"
        session.failure = session.last_failure or "session_expired"
        if session.order == "pending":
            session.order = "failed"

    def advance(self, seconds: int) -> None:
        """Everything due by then, each session and withdrawal in its own due order."""
        until = self.now + seconds
        for session in self.sessions.values():
            while session.status == "open":
                prompt = session.prompt
                due = prompt.decide_at if prompt is not None else None
                if due is not None and due < session.expires and due <= until:
                    self.decide(session, prompt.outcome or "approve")  # type: ignore[union-attr]
                elif session.expires <= until:
                    self.expire(session)
                else:
                    break
        for w in self.withdrawals.values():
            while w.next_step is not None and w.next_step <= until:
                if w.status in ("pending", "approved"):
                    w.status, w.next_step = "processing", w.next_step + PAYOUT_PROCESSING_SECONDS
                else:
                    w.status, w.next_step = "completed", None
        self.now = until

    def take_pay_attempt(self) -> bool:
        """§8: 30 attempts per 5 minutes per IP (every test request comes from one IP)."""
        self.pay_attempts = [t for t in self.pay_attempts if t > self.now - PAY_WINDOW]
        self.pay_attempts.append(self.now)
        return len(self.pay_attempts) <= PAY_ATTEMPTS_PER_WINDOW


# --- the emulator, over HTTP ---------------------------------------------------------------


def new_sandbox() -> Sandbox:
    return Sandbox(seed=SEED, clock_mode="frozen", strict=True)


def state_export(client: FlaskClient) -> str:
    """The state as GET /_sandbox/state exports it, less what a refusal may rightly change:
    the §8 rate-limit counters, and a provider "check" step logged before a refused payment
    attempt (spec-gaps "When the emulator checks the provider" (2))."""
    # FlaskClient's own open: the export is the check's, not a request to check or replay
    state = FlaskClient.open(client, "/_sandbox/state").get_json()
    state["services"].pop("checkoutLimits", None)
    for attempt in state["services"]["payments"]["attempts"]:
        attempt["steps"] = [s for s in attempt.get("steps", []) if s.get("kind") != "check"]
    return json.dumps(state, sort_keys=True)


@dataclass
class Exchange:
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    status: int
    body: bytes


class CheckedClient(FlaskClient):
    """The test client every rule (and every shared helper) talks through: it checks what holds
    for any request and records each exchange for the replay."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exchanges: list[Exchange] = []
        self.last: TestResponse | None = None  # for a rule that reads a helper's headers

    def open(self, *args: Any, **kwargs: Any) -> TestResponse:
        changes = kwargs.get("method", "GET") != "GET"
        before = state_export(self) if changes else None
        sent = (args, copy.deepcopy(kwargs))
        response = self.last = super().open(*args, **kwargs)
        self.exchanges.append(Exchange(*sent, response.status_code, response.get_data()))
        assert response.status_code < 500, (args, kwargs, response.get_data()[:500])
        if 400 <= response.status_code < 500:
            self._check_refusal(str(args[0]), response)
            if before is not None:
                assert state_export(self) == before, ("state changed by a refusal", args, kwargs)
        return response

    @staticmethod
    def _check_refusal(path: str, response: TestResponse) -> None:
        """§7: the commerce API answers 401 with ``{message}``, every other refusal with
        ``{error}``; the pages and the control plane with an ``error`` too."""
        body = response.get_json()
        assert isinstance(body, dict), (path, response.get_data()[:200])
        if not path.startswith("/api/"):
            assert "error" in body, body
        elif response.status_code == 401:
            assert set(body) == {"message"}, body
        else:
            assert set(body) == {"error"} and isinstance(body["error"], str), body
            assert body["error"], body


def app_client(sandbox: Sandbox, checked: bool) -> FlaskClient:
    app = create_app(sandbox)
    if checked:
        app.test_client_class = CheckedClient
    return app.test_client()


class MoneyFlow(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.sandbox = new_sandbox()
        self.client: CheckedClient = app_client(self.sandbox, checked=True)  # type: ignore[assignment]
        self.auth = {
            env: {"Authorization": f"Bearer {token_of(self.sandbox, env)}"}
            for env in ("production", "sandbox")
        }
        self.live_org = org_id(self.sandbox, "production")
        self.model = Model()

    # -- helpers
    def send(self, method: str, path: str, body: Any = None, **headers: str) -> TestResponse:
        return self.client.open(path, method=method, json=body, headers=headers)

    def pick_session(self, i: int, kind: str | None = None) -> Session:
        sessions = [s for s in self.model.sessions.values() if kind in (None, s.kind)]
        return sessions[i % len(sessions)]

    def add_session(
        self, result: dict[str, Any], environment: str, kind: str, amount: int
    ) -> Session:
        session = Session(result["sessionId"], environment, kind, amount, self.model.now)
        if kind == "free":
            # §3 "free product: order created immediately"; spec-gaps "Free product: session
            # status": completed, the order paid at once.
            assert set(result) == {"sessionId", "orderId"}, result
            session.status, session.order = "completed", "paid"
        elif kind == "link":
            assert result["mode"] == "redirect", result  # §4 "Token, no gateway"
            assert result["checkoutUrl"].endswith(f"/pay/cs_{session.id}"), result
        elif environment == "production":
            assert result["mode"] == "direct" and result["checkoutUrl"] is None, result
        else:
            assert result["mode"] == "redirect", result  # §4 "Sandbox, gateway set"
            assert result["checkoutUrl"].endswith(f"/simulate/{session.id}"), result
        self.model.sessions[session.id] = session
        return session

    def compare_status(self, session: Session, status: dict[str, Any]) -> None:
        """§2 CheckoutStatus against the model's session."""
        assert status["sessionId"] == session.id
        assert status["status"] == session.status, (session, status)
        assert status["amount"] == session.amount and status["currency"] == "ETB", status
        assert (status["orderId"] is not None) == (session.status == "completed"), status
        assert status["orderStatus"] == session.order, (session, status)
        failure = status["failure"]
        assert (failure and failure["code"]) == session.failure, (session, status)
        if failure is not None:
            assert failure["message"], status  # §2 CheckoutFailure: both required
        if session.kind != "link":
            assert "attempt" not in status, status  # §2: "Payment links only"
            return
        attempt = status["attempt"]
        assert attempt["inFlight"] == (session.prompt is not None), (session, status)
        last = attempt["lastFailure"]
        assert (last and last["code"]) == session.last_failure, (session, status)

    # -- products (§2 Product, Price; §3 Product status; §4 Products)
    @rule(
        environment=st.sampled_from(["production", "sandbox"]),
        pricing=st.sampled_from(["fixed", "pwyw", "free"]),
        amount=st.sampled_from([0, 100, 5000, 12345, 999_999, 2_500_000, 6_000_001]),
        status=st.sampled_from(["published", "published", "draft", None]),
    )
    def create_product(
        self, environment: str, pricing: str, amount: int, status: str | None
    ) -> None:
        fields: dict[str, Any] = {"title": f"P{len(self.model.products)}", "pricingModel": pricing}
        fields["price"] = {
            "fixed": {"amount": amount},
            "pwyw": {"minimumAmount": amount, "defaultAmount": amount},
            "free": {},  # no price fields (the shared helper's default is a fixed price)
        }[pricing]
        if status:
            fields["status"] = status
        result = create_product(self.client, self.auth[environment], **fields)
        product = result["product"]
        assert product["status"] == (status or "draft")  # §3: draft when omitted
        assert product["pricingModel"] == pricing
        assert (result["url"] is not None) == (product["status"] == "published"), result
        self.model.products.append(
            Product(
                product["_id"],
                product["checkoutToken"],
                environment,
                pricing,
                amount if pricing != "free" else 0,
                product["status"],
            )
        )

    @precondition(lambda self: self.model.products)
    @rule(i=st.integers(0, 99), status=st.sampled_from(["draft", "published", "archived", None]))
    def set_product_status(self, i: int, status: str | None) -> None:
        """PATCH sets the status given; DELETE (``None`` here) archives (§3)."""
        product = self.model.products[i % len(self.model.products)]
        auth = self.auth[product.environment]
        if status is None:
            response = self.send("DELETE", f"/api/products/{product.id}", **auth)
            status = "archived"
        else:
            response = self.send(
                "PATCH", f"/api/products/{product.token}", {"status": status}, **auth
            )
        assert response.status_code == 200, response.json
        assert response.json["product"]["status"] == status  # type: ignore[index]
        product.status = status
        # §4: 404 when not in the organization (the other environment's token)
        other = "sandbox" if product.environment == "production" else "production"
        assert (
            self.send("GET", f"/api/products/{product.id}", **self.auth[other]).status_code == 404
        )

    @precondition(lambda self: self.model.products)
    @rule(
        i=st.integers(0, 99),
        amount=st.sampled_from([-1, 0, 100, 7777, 3_000_000]),
        change_model=st.booleans(),
    )
    def update_price(self, i: int, amount: int, change_model: bool) -> None:
        product = self.model.products[i % len(self.model.products)]
        auth = self.auth[product.environment]
        if change_model:  # §4: pricingModel is locked, 422
            other = {"fixed": "pwyw", "pwyw": "free", "free": "fixed"}[product.pricing]
            response = self.send(
                "PATCH", f"/api/products/{product.id}", {"pricingModel": other}, **auth
            )
            assert response.status_code == 422, response.json
            return
        price = (
            {"minimumAmount": amount, "defaultAmount": max(amount, 0)}
            if product.pricing == "pwyw"
            else {"amount": amount}
        )
        response = self.send("PATCH", f"/api/products/{product.id}", {"price": price}, **auth)
        if amount < 0:  # §4 "integers >=0"
            assert response.status_code == 400 and "price" in response.json["error"]  # type: ignore[index]
        elif product.pricing == "free":
            # spec-gaps: a free product takes no price field, but an echo of its Price
            # (``amount`` 0) is not a change
            assert response.status_code == (200 if amount == 0 else 400), response.json
        else:
            assert response.status_code == 200, response.json
            product.amount = amount

    # -- checkout (§3 Checkout session status; §4 Create checkout session)
    @precondition(lambda self: self.model.products)
    @rule(
        i=st.integers(0, 99),
        gateway=st.sampled_from([*GATEWAYS, None, "paypal"]),
        phone=st.sampled_from([BUYER_PHONE, PUSH_PAYS, PUSH_FAILS, "911223344"]),
        pwyw_extra=st.sampled_from([0, 1, -1, 500]),
    )
    def checkout_product(self, i: int, gateway: str | None, phone: str, pwyw_extra: int) -> None:
        product = self.model.products[i % len(self.model.products)]
        body: dict[str, Any] = {
            "productId": product.token if i % 2 else product.id,  # §4: either id works
            "customer": {"email": "buyer@example.com", "phone": phone},
        }
        if gateway is not None:
            body["gateway"] = gateway
        amount = product.amount if product.pricing != "free" else 0
        if product.pricing == "pwyw":
            amount += pwyw_extra
            body["amount"] = amount
        auth = self.auth[product.environment]
        if gateway == "paypal":  # §4 "Any other value is rejected"
            error = checkout(self.client, auth, 400, **body)["error"]
            assert "gateway" in error, error
        elif product.status != "published":  # §3 "Only a published product can be checked out"
            checkout(self.client, auth, 404, **body)
        elif amount < product.amount:  # §8 "pwyw checkout amount: at or above the minimum"
            error = checkout(self.client, auth, 400, **body)["error"]
            assert "amount" in error, error
        elif amount == 0:
            # spec-gaps "A fixed price of 0, or a pay-what-you-want amount of 0": a free
            # checkout whatever ``gateway`` says
            self.add_session(checkout(self.client, auth, **body), product.environment, "free", 0)
        else:
            result = checkout(self.client, auth, **body)
            kind = "push" if gateway else "link"
            session = self.add_session(result, product.environment, kind, amount)
            if kind == "push":
                self.model.send_prompt(session, "push", phone)

    @rule(
        environment=st.sampled_from(["production", "sandbox"]),
        amount=st.sampled_from([100, 150, 45678, 3_333_333, 6_000_000, 2_000_001, 99, "100", None]),
        description=st.sampled_from(["Donation"] * 8 + ["", " ", "x" * 121, None]),
        gateway=st.sampled_from([None, "cbe", "mpesa"]),
        phone=st.sampled_from([BUYER_PHONE, BUYER_PHONE, PUSH_PAYS, PUSH_FAILS]),
        metadata=st.sampled_from(
            [None] * 6 + [{"a": "1"}, {"a": {"b": 1}}, {f"k{n}": "v" for n in range(21)}]
        ),
    )
    def checkout_custom(
        self,
        environment: str,
        amount: object,
        description: str | None,
        gateway: str | None,
        phone: str,
        metadata: dict[str, Any] | None,
    ) -> None:
        body: dict[str, Any] = {"customer": {"email": "payer@example.com", "phone": phone}}
        for name, value in (
            ("amount", amount),
            ("description", description),
            ("gateway", gateway),
            ("metadata", metadata),
        ):
            if value is not None:
                body[name] = value
        valid = (
            description is not None
            and 1 <= len(description.strip()) <= 120
            and is_santim(amount)
            and amount >= MINIMUM_CUSTOM_AMOUNT  # type: ignore[operator]
            and (metadata is None or len(metadata) <= 20)
            and all(isinstance(v, str) for v in (metadata or {}).values())
        )
        if not valid:
            error = checkout(self.client, self.auth[environment], 400, **body)["error"]
            assert error in CUSTOM_AMOUNT_MESSAGES, (body, error)  # §7, to the letter
            return
        result = checkout(self.client, self.auth[environment], **body)
        session = self.add_session(result, environment, "push" if gateway else "link", amount)  # type: ignore[arg-type]
        if gateway:
            self.model.send_prompt(session, "push", phone)

    @initialize(
        earnings=st.sampled_from([0, 10_150, 50_000, 2_000_000, 12_000_000, 12_000_000]),
        link=st.sampled_from([None, "production", "sandbox"]),
    )
    def start(self, earnings: int, link: str | None) -> None:
        """Most examples start with earnings and an open payment link, so that the few steps
        of an example reach withdrawals past the balance (up to the cap) and link attempts."""
        if earnings:
            self.earn(earnings)
        if link is not None:
            self.checkout_custom(link, 45_678, "Donation", None, BUYER_PHONE, None)

    @rule(amount=st.sampled_from([10_000, 10_151, 2_000_000, 4_999_999, 7_000_003]))
    def earn(self, amount: int) -> None:
        """Production earnings: a custom-amount push the control plane approves at once."""
        earn(self.client, self.auth["production"], amount)
        assert self.client.last is not None  # earn's last request polls the session
        session_id = self.client.last.json["sessionId"]  # type: ignore[index]
        session = Session(session_id, "production", "push", amount, self.model.now)
        self.model.sessions[session.id] = session
        self.model.send_prompt(session, "push", BUYER_PHONE)
        self.model.decide(session, "approve")

    # -- payment-link attempts (spec-gaps "POST /pay/{payToken} request and response")
    @precondition(lambda self: any(s.kind == "link" for s in self.model.sessions.values()))
    @rule(
        i=st.integers(0, 99),
        phone=st.sampled_from([BUYER_PHONE, LINK_PAYS, LINK_FAILS, "12"]),
        gateway=st.sampled_from(GATEWAYS),
    )
    def pay_link(self, i: int, phone: str, gateway: str) -> None:
        session = self.pick_session(i, "link")
        body = {"gateway": gateway, "phone": phone, "email": "buyer@example.com"}
        response = self.send("POST", f"/pay/cs_{session.id}", body)
        answer = response.get_json()
        if not self.model.take_pay_attempt():
            assert response.status_code == 429, answer
        elif phone == "12":
            assert response.status_code == 400 and "phone" in answer["error"], answer
        elif session.status != "open":
            assert response.status_code == 409, (session, answer)
        elif session.prompt is not None:
            # §3 "refused for 150 seconds while a prompt is out"; spec-gaps "Status of the
            # 150 s refusal": Retry-After counts to the provider's decision when one is due
            assert response.status_code == 409, (session, answer)
            assert session.prompt.decide_at is not None
            assert response.headers["Retry-After"] == str(session.prompt.decide_at - self.model.now)
        else:
            assert response.status_code == 200, (session, answer)
            self.model.send_prompt(session, "link", phone)
            self.compare_status(session, answer)

    # -- the control plane (docs/control-plane.md)
    @precondition(lambda self: self.model.sessions)
    @rule(
        i=st.integers(0, 99),
        decision=st.sampled_from(["approve", *FAILURE_CODES, "session_expired"]),
    )
    def control_decide(self, i: int, decision: str) -> None:
        session = self.pick_session(i)
        path = f"/_sandbox/checkout/sessions/{session.id}"
        if decision == "approve":
            response = self.send("POST", f"{path}/approve", {})
        else:
            response = self.send("POST", f"{path}/fail", {"code": decision})
        if decision == "session_expired":  # only the clock expires a session
            assert response.status_code == 400, response.json
        elif session.status != "open":
            assert response.status_code == 409, (session, response.json)
        else:
            # spec-gaps "Approving a payment-link session nobody tried": a prompt is started
            assert response.status_code == 200, response.json
            session.order = session.order or "pending"
            self.model.decide(session, decision)
            self.compare_status(session, response.json)  # type: ignore[arg-type]

    @rule(outcome=st.sampled_from(PROVIDER_OUTCOMES), delay=st.sampled_from([5, 10, 60, 200]))
    def set_provider(self, outcome: str, delay: int) -> None:
        body = {"productionPushOutcome": outcome, "productionPushDelaySeconds": delay}
        assert self.send("PATCH", "/_sandbox/payments/provider", body).status_code == 200
        self.model.provider_outcome, self.model.provider_delay = outcome, delay

    @rule(seconds=st.sampled_from([1, 5, 10, 60, 149, 150, 300, 1799, 1800, 3600, DAY, 90_000]))
    def advance(self, seconds: int) -> None:
        response = self.send("POST", "/_sandbox/clock/advance", {"seconds": seconds})
        assert response.status_code == 200, response.json
        self.model.advance(seconds)

    @rule(rate=st.sampled_from([None, 0.05, 0.035, 0.1, 0]))
    def set_fee_rate(self, rate: float | None) -> None:
        """A custom fee rate (§8 "or the account's custom rate"); None goes back to 7%."""
        body = {"customFeeRate": rate}
        assert self.send("PATCH", f"/_sandbox/orgs/{self.live_org}", body).status_code == 200
        self.model.fee_rate = DEFAULT_FEE_RATE if rate is None else str(rate)

    @rule(can_cover=st.sampled_from([True, True, True, False]))
    def owner_wallet(self, can_cover: bool) -> None:
        path = f"/_sandbox/orgs/{self.live_org}/owner-wallet"
        assert self.send("PUT", path, {"canCover": can_cover}).status_code == 200
        self.model.owner_can_cover = can_cover

    # -- reading (§4 Poll session, Orders, Balance; §6 Events)
    @precondition(lambda self: self.model.sessions)
    @rule(i=st.integers(0, 99))
    def poll(self, i: int) -> None:
        session = self.pick_session(i)
        self.compare_status(session, status_of(self.client, session.id))

    @rule(
        environment=st.sampled_from(["production", "sandbox"]),
        status=st.sampled_from([None, "pending", "paid", "failed"]),
        limit=st.sampled_from([1, 3, 100]),
    )
    def list_orders(self, environment: str, status: str | None, limit: int) -> None:
        """Every page of GET /orders: one order per session (§8), newest first (§4)."""
        query = f"limit={limit}" + (f"&status={status}" if status else "")
        orders = self.every_page(f"/api/orders?{query}", environment, limit)
        seen = {o["checkoutSessionId"]: (o["status"], o["amount"]) for o in orders}
        assert len(seen) == len(orders), orders
        for order in orders:
            assert order["environment"] == environment, order
            assert (order["paidAt"] is not None) == (order["status"] == "paid"), order
        assert [o["createdAt"] for o in orders] == sorted(
            (o["createdAt"] for o in orders), reverse=True
        )
        expected = {
            s.id: (s.order, s.amount)
            for s in self.model.sessions.values()
            if s.environment == environment and s.order and status in (None, s.order)
        }
        assert seen == expected, (seen, expected)

    def every_page(self, path: str, environment: str, limit: int) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        page = 1
        while True:
            response = self.send("GET", f"{path}&page={page}", **self.auth[environment])
            assert response.status_code == 200, response.json
            answer: dict[str, Any] = response.json  # type: ignore[assignment]
            assert answer["page"] == page and answer["limit"] == limit
            assert len(answer["items"]) <= limit
            items += answer["items"]
            if page * limit >= answer["total"]:
                return items
            page += 1

    @rule()
    def read_balance(self) -> None:
        """§2 Balance; spec-gaps "Earnings". A sandbox organization is not eligible, 0."""
        live = balance_body(self.client, self.auth["production"])
        assert live == {
            "success": True,
            "eligible": True,
            "balanceMinor": self.model.balance(),
            "currency": "ETB",
        }
        test = balance_body(self.client, self.auth["sandbox"])
        assert test["eligible"] is False and test["balanceMinor"] == 0, test

    @rule()
    def check_events(self) -> None:
        """§6: ``order.created`` once per order, ``order.completed`` once per paid order,
        ``checkout.session.expired`` once per expired session, with the model's figures."""
        response = self.send("GET", "/_sandbox/events")
        by_kind: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for event in response.json["items"]:  # type: ignore[index]
            by_kind.setdefault((event["type"], event["data"]["sessionId"]), []).append(event)
        for s in self.model.sessions.values():
            created = by_kind.get(("order.created", s.id), [])
            completed = by_kind.get(("order.completed", s.id), [])
            expired = by_kind.get(("checkout.session.expired", s.id), [])
            assert len(created) == (1 if s.order else 0), (s, created)
            assert len(completed) == (1 if s.order == "paid" else 0), (s, completed)
            assert len(expired) == (1 if s.status == "expired" else 0), (s, expired)
            for event in created + completed:
                assert event["data"]["amount"] == s.amount, (s, event)
                assert event["environment"] == s.environment, (s, event)
            if expired:
                assert expired[0]["data"]["failure"]["code"] == s.failure, (s, expired)
            if created and completed:
                assert created[0]["created"] <= completed[0]["created"]

    # -- withdrawals (§2 Withdrawal; §4 Withdrawals; §8)
    @rule(
        amount=st.sampled_from(
            # 10_150 x 7% = 710.5 and 10_010 x 5% = 500.5 round the fee half up; 10_143 x 7%
            # is a fee of 710 whose tax, 106.5, rounds half up (spec-gaps "Rounding")
            [9999, 10_000, 10_150, 10_143, 10_010, 999_999, 1_000_000, 1_000_001, 2_500_000]
            + [9_999_999, 10_000_001, "10000", 12345.0]
            # relative to the model: all the balance, the room left under the daily cap, and
            # one santim more than each
            + ["balance", "balance+1", "room", "room", "room+1"]
        ),
        key=st.sampled_from([None, None, "k1", "k2", "k3", "k4", " bad"]),
        gateway=st.sampled_from([*GATEWAYS, *GATEWAYS, "visa"]),
        account=st.sampled_from(["0911223344", "251911223344", "0911223344", "12345"]),
    )
    def withdraw(self, amount: object, key: str | None, gateway: str, account: str) -> None:
        if isinstance(amount, str) and amount.startswith(("balance", "room")):
            amount = self.model.relative_amount(amount)
        bad_field = None
        if not (is_santim(amount) and amount >= MINIMUM_WITHDRAWAL):  # type: ignore[operator]
            bad_field = "amount"  # §4 "integer >=10000"; spec-gaps "Amount bounds"
        elif gateway not in GATEWAYS:
            bad_field = "gateway"
        elif account == "12345":  # spec-gaps "Phone formats of `account`"
            bad_field = "account"
        expected = self.model.withdrawal_status(amount, key, bad_field)
        fields = {"gateway": gateway, "account": account}
        result = withdraw(self.client, self.auth["production"], amount, key, expected, **fields)  # type: ignore[arg-type]
        if expected == 400 and bad_field is not None:
            assert bad_field in result["error"], result
        elif expected == 400 and key is not None and key != key.strip():
            assert "Idempotency-Key" in result["error"], result
        elif expected == 200:
            original = self.model.withdrawals[self.model.withdrawal_keys[key]]  # type: ignore[index]
            assert (result["_id"], result["status"]) == (original.id, original.status), result
            assert result["amount"] == original.amount, result
        elif expected == 429:
            self.check_cap_refusal(amount)  # type: ignore[arg-type]
        elif expected == 402:
            assert result == {"error": OWNER_WALLET_MESSAGE}, result
        elif expected == 201:
            self.check_payout(result, amount)  # type: ignore[arg-type]
            if key is not None:
                self.model.withdrawal_keys[key] = result["_id"]

    def check_cap_refusal(self, amount: int) -> None:
        """spec-gaps "Rolling 24-hour cap": ``Retry-After`` is when enough has left the window;
        none for an amount above the whole cap, which no wait lets through."""
        assert self.client.last is not None
        retry_after = self.client.last.headers.get("Retry-After")
        if amount > DAILY_CAP:
            assert retry_after is None
        else:
            assert retry_after == str(self.model.cap_retry_after(amount)), retry_after

    def check_payout(self, result: dict[str, Any], amount: int) -> None:
        fee, tax, net = fee_parts(amount, self.model.fee_rate)
        assert (result["feeAmount"], result["taxAmount"], result["netAmount"]) == (fee, tax, net)
        assert result["amount"] == amount and result["currency"] == "ETB", result
        assert result["account"] == "251911223344", result  # stored as 2519XXXXXXXX
        automatic = amount <= AUTOMATIC_PAYOUT
        status = "pending" if automatic else "reviewing"
        assert result["status"] == status, result
        next_step = self.model.now + PAYOUT_PENDING_SECONDS if automatic else None
        self.model.withdrawals[result["_id"]] = Withdrawal(
            result["_id"], amount, status, self.model.now, next_step
        )

    @precondition(lambda self: self.model.withdrawals)
    @rule(i=st.integers(0, 99), approve=st.booleans())
    def review(self, i: int, approve: bool) -> None:
        """Only a withdrawal in review may be approved or rejected (spec-gaps lifecycle)."""
        withdrawals = list(self.model.withdrawals.values())
        w = withdrawals[i % len(withdrawals)]
        decision = "approve" if approve else "reject"
        response = self.send("POST", f"/_sandbox/withdrawals/{w.id}/{decision}", {})
        if w.status != "reviewing":
            assert response.status_code == 409, (w, response.json)
            return
        assert response.status_code == 200, response.json
        if approve:
            w.status, w.next_step = "approved", self.model.now + PAYOUT_PENDING_SECONDS
        else:
            w.status = "rejected"  # the amount returns to the balance

    @rule(status=st.sampled_from([None, "pending", "reviewing", "approved", "rejected"]))
    def list_withdrawals(self, status: str | None) -> None:
        query = "limit=100" + (f"&status={status}" if status else "")
        items = self.every_page(f"/api/withdrawals?{query}", "production", 100)
        got = {w["_id"]: w["status"] for w in items}
        expected = {
            w.id: w.status for w in self.model.withdrawals.values() if status in (None, w.status)
        }
        assert got == expected, (got, expected)
        for w in items:  # §2 "Equals amount minus feeAmount minus taxAmount"
            assert w["netAmount"] == w["amount"] - w["feeAmount"] - w["taxAmount"], w

    # -- refusals without a valid token (§4, §5, §7)
    @rule(kind=st.sampled_from(["custom", "metadata", "unpublished", "bad_token", "no_token"]))
    def without_a_token(self, kind: str) -> None:
        if kind == "custom":  # §7 "productId is required": custom amounts need a token
            body = {"amount": 500, "description": "x"}
            assert checkout(self.client, None, 400, **body) == {"error": "productId is required"}
        elif kind == "bad_token":
            for path in ("/api/balance", "/api/orders", "/api/withdrawals"):
                bad = {"Authorization": "Bearer svc_live_AAAAAAAAAAAAAAAA"}
                assert self.send("GET", path, **bad).status_code == 401
        elif kind == "no_token":  # §7 403: no token and no dashboard session
            assert self.send("GET", "/api/balance").status_code == 403
        else:
            products = [
                p
                for p in self.model.products
                if (p.status == "published") == (kind == "metadata") and p.pricing == "fixed"
            ]
            if not products:
                return
            body = {
                "productId": products[0].token,
                "gateway": "cbe",
                "customer": {"email": "buyer@example.com", "phone": BUYER_PHONE},
            }
            if kind == "metadata":  # §4 metadata: "Token requests only"
                error = checkout(self.client, None, 400, metadata={"a": "b"}, **body)["error"]
                assert "metadata" in error, error
            else:  # §4: without a token only published products
                checkout(self.client, None, 404, **body)

    @invariant()
    def balance_is_never_negative(self) -> None:
        assert self.model.balance() >= 0

    def teardown(self) -> None:
        """Same seed, same requests: a fresh Sandbox answers each byte for byte the same."""
        fresh = app_client(new_sandbox(), checked=False)
        for n, exchange in enumerate(self.client.exchanges):
            response = fresh.open(*exchange.args, **copy.deepcopy(exchange.kwargs))
            assert (response.status_code, response.get_data()) == (
                exchange.status,
                exchange.body,
            ), ("the replay differs at request", n, exchange.args, exchange.kwargs)


MoneyFlow.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,  # one example runs tens of requests; its time says nothing
    derandomize=True,  # the same examples on every run and machine (CI reproducible)
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
TestMoneyFlow = MoneyFlow.TestCase
