"""One face over an emulator a test talks to: in-process (a Sandbox behind a server thread;
controls are direct method calls) or remote (``--svc-url``; controls go through the control
plane). The fixtures ``svc_org``, ``svc_clock`` and ``svc_webhooks`` only use this face.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx

from svc_sandbox.core.clock import ClockListener, ClockListeners, parse_instant
from svc_sandbox.core.journal import JOURNAL_ENTRIES
from svc_sandbox.orgs.organizations import Environment, KycStatus
from svc_sandbox.sandbox import Sandbox


@dataclass(frozen=True)
class OrgCredentials:
    id: str
    token: str
    environment: str


@dataclass(frozen=True)
class Tenant:
    """A fresh organization per test, as a pair like the seeded defaults: one in sandbox and
    one in production (developer mode on, KYC approved), each with an API token. Tokens work
    only in their organization's environment (spec §5), hence two."""

    name: str
    sandbox: OrgCredentials
    production: OrgCredentials

    @property
    def id(self) -> str:
        return self.sandbox.id

    @property
    def token(self) -> str:
        return self.sandbox.token

    @property
    def live_token(self) -> str:
        return self.production.token

    @property
    def org_ids(self) -> tuple[str, str]:
        return (self.sandbox.id, self.production.id)


class Emulator:
    """The controls a test needs, whatever runs the emulator."""

    #: The origin (``http://127.0.0.1:<port>``) and the commerce root.
    url: str
    base_url: str

    def create_tenant(self, name: str) -> Tenant:
        sandbox = self.create_org(name, "sandbox")
        production = self.create_org(name + " (production)", "production")
        return Tenant(name, sandbox, production)

    def create_org(self, name: str, environment: str) -> OrgCredentials:
        raise NotImplementedError

    def now(self) -> datetime:
        raise NotImplementedError

    def advance(self, delta: timedelta) -> None:
        raise NotImplementedError

    def set_time(self, instant: datetime) -> None:
        raise NotImplementedError

    def on_clock_move(self, listener: ClockListener) -> Callable[[], None]:
        """Calls ``listener(new time)`` after every move of the clock this process can see:
        in-process every move, whatever made it; remote the moves made through this object.
        Returns the unsubscribe."""
        raise NotImplementedError

    def next_due(self) -> datetime | None:
        """When the earliest scheduled effect is due (None: nothing scheduled)."""
        raise NotImplementedError

    def add_webhook_endpoint(self, org_id: str, url: str, secret: str | None) -> str:
        """Registers ``url`` for the organization; returns the endpoint's secret."""
        raise NotImplementedError

    def journal(self, limit: int = JOURNAL_ENTRIES) -> list[dict[str, Any]]:
        """The most recent requests, newest first."""
        raise NotImplementedError

    def control(self, method: str, path: str, body: Any = None) -> Any:
        """A control-plane call (``path`` under the origin, e.g. ``/_sandbox/users``): its JSON
        answer; an error answer raises ``RuntimeError`` with what the emulator said."""
        raise NotImplementedError


class InProcessEmulator(Emulator):
    def __init__(self, sandbox: Sandbox, origin: str) -> None:
        self.sandbox = sandbox
        self.url = origin
        self.base_url = sandbox.settings.root("base_url")

    def create_org(self, name: str, environment: str) -> OrgCredentials:
        orgs = self.sandbox.orgs
        with self.sandbox.lock:
            org = orgs.create(name, Environment(environment), True, KycStatus.APPROVED)
            token = orgs.create_token(org.id, "svc_org")
        return OrgCredentials(org.id, token.token, environment)

    def now(self) -> datetime:
        return self.sandbox.now()

    def advance(self, delta: timedelta) -> None:
        self.sandbox.advance(delta)

    def set_time(self, instant: datetime) -> None:
        self.sandbox.set_time(instant)

    def on_clock_move(self, listener: ClockListener) -> Callable[[], None]:
        return self.sandbox.clock.subscribe(listener)

    def next_due(self) -> datetime | None:
        pending = self.sandbox.scheduler.pending()
        return min((entry.due for entry in pending), default=None)

    def add_webhook_endpoint(self, org_id: str, url: str, secret: str | None) -> str:
        endpoint = self.sandbox.webhook_endpoints.create(org_id, url, secret, description="svc")
        return endpoint.secret

    def journal(self, limit: int = JOURNAL_ENTRIES) -> list[dict[str, Any]]:
        return self.sandbox.journal.recent(limit)

    def control(self, method: str, path: str, body: Any = None) -> Any:
        with httpx.Client(base_url=self.url, timeout=30.0) as http:
            return control_call(http, self.url, method, path, body)


