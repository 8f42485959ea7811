"""``WalletClient`` and ``AsyncWalletClient``: a connected app reads a user's wallet and sends
from it (spec §4 "Wallet API"). Both factors go with every call (spec §5): the user's
wallet-bound access token (``Authorization: Bearer``) and the organization's API token
(``X-Svc-Key``).

    wallet = WalletClient(tokens.access_token, "svc_test_...")
    wallet.balance().available_minor
    wallet.send(5000, recipient_handle="tigist", idempotency_key="order-1234")

Errors are ``SvcError``s whose ``code`` is the wallet's ``error`` (``insufficient_funds``,
``jamidev_key_required``, ...). ``AsyncWalletClient`` takes the same arguments (``http=`` an
``httpx.AsyncClient``) and runs the same flows (``flows.py``), awaited.
"""

from __future__ import annotations

import os
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from svc_sandbox.client import arguments as check
from svc_sandbox.client.commerce import AsyncHttp, H, HttpPool, SyncHttp, is_api_token
from svc_sandbox.client.flows import Ask, Flow, awaiting, blocking
from svc_sandbox.client.models import TransferResult, WalletBalance

M = TypeVar("M", bound=BaseModel)

DEFAULT_WALLET_URL = "http://127.0.0.1:8700/wallet"
#: Spec §8: a transfer is 1.00 .. 10,000.00 ETB; an idempotency key at least 8 characters.
MIN_TRANSFER = 100
MAX_TRANSFER = 1_000_000
MIN_KEY_LENGTH = 8


class _WalletRules(HttpPool[H]):
    """What both wallet clients are: the two factors, the address, each operation a flow."""

    def __init__(
        self,
        access_token: str,
        api_key: str,
        *,
        base_url: str | None = None,
        timeout: float = 30.0,
        http: H | None = None,
    ) -> None:
        self.access_token = check.bearer_token("access_token", access_token)
        if not is_api_token(api_key):
            raise ValueError("api_key must be an API token: svc_test_... or svc_live_...")
        self.api_key = api_key
        base = base_url or os.environ.get("SVC_WALLET_BASE_URL") or DEFAULT_WALLET_URL
        self.base_url = check.base_url("base_url", base).rstrip("/")
        self.timeout = check.seconds("timeout", timeout)
        self._use_http(http)

    def _balance(self) -> Flow[WalletBalance]:
        """GET {wallet_base_url} (scope ``wallet:read``)."""
        return (yield from self._ask("GET", "", WalletBalance))

    def _send(
        self,
        amount_minor: int,
        *,
        idempotency_key: str,
        recipient_handle: str | None = None,
        recipient_user_id: str | None = None,
    ) -> Flow[TransferResult]:
        """POST {wallet_base_url}/send (scope ``wallet:send``) to exactly one of a handle or a
        user id. A repeated ``idempotency_key`` returns the original transfer with
        ``deduped=True`` and moves no money."""
        if (recipient_handle is None) == (recipient_user_id is None):
            raise ValueError("give exactly one of recipient_handle or recipient_user_id")
        body: dict[str, Any] = {
            "amountMinor": check.integer("amount_minor", amount_minor, MIN_TRANSFER, MAX_TRANSFER)
        }
        if recipient_handle is not None:
            body["recipientHandle"] = check.text("recipient_handle", recipient_handle, 1)
        else:
            body["recipientUserId"] = check.text("recipient_user_id", recipient_user_id, 1)
        body["idempotencyKey"] = check.idempotency_key(idempotency_key, MIN_KEY_LENGTH)
        return (yield from self._ask("POST", "/send", TransferResult, body))

    def _ask(self, method: str, path: str, model: type[M], body: Any = None) -> Ask[M]:
        headers = {"Authorization": f"Bearer {self.access_token}", "X-Svc-Key": self.api_key}
        return Ask(method, self.base_url + path, model, headers=headers, json=body)


class WalletClient(SyncHttp, _WalletRules[httpx.Client]):
    """The wallet API at ``base_url`` ({wallet_base_url}; default env ``SVC_WALLET_BASE_URL``,
    else the local emulator) as the user whose ``access_token`` this is, for the app of the
    organization whose API token is ``api_key``. ``close()`` or ``with`` closes its
    connections (unless ``http`` was given)."""

    balance = blocking(_WalletRules._balance)
    send = blocking(_WalletRules._send)


class AsyncWalletClient(AsyncHttp, _WalletRules[httpx.AsyncClient]):
    """The async twin of ``WalletClient``: the same constructor (``http=`` an
    ``httpx.AsyncClient``), ``await wallet.balance()``, ``await wallet.send(...)``,
    ``aclose()`` or ``async with``."""

    balance = awaiting(_WalletRules._balance)
    send = awaiting(_WalletRules._send)
