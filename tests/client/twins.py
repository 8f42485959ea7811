"""One test body for a client and its async twin: the test is a coroutine run with asyncio, and
every client call goes through ``settle``, which awaits what the async form returns and passes
through what the sync form returns. A test parametrized over ``FORMS`` holds both forms to one
set of expectations. (The sync client blocks the event loop while it waits: harmless here, the
emulator answers from its own threads.)"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from svc_sandbox.client import (
    AsyncIdentityClient,
    AsyncWalletClient,
    AuthorizationRequest,
    IdentityClient,
    TokenSet,
    WalletClient,
)
from svc_sandbox.testing.identity import scripted_callback

T = TypeVar("T")

FORMS = ("sync", "async")

Identity = IdentityClient | AsyncIdentityClient
Wallet = WalletClient | AsyncWalletClient


async def settle(value: T | Awaitable[T]) -> T:
    """The result of a client call, whichever form made it."""
    if inspect.isawaitable(value):
        return await value
    return value


def identity_client(form: str, *args: Any, **kwargs: Any) -> Identity:
    return (IdentityClient if form == "sync" else AsyncIdentityClient)(*args, **kwargs)


def wallet_client(form: str, *args: Any, **kwargs: Any) -> Wallet:
    return (WalletClient if form == "sync" else AsyncWalletClient)(*args, **kwargs)


async def close(client: Identity | Wallet) -> None:
    await settle(client.aclose() if hasattr(client, "aclose") else client.close())


def run(scenario: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return asyncio.run(scenario())


async def sign_in(
    origin: str,
    idp: Identity,
    user_id: str,
    scopes: Sequence[str],
    *,
    resource: str | None = None,
) -> tuple[AuthorizationRequest, TokenSet]:
    """The code flow as an app runs it: the authorization URL, the user's approval (played by
    the control plane), the callback checked and its code exchanged."""
    request = await settle(idp.authorization_url(scopes))
    callback = scripted_callback(origin, user_id, request.url)
    return request, await settle(idp.exchange_callback(callback, request, resource=resource))
