"""The checkout rate limits of §8, on the sandbox clock, switched by ``Settings.rate_limits``.

* POST /checkout with a token: a bucket per token, burst 200, refilled 20 per second;
* POST /checkout without a token: 40 requests per 5 minutes per client IP;
* POST /pay/{payToken}: 30 attempts per 5 minutes per client IP;
* POST {provider_url}/<id>/confirm (the emulated provider's page, not a payment link): its own
  window with the same numbers, so provider confirmations never use up the /pay budget.

Their counters are not part of the exported state (a restore or reset clears them).
"""

from __future__ import annotations

from typing import Any

from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.locking import locked
from svc_sandbox.core.ratelimit import SlidingWindow, TokenBucket

#: The refusals, ``{wait}`` the Retry-After wait (the same words for the API and the pages).
CHECKOUT_LIMITED = "Too many checkout requests: slow down and retry after {wait}"
PAY_LIMITED = "Too many payment attempts: retry after {wait}"
#: §8 "POST /pay/{payToken}: 30 attempts per 5 minutes per IP" (the provider page's too).
PAY_ATTEMPTS, PAY_WINDOW_SECONDS = 30, 300


class CheckoutLimits(Service):
    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        self._fresh()

    def _fresh(self) -> None:
        # New limiters rather than cleared ones: a restore only reassigns attributes, so the
        # Sandbox can put the old ones back if the restore fails.
        self.per_token = TokenBucket(capacity=200, rate=20)
        self.per_ip = SlidingWindow(limit=40, window_seconds=300)
        self.pay_per_ip = SlidingWindow(limit=PAY_ATTEMPTS, window_seconds=PAY_WINDOW_SECONDS)
        self.provider_per_ip = SlidingWindow(limit=PAY_ATTEMPTS, window_seconds=PAY_WINDOW_SECONDS)

    @locked
    def take_checkout(self, token: str | None, ip: str) -> None:
        if not self.settings.rate_limits:
            return
        if token is not None:
            self.per_token.take(token, self.clock.now(), CHECKOUT_LIMITED)
        else:
            self.per_ip.take(ip, self.clock.now(), CHECKOUT_LIMITED)

    @locked
    def take_pay(self, ip: str) -> None:
        if self.settings.rate_limits:
            self.pay_per_ip.take(ip, self.clock.now(), PAY_LIMITED)

    @locked
    def take_provider_confirm(self, ip: str) -> None:
        """The provider page is the provider's, not a payment link: a window of its own."""
        if self.settings.rate_limits:
            self.provider_per_ip.take(ip, self.clock.now(), PAY_LIMITED)

    def export(self) -> dict[str, Any]:
        return {}

    def restore(self, data: dict[str, Any]) -> None:
        self._fresh()
