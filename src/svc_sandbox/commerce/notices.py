"""Notification faults: how the simulated provider's notice of a decision reaches the emulator.

The provider records its decision on a prompt, then notifies the emulator. By default the
notice arrives at once. A fault, set through the control plane (per organization, per session,
or for everyone) or carried by a custom trigger, changes that for the next notices:

* ``late``: it arrives ``delaySeconds`` later (a status poll may find the decision first);
* ``lost``: it never arrives (only a poll, a new attempt or the expiry check finds it);
* ``duplicate``: it arrives at once and a copy arrives ``delaySeconds`` later (ignored);
* ``out_of_order``: a failure notice is held back until the next notice of the same session
  (the success of a retry on a payment link) has arrived, then arrives after it (ignored).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.context import ServiceContext
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.fault_rules import FaultRules
from svc_sandbox.core.ids import is_object_id
from svc_sandbox.core.locking import locked
from svc_sandbox.core.numbers import within
from svc_sandbox.core.validation import one_of, unknown_field
from svc_sandbox.orgs.organizations import OrganizationService

#: What every notification-fault rule id starts with (core/ids.py draws the rest).
NOTICE_PREFIX = "nf_"
LATE = "late"
LOST = "lost"
DUPLICATE = "duplicate"
OUT_OF_ORDER = "out_of_order"
NOTICE_KINDS = (LATE, LOST, DUPLICATE, OUT_OF_ORDER)
#: Default ``delaySeconds`` where the kind uses one (how late; when the copy arrives).
DEFAULT_DELAYS = {LATE: 30.0, DUPLICATE: 10.0}
MAX_NOTICE_DELAY_SECONDS = 86400.0
MAX_COUNT = 10_000


def check_delay(value: Any, field: str, maximum: float) -> float:
    """A number of seconds in 0..maximum (finite); 400 naming ``field`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationFailed(f"{field} must be a number of seconds")
    if not within(value, 0, maximum):
        raise ValidationFailed(f"{field} must be a finite number between 0 and {maximum:.0f}")
    return float(value)


@dataclass
class NoticeFault:
    """What happens to one notice."""

    kind: str
    delay_seconds: float = 0.0

    @classmethod
    def parse(cls, raw: Any, where: str = "") -> NoticeFault:
        if not isinstance(raw, dict):
            raise ValidationFailed(f"{where.rstrip('.') or 'body'} must be an object")
        for name in raw:
            if name not in ("kind", "delaySeconds"):
                raise ValidationFailed(unknown_field(name, where))
        kind = raw.get("kind")
        if not isinstance(kind, str):
            raise ValidationFailed(f"{where}kind is required: one of {', '.join(NOTICE_KINDS)}")
        one_of(kind, NOTICE_KINDS, f"{where}kind")
        delay = raw.get("delaySeconds", DEFAULT_DELAYS.get(kind, 0.0))
        delay = check_delay(delay, f"{where}delaySeconds", MAX_NOTICE_DELAY_SECONDS)
        return cls(kind, delay)

    def to_public(self) -> dict[str, Any]:
        return {"kind": self.kind, "delaySeconds": self.delay_seconds}


@dataclass
class NoticeRule:
    """A notification fault for the next ``remaining`` notices (None: until cleared) of an
    organization, a session, or everyone (both None)."""

    id: str
    fault: NoticeFault
    created_at: datetime
    org_id: str | None = None
    session_id: str | None = None
    remaining: int | None = None

    def matches(self, org_id: str, session_id: str) -> bool:
        if self.session_id is not None:
            return self.session_id == session_id
        return self.org_id is None or self.org_id == org_id

    @property
    def rank(self) -> int:
        """The most specific rule applies: a session's, then an organization's, then anyone's."""
        return 0 if self.session_id else 1 if self.org_id else 2

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            **self.fault.to_public(),
            "orgId": self.org_id,
            "sessionId": self.session_id,
            "remaining": self.remaining,
            "createdAt": isoformat(self.created_at),
        }


class NotificationFaults(FaultRules[NoticeRule]):
    """The control plane's notification-fault rules (exported with the state)."""

    record = NoticeRule
    noun = "notification fault"

    def __init__(self, ctx: ServiceContext, orgs: OrganizationService) -> None:
        super().__init__(ctx)
        self.orgs = orgs

    @locked
    def add(self, raw: Any) -> NoticeRule:
        """One rule from the control plane's body; every field is checked before anything is
        stored or any id drawn."""
        if not isinstance(raw, dict):
            raise ValidationFailed("body must be a JSON object")
        scope = {k: raw[k] for k in ("orgId", "sessionId", "count") if k in raw}
        fault = NoticeFault.parse({k: v for k, v in raw.items() if k not in scope})
        org_id, session_id, count = scope.get("orgId"), scope.get("sessionId"), scope.get("count")
        if org_id is not None and session_id is not None:
            raise ValidationFailed("orgId and sessionId: send one of them (or neither: everyone)")
        if org_id is not None:
            if not isinstance(org_id, str):
                raise ValidationFailed("orgId must be a string")
            self.orgs.get(org_id)
        if session_id is not None and (
            not isinstance(session_id, str) or not is_object_id(session_id)
        ):
            raise ValidationFailed("sessionId must be 24 lowercase hex characters")
        if count is not None and (
            isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT
        ):
            raise ValidationFailed(f"count must be an integer between 1 and {MAX_COUNT}")
        rule = NoticeRule(
            id=self.ids.object_id(prefix=NOTICE_PREFIX),
            fault=fault,
            created_at=self.clock.now(),
            org_id=org_id,
            session_id=session_id,
            remaining=count,
        )
        self.rules.append(rule)
        return rule

    @locked
    def take(self, org_id: str, session_id: str) -> NoticeFault | None:
        """The fault for the next notice of this session (counted down), if any."""
        candidates = [r for r in self.rules if r.matches(org_id, session_id)]
        if not candidates:
            return None
        rule = min(candidates, key=lambda r: r.rank)  # stable: the oldest of a rank
        self.count_down(rule)
        return rule.fault
