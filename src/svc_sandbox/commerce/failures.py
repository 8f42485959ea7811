"""§7's session failure codes and the buyer-safe message of each: plain data, which the client's
example webhooks read too (without importing the payment service)."""

from __future__ import annotations

FAILURE_MESSAGES: dict[str, str] = {
    "payment_rejected": "The payment provider declined the payment before a prompt reached "
    "your phone.",
    # No "try again" here: a failed push ends its session (§3); the link page offers a retry.
    "payment_failed": "The payment failed (wrong PIN, canceled on the phone or low balance).",
    "payment_canceled": "You canceled the payment.",
    "payment_timed_out": "The payment prompt was not answered in time.",
    "initiate_failed": "The payment could not be started.",
    "session_expired": "This checkout expired after 30 minutes without payment.",
}
#: §7 "30 minutes passed without payment": the session's own ending (``checkout.expire``),
#: never a provider's decision on a prompt.
SESSION_EXPIRED = "session_expired"
