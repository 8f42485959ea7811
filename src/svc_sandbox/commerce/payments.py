"""Payments: the simulated mobile-money provider behind checkout sessions.

An *attempt* is one payment prompt on one buyer phone. The provider decides it:

* trigger phones (``commerce/triggers.py``) decide as registered: the spec's decide at once
  in the sandbox (251900000001 pays, 251900000002 fails with ``payment_failed``; 0900000001 /
  0900000002 are the same numbers in another format), custom ones with their outcome, delay
  and notification fault;
* any other sandbox phone waits for the simulator page or the control plane;
* a production prompt is decided by the configured default outcome after the configured
  delay, unless the control plane decides it first;
* a payment-link prompt that nobody answers times out after 150 seconds.

The provider's *decision* and its *notice* to the emulator are apart: the provider records
its decision on the prompt, then notifies the emulator (at once, unless a notification fault
says late, lost, duplicated or out of order: ``commerce/notices.py``). The emulator learns a
decision when the notice arrives or when it checks the provider (a status poll, throttled per
session; a new attempt on the payment link; the expiry), whichever comes first; the other then
does nothing. What the emulator learns is announced to listeners (the checkout service
settles the session). Every prompt, decision, notice and check is a step of the session's
provider timeline.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from svc_sandbox.commerce.failures import FAILURE_MESSAGES, SESSION_EXPIRED
from svc_sandbox.commerce.notices import (
    DUPLICATE,
    LATE,
    LOST,
    OUT_OF_ORDER,
    NoticeFault,
    NotificationFaults,
)
from svc_sandbox.core.clock import isoformat, seconds_delay
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import Conflict, NotFound, ProviderRefused, ValidationFailed, found
from svc_sandbox.core.lifecycle import Lifecycle, Transition
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, snapshot

if TYPE_CHECKING:
    from svc_sandbox.commerce.triggers import Trigger, TriggerService

FAILURE_CODES = tuple(FAILURE_MESSAGES)
#: What the provider may decide a prompt failed with: every §7 code but ``session_expired``.
#: The one list behind the control plane's fail routes, productionPushOutcome (and its
#: setting), triggers (and the triggers file), the simulator page and the contract.
PROVIDER_FAILURE_CODES = tuple(code for code in FAILURE_CODES if code != SESSION_EXPIRED)
APPROVE = "approve"
#: What a production prompt does by itself: approve, fail with a code, or wait ("none").
PUSH_OUTCOMES = (APPROVE, *PROVIDER_FAILURE_CODES, "none")
#: What a prompt's planned decision may be (``_plans``): a trigger's or the push outcome, or
#: a payment link's timeout; a new failure code as well.
PLANNED_OUTCOMES = (APPROVE, *PROVIDER_FAILURE_CODES)

PAYS_AT_ONCE = "251900000001"
FAILS_AT_ONCE = "251900000002"
PROMPT_TIMEOUT = timedelta(seconds=150)
#: The longest a production push may wait for its default outcome (one day; a session lasts
#: 30 minutes, so anything longer behaves as "none").
MAX_PUSH_DELAY_SECONDS = 86400
#: Attempts the control plane may make fail at start, one reason each (as refuseCheckouts).
MAX_INITIATE_FAILURES = 10_000
DECIDE = "payments.decide"
NOTIFY = "payments.notify"


#: A failure code §7 does not list yet ("New codes may be added; clients treat unknown codes
#: like payment_failed"), so a client's handling of a new code can be tried end to end
#: (DESIGN: "fail ... with any failure code"). The shape of the listed ones, words joined by
#: "_" (``payment_blocked_by_bank``), up to 64 characters: a one-word slip (``maybe``,
#: ``approved``) is still refused.
NEW_FAILURE_CODE = re.compile(r"(?=.{1,64}\Z)[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def is_failure_code(value: str, known: tuple[str, ...]) -> bool:
    """``value`` is one of ``known`` or a new failure code (``NEW_FAILURE_CODE``)."""
    return value in known or NEW_FAILURE_CODE.fullmatch(value) is not None


def provider_decision(value: str, allowed: tuple[str, ...], field: str) -> str:
    """``value`` if it is in ``allowed`` (``PROVIDER_FAILURE_CODES`` or ``PUSH_OUTCOMES``) or
    a new failure code (``NEW_FAILURE_CODE``); otherwise a 400 naming ``field``, saying why
    for ``session_expired``."""
    if value == SESSION_EXPIRED:
        raise ValidationFailed(
            f"{field} must not be {SESSION_EXPIRED}: a session expires by itself after 30 "
            f"minutes without payment (advance the clock); one of {', '.join(allowed)}"
        )
    if is_failure_code(value, allowed):
        return value
    raise ValidationFailed(
        f"{field} must be one of {', '.join(allowed)}, or a new failure code: lowercase words "
        "joined by _ (such as payment_blocked_by_bank), at most 64 characters"
    )


class DecidePayload(TypedDict):
    """What a payments.decide (or payments.notify) scheduler entry carries."""

    attemptId: str


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


@dataclass(frozen=True, slots=True)
class ProviderStep:
    """One line of a session's provider timeline (never changed once written: state
    snapshots share it, core/records.py).

    ``kind`` is ``prompt``, ``decision``, ``notification`` or ``check``; ``status`` says what
    happened (notification: sent, delayed, lost, duplicated, held, delivered, ignored; check:
    found, pending; prompt: sent; decision: recorded)."""

    seq: int
    at: datetime
    kind: str
    status: str
    outcome: str | None = None
    due_at: datetime | None = None
    by: str | None = None

    def to_public(self, attempt_id: str) -> dict[str, Any]:
        return {
            "at": isoformat(self.at),
            "attemptId": attempt_id,
            "kind": self.kind,
            "status": self.status,
            "outcome": self.outcome,
            "dueAt": None if self.due_at is None else isoformat(self.due_at),
            "by": self.by,
        }


@dataclass
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
    #: The provider's decision, recorded before the emulator learns it (``status`` and
    #: ``decided_at`` are what the emulator knows).
    provider_decided_at: datetime | None = None
    provider_failure: Failure | None = None
    #: The notification fault this prompt's notice meets (a custom trigger's, else a rule's).
    notice_fault: NoticeFault | None = None
    #: An out-of-order failure notice waiting for the session's next notice.
    notice_held: bool = False
    steps: list[ProviderStep] = field(default_factory=list)

    @property
    def in_flight(self) -> bool:
        return self.status is AttemptStatus.IN_FLIGHT

    @property
    def provider_decided(self) -> bool:
        return self.provider_decided_at is not None

    @property
    def provider_outcome(self) -> str | None:
        if self.provider_decided_at is None:
            return None
        return APPROVE if self.provider_failure is None else self.provider_failure.code

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
            "provider": None
            if self.provider_decided_at is None
            else {
                "outcome": self.provider_outcome,
                "decidedAt": isoformat(self.provider_decided_at),
            },
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
    def __init__(
        self, ctx: ServiceContext, triggers: TriggerService, notice_faults: NotificationFaults
    ) -> None:
        super().__init__(ctx)
        self.triggers = triggers
        self.notice_faults = notice_faults
        self.reset_config()
        self.attempts: dict[str, PaymentAttempt] = {}
        #: Derived index: session id -> its attempts, oldest first (a poll reads the one in
        #: flight without scanning every attempt; rebuilt on import).
        self._by_session: dict[str, list[PaymentAttempt]] = {}
        self._listeners: list[Listener] = []
        self._start_for_session: SessionStarter | None = None
        self._settle_session: SessionSettler | None = None
        #: Orders the steps of every timeline (derived on import from the steps).
        self._step_seq = 0
        self.scheduler.register(DECIDE, self._run_decision, DecidePayload)
        self.scheduler.register(NOTIFY, self._notice_arrives, DecidePayload)

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
        # The plan is worked out before anything is stored: if it fails, nothing is left.
        trigger = self.triggers.find(environment, phone) if plan else None
        plans = self._plans(now, environment, channel, trigger) if plan else []
        attempt = PaymentAttempt(
            id=self.ids.object_id(self.attempts),
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
        self._step(attempt, "prompt", "sent")
        if not plan:
            return attempt
        if self.config.initiate_failures:
            reason = self.config.initiate_failures.pop(0)
            return self._decide(attempt, Failure.of("initiate_failed", reason))
        if trigger is not None:
            attempt.notice_fault = trigger.notification
            if trigger.outcome != "wait" and trigger.decision_delay_seconds == 0:
                return self._decide(attempt, outcome_failure(trigger.plan_outcome))
        elif channel is Channel.HOSTED:
            # The buyer confirmed on the provider's own page: the provider's configured
            # outcome applies at once ("none" leaves the prompt to the control plane).
            if self.config.push_outcome == "none":
                return attempt
            return self._decide(attempt, outcome_failure(self.config.push_outcome))
        if plans:
            attempt.decide_at, attempt.decide_outcome = min(plans, key=lambda p: p[0])
            self.scheduler.schedule(attempt.decide_at, DECIDE, {"attemptId": attempt.id})
        return attempt

    def _plans(
        self, now: datetime, environment: str, channel: Channel, trigger: Trigger | None
    ) -> list[tuple[datetime, str]]:
        """When and how the provider would decide a new prompt by itself (none: it waits):
        a trigger's delayed outcome, else the production default; a link prompt's timeout."""
        plans: list[tuple[datetime, str]] = []
        if trigger is not None:
            if trigger.outcome != "wait" and trigger.decision_delay_seconds > 0:
                delay = seconds_delay(trigger.decision_delay_seconds)
                plans.append((now + delay, trigger.plan_outcome))
        elif (
            environment == "production"
            and channel is not Channel.HOSTED
            and self.config.push_outcome != "none"
        ):
            delay = seconds_delay(self.config.push_delay_seconds)
            plans.append((now + delay, self.config.push_outcome))
        if channel is Channel.LINK:
            plans.append((now + PROMPT_TIMEOUT, "payment_timed_out"))
        return plans

    @locked
    def clock_set_back(self, instant: datetime) -> None:
        """The clock was set back to ``instant``: a prompt still out that was sent after it
        counts as sent at it (as a rate-limit hit "in the future" counts as made now), and
        its planned decision moves back as much. So a payment link's prompt times out at most
        ``PROMPT_TIMEOUT`` after the set back, and the link's refusal of a new attempt lasts
        one window, never the time the clock went back (docs/spec-gaps.md)."""
        for attempt in self.attempts.values():
            if not attempt.in_flight or attempt.provider_decided or attempt.created_at <= instant:
                continue
            early = attempt.created_at - instant
            attempt.created_at = instant
            if attempt.decide_at is not None:
                attempt.decide_at -= early
                self.scheduler.schedule(attempt.decide_at, DECIDE, {"attemptId": attempt.id})
                # (the entry at the old time finds the prompt decided then: it does nothing)

    def _run_decision(self, payload: dict[str, Any]) -> None:
        attempt = self.attempts.get(payload["attemptId"])
        if attempt is not None:
            self.run_planned(attempt)

    @locked
    def run_planned(self, attempt: PaymentAttempt) -> None:
        """Makes the provider's planned decision once it is due (scheduler or poll)."""
        due, outcome = attempt.decide_at, attempt.decide_outcome
        if (
            attempt.in_flight
            and not attempt.provider_decided
            and due is not None
            and outcome
            and due <= self.clock.now()
        ):
            self._decide(attempt, outcome_failure(outcome))

    def _decide(self, attempt: PaymentAttempt, failure: Failure | None) -> PaymentAttempt:
        """The provider decides: the decision is recorded, then the notice goes out."""
        attempt.provider_decided_at = self.clock.now()
        attempt.provider_failure = failure
        self._step(attempt, "decision", "recorded", outcome=attempt.provider_outcome)
        self._notify(attempt)
        return attempt

    # --- notices: how the emulator learns a decision ---------------------------------------

    def _notify(self, attempt: PaymentAttempt) -> None:
        fault = attempt.notice_fault or self.notice_faults.take(attempt.org_id, attempt.session_id)
        attempt.notice_fault = fault
        now = self.clock.now()
        kind = None if fault is None else fault.kind
        if kind == OUT_OF_ORDER and attempt.provider_failure is None:
            kind = None  # only a failure notice is overtaken by the next one
        if kind == LOST:
            self._step(attempt, "notification", "lost")
        elif kind == LATE:
            due = now + seconds_delay(fault.delay_seconds if fault else 0)
            self._step(attempt, "notification", "delayed", due_at=due)
            self.scheduler.schedule(due, NOTIFY, {"attemptId": attempt.id})
        elif kind == OUT_OF_ORDER:
            attempt.notice_held = True
            self._step(attempt, "notification", "held")
        else:
            self._step(attempt, "notification", "sent")
            self._learn(attempt)
            if kind == DUPLICATE:
                due = now + seconds_delay(fault.delay_seconds if fault else 0)
                self._step(attempt, "notification", "duplicated", due_at=due)
                self.scheduler.schedule(due, NOTIFY, {"attemptId": attempt.id})
            self._release_held(attempt)

    def _notice_arrives(self, payload: dict[str, Any]) -> None:
        attempt = self.attempts.get(payload["attemptId"])
        if attempt is not None:
            self._deliver(attempt)

    @locked
    def _deliver(self, attempt: PaymentAttempt) -> None:
        """A late, duplicated or held notice arrives: news to the emulator, or ignored."""
        if attempt.in_flight and attempt.provider_decided:
            self._step(attempt, "notification", "delivered", outcome=attempt.provider_outcome)
            self._learn(attempt)
            self._release_held(attempt)
        else:
            self._step(attempt, "notification", "ignored", outcome=attempt.provider_outcome)

    def _release_held(self, after: PaymentAttempt) -> None:
        """Held (out-of-order) notices of the session arrive after this one."""
        for other in self.attempts_of(after.session_id):
            if other.notice_held and other is not after:
                other.notice_held = False
                self._deliver(other)

    def _learn(self, attempt: PaymentAttempt) -> None:
        """The emulator learns the provider's decision (once) and tells its listeners."""
        if not attempt.in_flight or not attempt.provider_decided:
            return
        failure = attempt.provider_failure
        ATTEMPT_LIFECYCLE.move(
            attempt, AttemptStatus.SUCCEEDED if failure is None else AttemptStatus.FAILED
        )
        attempt.failure = failure
        attempt.decided_at = self.clock.now()
        for listener in self._listeners:
            listener(attempt)

    @locked
    def check(self, session_id: str, by: str) -> None:
        """The emulator asks the provider about the session's prompt (``by``: poll, attempt,
        expiry); a decision whose notice has not arrived is learned now."""
        attempt = self.in_flight_of(session_id)
        if attempt is None:
            return
        if not attempt.provider_decided:
            self._step(attempt, "check", "pending", by=by)
            return
        self._step(attempt, "check", "found", outcome=attempt.provider_outcome, by=by)
        self._learn(attempt)

    def _step(self, attempt: PaymentAttempt, kind: str, status: str, **extra: Any) -> None:
        self._step_seq += 1
        attempt.steps.append(ProviderStep(self._step_seq, self.clock.now(), kind, status, **extra))

    @locked
    def timeline_of(self, session_id: str) -> list[dict[str, Any]]:
        """The session's provider timeline, in order: every prompt, decision, notice, check."""
        steps = [(step, a.id) for a in self.attempts_of(session_id) for step in a.steps]
        return [step.to_public(attempt_id) for step, attempt_id in sorted(steps, key=_by_seq)]

    @locked
    def close(self, attempt: PaymentAttempt, failure: Failure) -> None:
        """Ends a prompt without announcing it (its session is ending for another reason)."""
        if attempt.in_flight:
            if not attempt.provider_decided:
                attempt.provider_decided_at = self.clock.now()
                attempt.provider_failure = failure
                self._step(attempt, "decision", "recorded", outcome=failure.code)
            ATTEMPT_LIFECYCLE.move(attempt, AttemptStatus.FAILED)
            attempt.failure = failure
            attempt.decided_at = self.clock.now()

    # --- what tests and the simulator page do ----------------------------------------------

    @locked
    def approve(self, ref: str) -> PaymentAttempt:
        """Approves the prompt ``ref`` (an attempt id) or the one out on session ``ref``."""
        return self._decide(self._target(ref), None)

    @locked
    def fail(self, ref: str, code: str, message: str | None = None) -> PaymentAttempt:
        provider_decision(code, PROVIDER_FAILURE_CODES, "code")
        return self._decide(self._target(ref), Failure.of(code, message))

    def _target(self, ref: str) -> PaymentAttempt:
        attempt = self.attempts.get(ref)
        session_id = attempt.session_id if attempt is not None else ref
        if self._settle_session is not None:
            self._settle_session(session_id)  # an overdue expiry or decision goes first
        if attempt is not None:
            if not attempt.in_flight:
                raise Conflict(f"attempt {ref} is already {attempt.status.value}")
            return _undecided(attempt)
        found = self.in_flight_of(ref)
        if found is not None:
            return _undecided(found)
        if self._start_for_session is None:
            raise NotFound(f"no session or attempt {ref}")
        return self._start_for_session(ref)

    @locked
    def waits_for_simulator(self, attempt: PaymentAttempt) -> bool:
        """A sandbox prompt that only the simulator page (or the control plane) will decide:
        still out, not decided by the provider, and its phone no trigger that decides by
        itself (§8: "any other number opens the simulator page")."""
        if attempt.environment != "sandbox" or not attempt.in_flight or attempt.provider_decided:
            return False
        trigger = self.triggers.find(attempt.environment, attempt.phone)
        return trigger is None or not trigger.decides_itself

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
        # Every check before any change: a refused PATCH changes nothing.
        if push_outcome is not None:
            provider_decision(push_outcome, PUSH_OUTCOMES, "productionPushOutcome")
        if push_delay_seconds is not None and not (
            0 <= push_delay_seconds <= MAX_PUSH_DELAY_SECONDS
        ):  # also refuses NaN and infinities
            raise ValidationFailed(
                f"productionPushDelaySeconds must be between 0 and {MAX_PUSH_DELAY_SECONDS}"
            )
        if push_outcome is not None:
            self.config.push_outcome = push_outcome
        if push_delay_seconds is not None:
            self.config.push_delay_seconds = push_delay_seconds
        return self.config

    @locked
    def set_faults(
        self,
        refuse_checkouts: int | None = None,
        refuse_message: str | None = None,
        initiate_failures: list[str] | None = None,
    ) -> ProviderConfig:
        """Set each fault that is named (None: leave it as it is), as a test tool's stubs are
        set: ``refuse_checkouts=0`` and ``initiate_failures=[]`` clear theirs."""
        if refuse_checkouts is not None:
            self.config.refuse_checkouts = refuse_checkouts
        if refuse_message is not None:
            self.config.refuse_message = refuse_message
        if initiate_failures is not None:
            self.config.initiate_failures = list(initiate_failures)
        return self.config

    @locked
    def reset_config(self) -> None:
        """The provider as the settings start it: no fault, the serve flags' push outcome."""
        self.config = ProviderConfig(
            push_outcome=self.settings.production_push_outcome,
            push_delay_seconds=self.settings.production_push_delay_seconds,
        )

    @locked
    def clear_faults(self) -> ProviderConfig:
        """No fault pending and the default refusal message."""
        default = ProviderConfig()
        self.config.refuse_checkouts = default.refuse_checkouts
        self.config.refuse_message = default.refuse_message
        self.config.initiate_failures = default.initiate_failures
        return self.config

    def export(self) -> dict[str, Any]:
        return {
            "config": snapshot(self.config),
            "attempts": [snapshot(a) for a in self.attempts.values()],
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.config = from_json(ProviderConfig, data["config"])
        self.attempts = {a["id"]: from_json(PaymentAttempt, a) for a in data["attempts"]}
        self._by_session = {}
        for attempt in self.attempts.values():
            self._by_session.setdefault(attempt.session_id, []).append(attempt)
        self._step_seq = max(
            (step.seq for a in self.attempts.values() for step in a.steps), default=0
        )


def _undecided(attempt: PaymentAttempt) -> PaymentAttempt:
    """A prompt the provider has not decided yet (one it decided waits for its notice)."""
    if attempt.provider_decided:
        raise Conflict(
            f"the provider already decided attempt {attempt.id} ({attempt.provider_outcome}); "
            "its notice has not arrived: poll the session to learn it"
        )
    return attempt


def _by_seq(item: tuple[ProviderStep, str]) -> int:
    return item[0].seq


def outcome_failure(outcome: str) -> Failure | None:
    """``approve`` is a success (None); anything else is the failure with that code."""
    return None if outcome == APPROVE else Failure.of(outcome)
