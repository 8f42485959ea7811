"""The Python client of the payments service (spec §1 "Companion clients", §7, §8).

Importing it loads neither Flask nor the emulator's server code: it is a plain library over
httpx and pydantic that works against the emulator or the real service.

    from svc_sandbox.client import SvcClient

    with SvcClient("svc_test_...", base_url="http://127.0.0.1:8700/api") as svc:
        product = svc.create_product("Book", "fixed", amount=5000, status="published")
        session = svc.create_checkout(product.product.id, gateway="telebirr",
                                      customer={"email": "a@b.et", "phone": "251900000001"})
        status = svc.wait_for_checkout(session.session_id)

``AsyncSvcClient`` is the same client for asyncio (``async with``, ``await svc.get_balance()``).
"""

from __future__ import annotations

from svc_sandbox.client.commerce import DEFAULT_BASE_URL, AsyncSvcClient, SvcClient
from svc_sandbox.client.errors import (
    SvcAuthenticationError,
    SvcClientError,
    SvcError,
    SvcNotFoundError,
    SvcPollTimeout,
    SvcRateLimitError,
    SvcResponseError,
    SvcServerError,
    SvcTransportError,
)
from svc_sandbox.client.models import (
    FAILURE_CODES,
    ArchivedProduct,
    Balance,
    CheckoutFailure,
    CheckoutResult,
    CheckoutStatus,
    Order,
    Page,
    Price,
    Product,
    ProductListItem,
    ProductResponse,
    WebhookEvent,
    Withdrawal,
)
from svc_sandbox.client.signing import SIGNATURE_HEADER, SignatureError, TestPayload
from svc_sandbox.client.webhooks import build_test_webhook, verify_webhook

__all__ = [
    "DEFAULT_BASE_URL",
    "AsyncSvcClient",
    "FAILURE_CODES",
    "SIGNATURE_HEADER",
    "ArchivedProduct",
    "Balance",
    "CheckoutFailure",
    "CheckoutResult",
    "CheckoutStatus",
    "Order",
    "Page",
    "Price",
    "Product",
    "ProductListItem",
    "ProductResponse",
    "SignatureError",
    "SvcAuthenticationError",
    "SvcClient",
    "SvcClientError",
    "SvcError",
    "SvcNotFoundError",
    "SvcPollTimeout",
    "SvcRateLimitError",
    "SvcResponseError",
    "SvcServerError",
    "SvcTransportError",
    "TestPayload",
    "WebhookEvent",
    "Withdrawal",
    "build_test_webhook",
    "verify_webhook",
]
