"""The identity limits of spec §8, per minute on the sandbox clock: token 20, authorize 30,
introspect 100, revoke 30, userinfo 60. Counted per client (its client_id; the caller's IP
when a request names no client) or per IP (``Settings.identity_rate_limit_key``); switched
off with ``rate_limits``. Counters are not exported (a restore or reset clears them)."""

from __future__ import annotations

from typing import Any

from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import RateLimited
from svc_sandbox.core.locking import locked
from svc_sandbox.core.ratelimit import SlidingWindow
from svc_sandbox.identity.errors import TooManyRequests

PER_MINUTE = {"token": 20, "authorize": 30, "introspect": 100, "revoke": 30, "userinfo": 60}


class IdentityLimits(Service):
    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        self.windows = {name: SlidingWindow(limit, 60) for name, limit in PER_MINUTE.items()}

    def key_for(self, client_id: str | None, ip: str) -> str:
        if self.settings.identity_rate_limit_key == "client" and client_id:
            return f"client:{client_id}"
        return f"ip:{ip}"

    @locked
    def take(self, endpoint: str, client_id: str | None, ip: str) -> None:
        if not self.settings.rate_limits:
            return
        try:
            self.windows[endpoint].take(self.key_for(client_id, ip), self.clock.now(), "")
        except RateLimited as exc:
            raise TooManyRequests(
                f"Too many {endpoint} requests ({PER_MINUTE[endpoint]} per minute): "
                f"retry after {max(1, exc.retry_after)} seconds",
                retry_after=exc.retry_after,
            ) from None

    def export(self) -> dict[str, Any]:
        return {}

    def restore(self, data: dict[str, Any]) -> None:
        for window in self.windows.values():
            window.clear()
