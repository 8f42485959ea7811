"""Payments: the simulated mobile-money provider behind checkout sessions.

An *attempt* is one payment prompt on one buyer phone. The provider decides it:

* sandbox trigger phones decide at once (251900000001 pays, 251900000002 fails with
  ``payment_failed``; 0900000001 / 0900000002 are the same numbers in another format);
* any other sandbox phone waits for the simulator page or the control plane;
* a production prompt is decided by the configured default outcome after the configured
  delay, unless the control plane decides it first;
* a payment-link prompt that nobody answers times out after 150 seconds.

Decisions are announced to listeners (the checkout service settles the session).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import Conflict, NotFound, ProviderRefused, ValidationFailed, found
from svc_sandbox.core.lifecycle import Lifecycle, Transition
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, to_json
from svc_sandbox.core.validation import one_of

#: §7 session failure codes with the buyer-safe message the emulator shows for each.
FAILURE_MESSAGES: dict[str, str] = {
    "payment_rejected": "The payment provider declined the payment before a prompt reached "
    "your phone.",
    "payment_failed": "The payment failed (wrong PIN, canceled on the phone or low balance). "
    "Please try again.",
    "payment_canceled": "You canceled the payment.",
    "payment_timed_out": "The payment prompt was not answered in time.",
    "initiate_failed": "The payment could not be started.",
    "session_expired": "This checkout expired after 30 minutes without payment.",
}
FAILURE_CODES = tuple(FAILURE_MESSAGES)
APPROVE = "approve"
#: What a production prompt does by itself: approve, fail with a code, or wait ("none").
PUSH_OUTCOMES = (APPROVE, *FAILURE_CODES, "none")

PAYS_AT_ONCE = "251900000001"
FAILS_AT_ONCE = "251900000002"
PROMPT_TIMEOUT = timedelta(seconds=150)
DECIDE = "payments.decide"


class Channel(StrEnum):
    PUSH = "push"  # production direct push
    SIMULATOR = "simulator"  # sandbox checkout with a gateway: the simulator page
    LINK = "link"  # payment link attempt (POST /pay/{payToken})
    HOSTED = "hosted"  # the buyer confirms on the provider's hosted page (production)


class AttemptStatus(StrEnum):
    IN_FLIGHT = "in_flight"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


ATTEMPT_LIFECYCLE = Lifecycle(
    "payment attempt",
    [
        Transition(
            "in_flight",
            "succeeded",
            "provider approves (trigger phone, simulator, control plane, production default)",
        ),
        Transition("in_flight", "failed", "provider fails, prompt times out, session expires"),
    ],
)


@dataclass(slots=True)
class Failure:
    code: str
    message: str

    @classmethod
    def of(cls, code: str, message: str | None = None) -> Failure:
        return cls(code, message or FAILURE_MESSAGES.get(code, FAILURE_MESSAGES["payment_failed"]))

    def to_public(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(slots=True)
class PaymentAttempt:
    id: str
    session_id: str
    org_id: str
    environment: str
    channel: Channel
    gateway: str
    phone: str
    status: AttemptStatus
    created_at: datetime
    decided_at: datetime | None = None
    failure: Failure | None = None
    #: The provider's own plan for this prompt (production default, link timeout).
    decide_at: datetime | None = None
    decide_outcome: str | None = None

    @property
    def in_flight(self) -> bool:
        return self.status is AttemptStatus.IN_FLIGHT

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "sessionId": self.session_id,
            "channel": self.channel.value,
            "gateway": self.gateway,
            "phone": self.phone,
            "status": self.status.value,
            "createdAt": isoformat(self.created_at),
            "decidedAt": None if self.decided_at is None else isoformat(self.decided_at),
            "failure": None if self.failure is None else self.failure.to_public(),
        }


@dataclass
class ProviderConfig:
    """What the control plane can change about the provider at run time (exported)."""

    push_outcome: str = APPROVE
    push_delay_seconds: float = 10.0
    refuse_checkouts: int = 0
    refuse_message: str = "The payment provider refused to start the payment"
    initiate_failures: list[str] = field(default_factory=list)

    def to_public(self) -> dict[str, Any]:
        return {
            "productionPushOutcome": self.push_outcome,
            "productionPushDelaySeconds": self.push_delay_seconds,
            "refuseCheckouts": self.refuse_checkouts,
            "refuseMessage": self.refuse_message,
            "initiateFailures": list(self.initiate_failures),
        }


Listener = Callable[[PaymentAttempt], None]
SessionStarter = Callable[[str], PaymentAttempt]
SessionSettler = Callable[[str], None]


class PaymentService(Service):
    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        self.config = ProviderConfig(
            push_outcome=ctx.settings.production_push_outcome,
            push_delay_seconds=ctx.settings.production_push_delay_seconds,
        )
        self.attempts: dict[str, PaymentAttempt] = {}
        #: Derived index: session id -> its attempts, oldest first (a poll reads the one in
        #: flight without scanning every attempt; rebuilt on import).
        self._by_session: dict[str, list[PaymentAttempt]] = {}
        self._listeners: list[Listener] = []
        self._start_for_session: SessionStarter | None = None
        self._settle_session: SessionSettler | None = None
        self.scheduler.register(DECIDE, self._run_decision)

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def bind_sessions(self, settle: SessionSettler, starter: SessionStarter) -> None:
        """The checkout service's hooks: ``settle`` brings a session up to date before a
        decision; ``starter`` starts a prompt on a session that has none out."""
        self._settle_session = settle
        self._start_for_session = starter

    # --- the provider ----------------------------------------------------------------------

    @locked
    def refuse_checkout_if_faulted(self) -> None:
        """Fault: the provider refuses the next N paid checkouts (502, nothing created)."""
        if self.config.refuse_checkouts > 0:
            self.config.refuse_checkouts -= 1
            raise ProviderRefused(self.config.refuse_message)

    @locked
    def start(
        self,
        session_id: str,
        org_id: str,
        environment: str,
        channel: Channel,
        gateway: str,
        phone: str,
        *,
        plan: bool = True,
    ) -> PaymentAttempt:
        """Sends a prompt; the provider may decide at once (faults, trigger phones).
        ``plan=False`` is a prompt the caller decides itself right away (control plane)."""
        now = self.clock.now()
        attempt = PaymentAttempt(
            id=self.ids.object_id(),
            session_id=session_id,
            org_id=org_id,
            environment=environment,
            channel=channel,
            gateway=gateway,
            phone=phone,
            status=AttemptStatus.IN_FLIGHT,
            created_at=now,
        )
        self.attempts[attempt.id] = attempt
        self._by_session.setdefault(session_id, []).append(attempt)
        if not plan:
            return attempt
        if self.config.initiate_failures:
            reason = self.config.initiate_failures.pop(0)
            return self._decide(attempt, Failure.of("initiate_failed", reason))
        if channel is Channel.HOSTED:
            # The buyer confirmed on the provider's own page: the provider's configured
            # outcome applies at once ("none" leaves the prompt to the control plane).
            if self.config.push_outcome == "none":
                return attempt
            return self._decide(attempt, outcome_failure(self.config.push_outcome))
        if environment == "sandbox" and phone == PAYS_AT_ONCE:
            return self._decide(attempt, None)
        if environment == "sandbox" and phone == FAILS_AT_ONCE:
            return self._decide(attempt, Failure.of("payment_failed"))
        plans: list[tuple[datetime, str]] = []
        if environment == "production" and self.config.push_outcome != "none":
            delay = timedelta(seconds=self.config.push_delay_seconds)
            plans.append((now + delay, self.config.push_outcome))
        if channel is Channel.LINK:
            plans.append((now + PROMPT_TIMEOUT, "payment_timed_out"))
        if plans:
            attempt.decide_at, attempt.decide_outcome = min(plans, key=lambda p: p[0])
            self.scheduler.schedule(attempt.decide_at, DECIDE, {"attemptId": attempt.id})
        return attempt

    def _run_decision(self, payload: dict[str, Any]) -> None:
        attempt = self.attempts.get(payload["attemptId"])
        if attempt is not None:
            self.run_planned(attempt)

    @locked
    def run_planned(self, attempt: PaymentAttempt) -> None:
        """Applies the provider's planned decision once it is due (scheduler or poll)."""
        due, outcome = attempt.decide_at, attempt.decide_outcome
        if attempt.in_flight and due is not None and outcome and due <= self.clock.now():
            self._decide(attempt, outcome_failure(outcome))

    def _decide(self, attempt: PaymentAttempt, failure: Failure | None) -> PaymentAttempt:
        self._record_decision(attempt, failure)
        for listener in self._listeners:
            listener(attempt)
        return attempt

    def _record_decision(self, attempt: PaymentAttempt, failure: Failure | None) -> None:
        target = AttemptStatus.SUCCEEDED if failure is None else AttemptStatus.FAILED
        ATTEMPT_LIFECYCLE.move(attempt, target)
        attempt.failure = failure
        attempt.decided_at = self.clock.now()

    @locked
    def close(self, attempt: PaymentAttempt, failure: Failure) -> None:
        """Ends a prompt without announcing it (its session is ending for another reason)."""
        if attempt.in_flight:
            self._record_decision(attempt, failure)

    # --- what tests and the simulator page do ----------------------------------------------

    @locked
    def approve(self, ref: str) -> PaymentAttempt:
        """Approves the prompt ``ref`` (an attempt id) or the one out on session ``ref``."""
        return self._decide(self._target(ref), None)

    @locked
    def fail(self, ref: str, code: str, message: str | None = None) -> PaymentAttempt:
        one_of(code, FAILURE_CODES, "code")
        return self._decide(self._target(ref), Failure.of(code, message))

    def _target(self, ref: str) -> PaymentAttempt:
        attempt = self.attempts.get(ref)
        session_id = attempt.session_id if attempt is not None else ref
        if self._settle_session is not None:
            self._settle_session(session_id)  # an overdue expiry or decision goes first
        if attempt is not None:
            if not attempt.in_flight:
                raise Conflict(f"attempt {ref} is already {attempt.status.value}")
            return attempt
        found = self.in_flight_of(ref)
        if found is not None:
            return found
        if self._start_for_session is None:
            raise NotFound(f"no session or attempt {ref}")
        return self._start_for_session(ref)

    @locked
    def in_flight_of(self, session_id: str) -> PaymentAttempt | None:
        return next((a for a in self._by_session.get(session_id, ()) if a.in_flight), None)

    @locked
    def attempts_of(self, session_id: str) -> list[PaymentAttempt]:
        return list(self._by_session.get(session_id, ()))

    @locked
    def get(self, attempt_id: str) -> PaymentAttempt:
        return found(self.attempts.get(attempt_id), f"attempt {attempt_id} not found")

    # --- configuration and faults ----------------------------------------------------------

    @locked
    def configure(
        self, push_outcome: str | None = None, push_delay_seconds: float | None = None
    ) -> ProviderConfig:
        if push_outcome is not None:
            one_of(push_outcome, PUSH_OUTCOMES, "productionPushOutcome")
            self.config.push_outcome = push_outcome
        if push_delay_seconds is not None:
            if push_delay_seconds < 0:
                raise ValidationFailed("productionPushDelaySeconds must not be negative")
            self.config.push_delay_seconds = push_delay_seconds
        return self.config

    @locked
    def add_faults(
        self,
        refuse_checkouts: int = 0,
        refuse_message: str | None = None,
        initiate_failures: list[str] | None = None,
    ) -> ProviderConfig:
        self.config.refuse_checkouts += refuse_checkouts
        if refuse_message is not None:
            self.config.refuse_message = refuse_message
        self.config.initiate_failures.extend(initiate_failures or [])
        return self.config

    @locked
    def clear_faults(self) -> ProviderConfig:
        self.config.refuse_checkouts = 0
        self.config.initiate_failures = []
        return self.config

    def export(self) -> dict[str, Any]:
        return {
            "config": to_json(self.config),
            "attempts": [to_json(a) for a in self.attempts.values()],
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.config = from_json(ProviderConfig, data["config"])
        self.attempts = {a["id"]: from_json(PaymentAttempt, a) for a in data["attempts"]}
        self._by_session = {}
        for attempt in self.attempts.values():
            self._by_session.setdefault(attempt.session_id, []).append(attempt)


def outcome_failure(outcome: str) -> Failure | None:
    """``approve`` is a success (None); anything else is the failure with that code."""
    return None if outcome == APPROVE else Failure.of(outcome)
