"""The three prompts of spec §1: integrate the API, check before going live, debug a payment."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver.prompts import Prompt
from pydantic import Field


def integrate_svc(
    stack: Annotated[
        str | None, Field(description="your language or framework, e.g. 'Django' or 'Next.js'")
    ] = None,
    use_case: Annotated[
        str | None, Field(description="what you sell: products, custom amounts, or both")
    ] = None,
) -> str:
    """Plan and write an integration of the payments API."""
    application = f"my {stack} application" if stack else "my application"
    selling = f", where I sell {use_case}" if use_case else ""
    return f"""Help me integrate the payments service into {application}{selling}.

Work with the svc tools:
1. Read the API reference (resource svc://reference, or svc_read_doc `reference`) and search
   the docs (svc_search_docs) for checkout, webhooks and errors.
2. Create a product with svc_create_product (money in integer santim, parameters ending in
   _minor: 10000 = 100.00 ETB) and publish it, or use a custom amount (>= 100 santim with a
   description).
3. Start a checkout with svc_create_checkout; send the buyer to checkoutUrl. In the sandbox the
   phone 251900000001 pays instantly and 251900000002 fails.
4. Confirm payment server-side: poll GET /checkout/{{sessionId}} (svc_get_checkout_status /
   svc_wait_for_checkout) or, better, handle the `order.completed` webhook: verify
   X-Svc-Signature over the raw body (svc_verify_webhook shows how), ignore repeated event
   ids, fulfil by data.sessionId.
5. Build a signed test webhook with svc_create_test_webhook and run it against my handler.
Write the code for {stack or "my stack"}, keep the API token in an environment variable,
never in the browser, and explain each error status (400, 401, 404, 422, 429, 502)."""


def go_live_checklist() -> str:
    """Check an integration before switching from sandbox to production."""
    return """Walk me through going live with the payments service, checking each item with
the svc tools where one applies:

- Tokens: production uses a svc_live_ token from a production organization; a token stops
  working when the organization switches environment. Keep it server-side.
- Webhooks: the endpoint is HTTPS, verifies X-Svc-Signature (HMAC-SHA256 over
  "<t>.<raw body>", 300 s tolerance), answers 2xx within 10 s, is idempotent on event id,
  and fulfils on order.completed matching data.sessionId. Test it with
  svc_create_test_webhook and svc_verify_webhook.
- Checkout: products are published; amounts are integer santim; success URLs are registered;
  failures (payment_rejected, payment_failed, payment_canceled, payment_timed_out,
  initiate_failed, session_expired; unknown codes like payment_failed) are shown to buyers.
- Rate limits: 429 on POST /checkout is retried with backoff.
- Withdrawals: need a production organization, Developer Mode and approved KYC; minimum
  10000 santim, over 1000000 waits for review, 10000000 per rolling 24 h. Quote fees with
  svc_quote_withdrawal; always send an Idempotency-Key.
- Reconciliation: compare svc_list_orders (paid) with your fulfilled orders and
  svc_get_balance with expected earnings.
Report each item as done, missing or not applicable."""


def debug_payment(
    session_id: Annotated[str, Field(description="the checkout session id (24 hex)")],
) -> str:
    """Find out what happened to one checkout session."""
    return f"""Debug the payment of checkout session {session_id}.

1. Call svc_get_checkout_status with session_id {session_id} (response_format "json").
2. If it is open: say whether a payment-link attempt is in flight (attempt.inFlight) and what
   attempt.lastFailure says; it expires 30 minutes after creation.
3. If it is expired: explain failure.code and failure.message (section 7 of the spec: treat
   unknown codes like payment_failed) and what the buyer should do (start a new checkout).
4. If it is completed: find its order with svc_list_orders (status paid, matching
   checkoutSessionId) and check that my webhook handler received order.completed for
   data.sessionId {session_id}.
5. Suggest the next step and the docs section that explains it (svc_search_docs)."""


PROMPTS = (integrate_svc, go_live_checklist, debug_payment)
_BUILT: list[Prompt] = []


def prompts() -> list[Prompt]:
    """The prompts, built once per process and shared by every server."""
    if not _BUILT:
        _BUILT.extend(Prompt.from_function(fn) for fn in PROMPTS)
    return list(_BUILT)