class RemoteEmulator(Emulator):
    """An emulator that is already running (``--svc-url``), driven over its control plane.
    Control-plane mutations always send a JSON body."""

    def __init__(self, origin: str, timeout: float = 30.0) -> None:
        self.url = origin.rstrip("/")
        self._http = httpx.Client(base_url=self.url, timeout=timeout)
        self._listeners = ClockListeners()
        info = self._call("GET", "/_sandbox")
        self.base_url = str(info["roots"]["base_url"])

    def close(self) -> None:
        self._http.close()

    def _call(
        self, method: str, path: str, body: Any = None, timeout: httpx.Timeout | None = None
    ) -> Any:
        return control_call(self._http, self.url, method, path, body, timeout)

    control = _call

    def _move_clock(self, path: str, body: dict[str, Any]) -> None:
        """A clock move answers once every attempt due on the way was made, each up to the
        webhook timeout (six against a hanging receiver: a minute): it may read for as long
        as the server works, as an in-process advance blocks as long (connecting stays bounded)."""
        self._call("POST", path, body, httpx.Timeout(self._http.timeout.connect, read=None))
        self._moved()

    def create_org(self, name: str, environment: str) -> OrgCredentials:
        body = {"name": name, "environment": environment, "kyc": "approved", "withToken": True}
        org = self._call("POST", "/_sandbox/orgs", body)
        return OrgCredentials(org["id"], org["tokens"][0]["token"], environment)

    def now(self) -> datetime:
        return parse_instant(self._call("GET", "/_sandbox/clock")["clock"]["now"])

    def advance(self, delta: timedelta) -> None:
        self._move_clock("/_sandbox/clock/advance", {"seconds": delta.total_seconds()})

    def set_time(self, instant: datetime) -> None:
        self._move_clock("/_sandbox/clock/set", {"now": instant.isoformat()})

    def on_clock_move(self, listener: ClockListener) -> Callable[[], None]:
        return self._listeners.subscribe(listener)

    def _moved(self) -> None:
        if self._listeners:
            self._listeners.tell(self.now())

    def next_due(self) -> datetime | None:
        scheduled = self._call("GET", "/_sandbox/clock")["scheduled"]
        return min((parse_instant(entry["due"]) for entry in scheduled), default=None)

    def add_webhook_endpoint(self, org_id: str, url: str, secret: str | None) -> str:
        body: dict[str, Any] = {"orgId": org_id, "url": url, "description": "svc"}
        if secret is not None:
            body["secret"] = secret
        return str(self._call("POST", "/_sandbox/webhooks/endpoints", body)["secret"])

    def journal(self, limit: int = JOURNAL_ENTRIES) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self._call("GET", f"/_sandbox/requests?limit={limit}")[
            "items"
        ]
        return items


def unreachable(origin: str, timeout: float = 10.0) -> str | None:
    """Why the emulator at ``origin`` cannot be used (no answer, or not svc-sandbox's
    ``GET /_sandbox``), or None when it answers."""
    try:
        answer = httpx.get(origin.rstrip("/") + "/_sandbox", timeout=timeout)
    except httpx.HTTPError as error:
        return f"no svc-sandbox answers there ({type(error).__name__}: {error})"
    try:
        roots = answer.json()["roots"] if answer.status_code == 200 else None
    except (ValueError, KeyError, TypeError):
        roots = None
    if not isinstance(roots, dict):
        return f"GET /_sandbox answered {answer.status_code}, not svc-sandbox's description"
    return None


def control_call(
    http: httpx.Client,
    origin: str,
    method: str,
    path: str,
    body: Any,
    timeout: httpx.Timeout | None = None,
) -> Any:
    """One control-plane call; mutations always send a JSON body (``{}`` when none).
    ``timeout`` replaces the client's for this call."""
    wait: Any = timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT
    if method == "GET":
        response = http.get(path, timeout=wait)
    else:
        response = http.request(method, path, json={} if body is None else body, timeout=wait)
    if response.status_code >= 400:
        raise RuntimeError(
            f"svc-sandbox at {origin}: {method} {path} answered "
            f"{response.status_code}: {response.text[:300]}"
        )
    return response.json()


@dataclass(frozen=True)
class RequestsSince:
    """The journal entries after a mark, oldest first; ``complete`` is False when the mark
    was not among the entries read (the test made more requests than the journal keeps)."""

    entries: list[dict[str, Any]]
    complete: bool


def requests_since(emulator: Emulator, mark: str | None) -> RequestsSince:
    """The journal entries after the one whose request id is ``mark``."""
    read = emulator.journal(JOURNAL_ENTRIES)
    newer: list[dict[str, Any]] = []
    for entry in read:
        if mark is not None and entry.get("requestId") == mark:
            return RequestsSince(list(reversed(newer)), True)
        newer.append(entry)
    return RequestsSince(list(reversed(newer)), len(read) < JOURNAL_ENTRIES)


def journal_mark(emulator: Emulator) -> str | None:
    latest = emulator.journal(1)
    return str(latest[0]["requestId"]) if latest else None
