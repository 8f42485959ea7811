"""The trigger registry: every buyer phone the simulated provider treats specially.

The spec's own trigger values (§8) are fixed here: in the sandbox, 251900000001 pays at once
and 251900000002 fails at once with ``payment_failed``, on every page (the payment-link page's
0900000001 / 0900000002 are the same numbers in another spelling); any other sandbox phone
waits for the simulator. Teams add their own magic numbers (custom triggers) through the
control plane or ``serve --triggers FILE``: a phone mapped to an outcome, a decision delay and
a notification fault. A custom trigger may not reuse one of the spec's phones.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from svc_sandbox.commerce.checkout_input import PHONE_FORMATS, normalize_phone
from svc_sandbox.commerce.notices import NoticeFault, check_delay
from svc_sandbox.commerce.payments import (
    APPROVE,
    FAILS_AT_ONCE,
    PAYS_AT_ONCE,
    PROVIDER_FAILURE_CODES,
    provider_decision,
)
from svc_sandbox.core import json_input, yaml_input
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import NotFound, ValidationFailed
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, to_json
from svc_sandbox.core.validation import one_of, unknown_field

FAIL = "fail"
WAIT = "wait"
OUTCOMES = (APPROVE, FAIL, WAIT)
ENVIRONMENTS = ("sandbox", "production")
#: Longest decision delay of a custom trigger: a session lives 30 minutes, a day is plenty.
MAX_DECISION_DELAY_SECONDS = 86400.0

#: Every page of a sandbox checkout with a prompt: the simulator and the payment link.
SANDBOX_PAGES = ("simulator", "payment_link")


@dataclass
class Trigger:
    """One phone the provider treats specially, in one environment."""

    phone: str
    environment: str
    outcome: str  # approve, fail, wait
    failure_code: str | None = None
    decision_delay_seconds: float = 0.0
    notification: NoticeFault | None = None
    source: str = "custom"  # spec or custom
    description: str = ""

    @property
    def decides_itself(self) -> bool:
        """The provider decides a prompt to this phone (at once or after the delay); a
        ``wait`` trigger leaves it to the simulator or the control plane."""
        return self.outcome != WAIT

    @property
    def plan_outcome(self) -> str:
        """What the provider decides: ``approve`` or the failure code."""
        return APPROVE if self.outcome == APPROVE else self.failure_code or "payment_failed"

    def to_public(self) -> dict[str, Any]:
        return {
            "phone": self.phone,
            "spellings": spellings(self.phone) if self.phone.isdigit() else [],
            "environment": self.environment,
            "pages": list(SANDBOX_PAGES) if self.environment == "sandbox" else ["direct_push"],
            "outcome": self.outcome,
            "failureCode": self.failure_code,
            "decisionDelaySeconds": self.decision_delay_seconds,
            "notification": None if self.notification is None else self.notification.to_public(),
            "source": self.source,
            "description": self.description,
        }


def spellings(phone: str) -> list[str]:
    """The three spellings of §2 of a normalized ``2519XXXXXXXX`` phone."""
    rest = phone[4:]
    return [phone, "09" + rest, "9" + rest]


#: The spec's trigger values (§8), in the order the spec names them.
SPEC_TRIGGERS: tuple[Trigger, ...] = (
    Trigger(
        PAYS_AT_ONCE,
        "sandbox",
        APPROVE,
        source="spec",
        description="Pays instantly (§8; 0900000001 on the payment-link page).",
    ),
    Trigger(
        FAILS_AT_ONCE,
        "sandbox",
        FAIL,
        "payment_failed",
        source="spec",
        description="Fails instantly with payment_failed (§8; 0900000002 on the payment-link "
        "page): a push session ends, a payment link stays open for a retry.",
    ),
)
#: What every other phone does, per environment (listed, never matched as a phone).
OTHER_PHONES: tuple[dict[str, Any], ...] = (
    {
        "phone": "*",
        "environment": "sandbox",
        "pages": list(SANDBOX_PAGES),
        "outcome": WAIT,
        "source": "spec",
        "description": "Any other number waits for the simulator page's approve and fail "
        "buttons (or the control plane); a payment-link prompt times out after 150 s.",
    },
    {
        "phone": "*",
        "environment": "production",
        "pages": ["direct_push", "provider_page"],
        "outcome": "productionPushOutcome",
        "source": "emulator",
        "description": "No trigger values in production: the provider's default outcome "
        "(GET /_sandbox/payments/provider) decides after productionPushDelaySeconds.",
    },
)


def parse_trigger(raw: Any, where: str = "") -> Trigger:
    """A custom trigger from its JSON shape; 400 naming the field (``where`` prefixes it)."""
    if not isinstance(raw, dict):
        raise ValidationFailed(f"{where or 'body'} must be an object")
    known = {"phone", "environment", "outcome", "failureCode", "decisionDelaySeconds"}
    known |= {"notification", "description"}
    for name in raw:
        if name not in known:
            raise ValidationFailed(unknown_field(name, where))
    phone_raw = raw.get("phone")
    if not isinstance(phone_raw, str):
        raise ValidationFailed(f"{where}phone is required: a string ({PHONE_FORMATS})")
    try:
        phone = normalize_phone(phone_raw)
    except ValueError:
        raise ValidationFailed(f"{where}phone must be {PHONE_FORMATS}") from None
    environment = raw.get("environment", "sandbox")
    if not isinstance(environment, str):
        raise ValidationFailed(f"{where}environment must be one of {', '.join(ENVIRONMENTS)}")
    one_of(environment, ENVIRONMENTS, f"{where}environment")
    spec = next((t for t in SPEC_TRIGGERS if t.phone == phone), None)
    if spec is not None:
        raise ValidationFailed(
            f"{where}phone {phone_raw} is the spec's own trigger {spec.phone} "
            f"({spec.outcome}): choose another number"
        )
    outcome = raw.get("outcome")
    if not isinstance(outcome, str):
        raise ValidationFailed(f"{where}outcome is required: one of {', '.join(OUTCOMES)}")
    one_of(outcome, OUTCOMES, f"{where}outcome")
    code = raw.get("failureCode")
    if code is not None:
        if not isinstance(code, str):
            raise ValidationFailed(f"{where}failureCode must be a string")
        provider_decision(code, PROVIDER_FAILURE_CODES, f"{where}failureCode")
        if outcome != FAIL:
            raise ValidationFailed(f"{where}failureCode is only for outcome fail")
    delay = raw.get("decisionDelaySeconds", 0)
    check_delay(delay, f"{where}decisionDelaySeconds", MAX_DECISION_DELAY_SECONDS)
    notification = raw.get("notification")
    notice = None
    if notification is not None:
        notice = NoticeFault.parse(notification, f"{where}notification.")
    description = raw.get("description", "")
    if not isinstance(description, str) or len(description) > 500:
        raise ValidationFailed(f"{where}description must be a string of at most 500 characters")
    return Trigger(
        phone=phone,
        environment=environment,
        outcome=outcome,
        failure_code=(code or "payment_failed") if outcome == FAIL else None,
        decision_delay_seconds=float(delay),
        notification=notice,
        source="custom",
        description=description,
    )


def read_trigger_file(path: str) -> list[Trigger]:
    """``serve --triggers FILE``: a YAML or JSON list of triggers (or ``{triggers: [...]}``)."""
    what = f"triggers file {path}"
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ValidationFailed(f"{what} cannot be read: {exc.strerror}") from None
    # JSON as a request body is read: not JSON, too deep, NaN or a lone surrogate is said.
    json_file = path.endswith(".json")
    data = json_input.decode(raw, what) if json_file else yaml_input.load(raw, what)
    if isinstance(data, dict) and set(data) == {"triggers"}:
        data = data["triggers"]
    if not isinstance(data, list):
        raise ValidationFailed(f"triggers file {path} must hold a list of triggers")
    triggers = [parse_trigger(item, f"triggers[{i}].") for i, item in enumerate(data)]
    seen: set[tuple[str, str]] = set()
    for i, trigger in enumerate(triggers):
        key = (trigger.phone, trigger.environment)
        if key in seen:
            raise ValidationFailed(f"triggers[{i}].phone {trigger.phone} is listed twice")
        seen.add(key)
    return triggers


class TriggerService(Service):
    """The spec's triggers plus the custom ones (exported with the state)."""

    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        #: Custom triggers keyed by (environment, phone).
        self.custom: dict[tuple[str, str], Trigger] = {}

    @locked
    def find(self, environment: str, phone: str) -> Trigger | None:
        """The trigger of a normalized phone in an environment (the spec's win: they cannot
        collide, but a spec phone is matched before anything else)."""
        for trigger in SPEC_TRIGGERS:
            if trigger.phone == phone and trigger.environment == environment:
                return trigger
        return self.custom.get((environment, phone))

    @locked
    def add(self, trigger: Trigger) -> Trigger:
        """Adds a checked custom trigger; one for the same phone and environment is replaced."""
        self.custom[(trigger.environment, trigger.phone)] = trigger
        return trigger

    @locked
    def remove(self, phone: str, environment: str = "sandbox") -> Trigger:
        one_of(environment, ENVIRONMENTS, "environment")
        try:
            key = (environment, normalize_phone(phone))
        except ValueError:
            raise ValidationFailed(f"phone must be {PHONE_FORMATS}") from None
        if key not in self.custom:
            raise NotFound(f"no custom trigger for {phone} in {environment}")
        return self.custom.pop(key)

    @locked
    def clear(self) -> None:
        self.custom = {}

    @locked
    def registry(self) -> list[dict[str, Any]]:
        """Every trigger value the emulator understands, machine-readable."""
        entries = [t.to_public() for t in SPEC_TRIGGERS]
        entries += [t.to_public() for t in self.custom.values()]
        entries += [dict(other) for other in OTHER_PHONES]
        return entries

    def export(self) -> dict[str, Any]:
        return {"custom": [to_json(t) for t in self.custom.values()]}

    def restore(self, data: dict[str, Any]) -> None:
        triggers = [from_json(Trigger, t) for t in data["custom"]]
        self.custom = {(t.environment, t.phone): t for t in triggers}
