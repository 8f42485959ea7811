"""The latency fault: matching requests wait before they are handled.

A rule matches by method, a path pattern (shell-style: ``/api/checkout/*``), and the
organization of the request's bearer token; it holds for ``count`` requests or until cleared.
How a request waits depends on the clock (``Sandbox.delay_request``): on a frozen clock the
sandbox clock advances by the delay (what falls due on the way runs first; the webhook
attempts due wait for an explicit advance or flush) and the answer comes at once in wall time;
on a real or scaled clock the request waits that long in wall time (divided by a scaled
clock's factor) while the sandbox clock flows on, holding a server worker thread: at most
``waiting_limit(threads)`` requests wait at once, and one that would wait beyond them is
answered without its delay (``SKIPPED_HEADER``), so the control plane and undelayed requests
always find a worker. Removing the rule that delayed a waiting request (one rule, all of them,
a reset, an import, stopping) ends its wait at once. The control plane (``/_sandbox``) is
never delayed, so a fault can always be cleared.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from typing import Any

from svc_sandbox.commerce.notices import MAX_COUNT, check_delay
from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.context import ServiceContext
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.fault_rules import FaultRules
from svc_sandbox.core.locking import locked
from svc_sandbox.core.validation import one_of, unknown_field
from svc_sandbox.orgs.organizations import OrganizationService

#: What every latency rule id starts with (core/ids.py draws the rest).
LATENCY_PREFIX = "lat_"

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
#: The longest delay of one request (an hour: on a real clock a worker thread waits it out).
MAX_LATENCY_SECONDS = 3600.0
MAX_PATH_LENGTH = 500
FIELDS = ("method", "path", "orgId", "delaySeconds", "count")
#: On the answer of a request whose delay was skipped (every worker it could hold is taken).
SKIPPED_HEADER = ("X-Svc-Sandbox-Latency", "skipped")
#: Server workers kept free of delayed requests: the control plane and another request.
FREE_WORKERS = 2


def waiting_limit(threads: int) -> int:
    """How many requests may wait out a delay in wall time at once on a server with
    ``threads`` workers: all but ``FREE_WORKERS``, at least one (a one- or two-thread server
    then stalls while one waits, as its user chose)."""
    return max(1, threads - FREE_WORKERS)


@dataclass
class LatencyRule:
    id: str
    path: str
    delay_seconds: float
    created_at: datetime
    method: str | None = None
    org_id: str | None = None
    remaining: int | None = None
    #: Requests delayed so far.
    applied: int = 0

    def matches(self, method: str, path: str, org_id: str | None) -> bool:
        return (
            (self.method is None or self.method == method)
            and (self.org_id is None or self.org_id == org_id)
            and fnmatchcase(path, self.path)
        )

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "method": self.method,
            "path": self.path,
            "orgId": self.org_id,
            "delaySeconds": self.delay_seconds,
            "remaining": self.remaining,
            "applied": self.applied,
            "createdAt": isoformat(self.created_at),
        }


@dataclass(frozen=True)
class Delay:
    """What a rule makes a request wait, and which rule (removing it ends the wait)."""

    rule_id: str
    length: timedelta
    #: Set when the rule goes while a request waits it out (``LatencyFaults.wait``).
    ended: threading.Event = field(default_factory=threading.Event, compare=False)


class LatencyFaults(FaultRules[LatencyRule]):
    record = LatencyRule
    noun = "latency fault"

    def __init__(self, ctx: ServiceContext, orgs: OrganizationService) -> None:
        super().__init__(ctx)
        self.orgs = orgs
        #: The delays being waited out in wall time now (not state: a wait is a thread's).
        self._waits: list[Delay] = []

    def wait(self, delay: Delay, seconds: float) -> None:
        """Waits ``seconds`` of wall time, or until ``delay``'s rule is removed. ``delay`` is
        one ``take(waiting=True)`` registered: in the same hold of the lock as the rule was
        counted, so a removal right after the take still ends this wait."""
        try:
            delay.ended.wait(seconds)
        finally:
            with self.lock:
                self._waits.remove(delay)

    @locked
    def end_waits(self, rule_id: str | None = None) -> None:
        """Ends the waits of ``rule_id`` (None: every wait)."""
        for delay in self._waits:
            if rule_id is None or delay.rule_id == rule_id:
                delay.ended.set()

    @locked
    def remove(self, rule_id: str) -> LatencyRule:
        rule = super().remove(rule_id)
        self.end_waits(rule_id)
        return rule

    @locked
    def clear(self) -> None:
        super().clear()
        self.end_waits()

    def restore(self, data: dict[str, Any]) -> None:
        super().restore(data)
        self.end_waits()

    @locked
    def add(self, raw: Any) -> LatencyRule:
        """One rule from the control plane's body; everything is checked before it is stored."""
        if not isinstance(raw, dict):
            raise ValidationFailed("body must be a JSON object")
        for name in raw:
            if name not in FIELDS:
                raise ValidationFailed(unknown_field(name))
        method = raw.get("method")
        if method is not None:
            if not isinstance(method, str):
                raise ValidationFailed(f"method must be one of {', '.join(METHODS)}")
            method = one_of(method.upper(), METHODS, "method")
        path = raw.get("path")
        if not isinstance(path, str):
            raise ValidationFailed("path is required: a pattern such as /api/checkout/*")
        if not path.startswith("/"):
            raise ValidationFailed("path must start with /: a pattern such as /api/checkout/*")
        if len(path) > MAX_PATH_LENGTH:
            raise ValidationFailed(f"path must be at most {MAX_PATH_LENGTH} characters")
        if path.startswith("/_sandbox"):
            raise ValidationFailed("path must not match the control plane (/_sandbox)")
        if "delaySeconds" not in raw:
            raise ValidationFailed("delaySeconds is required: a number of seconds")
        delay = check_delay(raw["delaySeconds"], "delaySeconds", MAX_LATENCY_SECONDS)
        org_id = raw.get("orgId")
        if org_id is not None:
            if not isinstance(org_id, str):
                raise ValidationFailed("orgId must be a string")
            self.orgs.get(org_id)
        count = raw.get("count")
        if count is not None and (
            isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT
        ):
            raise ValidationFailed(f"count must be an integer between 1 and {MAX_COUNT}")
        rule = LatencyRule(
            id=self.ids.object_id(prefix=LATENCY_PREFIX),
            path=path,
            delay_seconds=delay,
            created_at=self.clock.now(),
            method=method,
            org_id=org_id,
            remaining=count,
        )
        self.rules.append(rule)
        return rule

    @locked
    def take(
        self,
        method: str,
        path: str,
        token: str | None,
        *,
        count: bool = True,
        waiting: bool = False,
    ) -> Delay | None:
        """The delay of this request (the first matching rule's), if any, counted (``applied``,
        ``count``) unless ``count`` is False: a request answered without its delay was not
        delayed. ``waiting``: the caller waits it out (``wait``), registered here."""
        if not self.rules or path.startswith("/_sandbox"):
            return None
        found = self.orgs.tokens.get(token) if token else None
        org_id = found.org_id if found is not None else None
        for rule in self.rules:
            if rule.matches(method, path, org_id):
                if count:
                    rule.applied += 1
                    self.count_down(rule)
                delay = Delay(rule.id, timedelta(seconds=rule.delay_seconds))
                if waiting:
                    self._waits.append(delay)
                return delay
        return None
