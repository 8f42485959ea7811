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
``IdentityClient`` is an app's side of the identity provider (sign-in, tokens, ID tokens) and
``WalletClient`` the wallet API with a user's token; ``AsyncIdentityClient`` and
``AsyncWalletClient`` are their async twins (the same rules, awaited).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from svc_sandbox.client.identity import (
        AsyncIdentityClient,
        AuthorizationRequest,
        IdentityClient,
        SvcIdTokenError,
        pkce_pair,
    )
    from svc_sandbox.client.models import (
        FAILURE_CODES,
        ArchivedProduct,
        Balance,
        CheckoutFailure,
        CheckoutResult,
        CheckoutStatus,
        Introspection,
        Order,
        Page,
        Price,
        Product,
        ProductListItem,
        ProductResponse,
        ProviderMetadata,
        TokenSet,
        Transfer,
        TransferResult,
        UserInfo,
        WalletBalance,
        WebhookEvent,
        Withdrawal,
    )
    from svc_sandbox.client.signing import SIGNATURE_HEADER, SignatureError, TestPayload
    from svc_sandbox.client.wallet import AsyncWalletClient, WalletClient
    from svc_sandbox.client.webhooks import build_test_webhook, verify_webhook

# Names load on first use (PEP 562): the emulator imports ``client.signing`` alone at start-up
# and must not pay for httpx and the client models (start-up, issue 10).
_HOMES = {
    "IdentityClient": "svc_sandbox.client.identity",
    "AsyncIdentityClient": "svc_sandbox.client.identity",
    "AuthorizationRequest": "svc_sandbox.client.identity",
    "SvcIdTokenError": "svc_sandbox.client.identity",
    "pkce_pair": "svc_sandbox.client.identity",
    "WalletClient": "svc_sandbox.client.wallet",
    "AsyncWalletClient": "svc_sandbox.client.wallet",
    "TokenSet": "svc_sandbox.client.models",
    "UserInfo": "svc_sandbox.client.models",
    "Introspection": "svc_sandbox.client.models",
    "ProviderMetadata": "svc_sandbox.client.models",
    "WalletBalance": "svc_sandbox.client.models",
    "Transfer": "svc_sandbox.client.models",
    "TransferResult": "svc_sandbox.client.models",
    "ArchivedProduct": "svc_sandbox.client.models",
    "AsyncSvcClient": "svc_sandbox.client.commerce",
    "Balance": "svc_sandbox.client.models",
    "CheckoutFailure": "svc_sandbox.client.models",
    "CheckoutResult": "svc_sandbox.client.models",
    "CheckoutStatus": "svc_sandbox.client.models",
    "DEFAULT_BASE_URL": "svc_sandbox.client.commerce",
    "FAILURE_CODES": "svc_sandbox.client.models",
    "Order": "svc_sandbox.client.models",
    "Page": "svc_sandbox.client.models",
    "Price": "svc_sandbox.client.models",
    "Product": "svc_sandbox.client.models",
    "ProductListItem": "svc_sandbox.client.models",
    "ProductResponse": "svc_sandbox.client.models",
    "SIGNATURE_HEADER": "svc_sandbox.client.signing",
    "SignatureError": "svc_sandbox.client.signing",
    "SvcAuthenticationError": "svc_sandbox.client.errors",
    "SvcClient": "svc_sandbox.client.commerce",
    "SvcClientError": "svc_sandbox.client.errors",
    "SvcError": "svc_sandbox.client.errors",
    "SvcNotFoundError": "svc_sandbox.client.errors",
    "SvcPollTimeout": "svc_sandbox.client.errors",
    "SvcRateLimitError": "svc_sandbox.client.errors",
    "SvcResponseError": "svc_sandbox.client.errors",
    "SvcServerError": "svc_sandbox.client.errors",
    "SvcTransportError": "svc_sandbox.client.errors",
    "TestPayload": "svc_sandbox.client.signing",
    "WebhookEvent": "svc_sandbox.client.models",
    "Withdrawal": "svc_sandbox.client.models",
    "build_test_webhook": "svc_sandbox.client.webhooks",
    "verify_webhook": "svc_sandbox.client.webhooks",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "IdentityClient",
    "AsyncIdentityClient",
    "AuthorizationRequest",
    "SvcIdTokenError",
    "pkce_pair",
    "WalletClient",
    "AsyncWalletClient",
    "TokenSet",
    "UserInfo",
    "Introspection",
    "ProviderMetadata",
    "WalletBalance",
    "Transfer",
    "TransferResult",
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
