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
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.testing.identity import scripted_callback

T = TypeVar("T")

FORMS = ("sync", "async")

Identity = IdentityClient | AsyncIdentityClient
Wallet = WalletClient | AsyncWalletClient
#: Any client with ``close()`` or ``aclose()``.
C = TypeVar("C")


async def settle(value: T | Awaitable[T]) -> T:
    """The result of a client call, whichever form made it."""
    if inspect.isawaitable(value):
        return await value
    return value


def identity_client(form: str, *args: Any, **kwargs: Any) -> Identity:
    return (IdentityClient if form == "sync" else AsyncIdentityClient)(*args, **kwargs)


def wallet_client(form: str, *args: Any, **kwargs: Any) -> Wallet:
    return (WalletClient if form == "sync" else AsyncWalletClient)(*args, **kwargs)


async def close(client: Any) -> None:
    """``close()`` a sync client, ``await aclose()`` an async one."""
    await settle(client.aclose() if hasattr(client, "aclose") else client.close())


def run(scenario: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return asyncio.run(scenario())


def run_with(client: C, scenario: Callable[[C], Coroutine[Any, Any, T]]) -> T:
    """Runs ``scenario(client)``, then closes the client (``close`` or ``aclose``)."""

    async def closing_after() -> T:
        try:
            return await scenario(client)
        finally:
            await close(client)

    return asyncio.run(closing_after())


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


async def wallet_token(server: RunningServer, form: str, handle: str, scopes: list[str]) -> str:
    """A wallet-bound token of ``handle`` for the seeded confidential app, by the code flow."""
    sandbox = server.sandbox
    app = next(a for a in sandbox.info()["identity"]["apps"] if a["clientType"] == "confidential")
    user = sandbox.users.by_handle(handle)
    assert user is not None
    idp = identity_client(
        form,
        app["clientId"],
        app["clientSecret"],
        redirect_uri=app["redirectUris"][0],
        auth_url=sandbox.settings.issuer,
    )
    resource = sandbox.settings.root("resource_url")
    _, tokens = await sign_in(server.url, idp, user.id, scopes, resource=resource)
    await close(idp)
    return tokens.access_token
