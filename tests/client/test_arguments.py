"""The client refuses invalid arguments before sending: a ValueError naming the parameter.

The client points at a port nobody listens on, so any call that got as far as sending would
raise SvcTransportError instead.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from svc_sandbox.client import (
    AsyncIdentityClient,
    AsyncSvcClient,
    AsyncWalletClient,
    IdentityClient,
    SvcClient,
    SvcTransportError,
    WalletClient,
)

NOWHERE = "http://127.0.0.1:9/api"
SESSION = "0123456789abcdef01234567"

CASES: list[tuple[str, Callable[[SvcClient], Any], str]] = [
    ("blank title", lambda c: c.create_product("  ", "fixed", amount=1), "title"),
    ("long title", lambda c: c.create_product("x" * 121, "free"), "title"),
    ("unknown model", lambda c: c.create_product("Book", "subscription"), "pricing_model"),
    ("fixed without amount", lambda c: c.create_product("Book", "fixed"), "amount"),
    ("pwyw without minimum", lambda c: c.create_product("Tip", "pwyw"), "minimum_amount"),
    ("free with an amount", lambda c: c.create_product("E", "free", amount=999), "amount"),
    (
        "pwyw with an amount",
        lambda c: c.create_product("T", "pwyw", minimum_amount=1, amount=9),
        "amount",
    ),
    (
        "fixed with a minimum",
        lambda c: c.create_product("B", "fixed", amount=500, minimum_amount=100),
        "minimum_amount",
    ),
    (
        "fixed with a default",
        lambda c: c.create_product("B", "fixed", amount=500, default_amount=100),
        "default_amount",
    ),
    ("negative amount", lambda c: c.create_product("Book", "fixed", amount=-1), "amount"),
    ("float amount", lambda c: c.create_product("Book", "fixed", amount=1.5), "amount"),
    ("bool amount", lambda c: c.create_product("Book", "fixed", amount=True), "amount"),
    ("archived at creation", lambda c: c.create_product("B", "free", status="archived"), "status"),
    ("media not a list", lambda c: c.create_product("B", "free", media="http://a"), "media"),
    ("media not http", lambda c: c.create_product("B", "free", media=["ftp://a"]), "media[0]"),
    ("metadata value", lambda c: c.create_product("B", "free", metadata={"a": 1}), "metadata.a"),
    (
        "21 metadata keys",
        lambda c: c.create_product("B", "free", metadata={str(i): "v" for i in range(21)}),
        "metadata",
    ),  # noqa: E501
    ("product id shape", lambda c: c.get_product("p/../x"), "product_id"),
    ("update status", lambda c: c.update_product("p_abc", status="deleted"), "status"),
    ("page zero", lambda c: c.list_products(page=0), "page"),
    ("page 2^53", lambda c: c.list_withdrawals(page=2**53), "page"),
    ("limit 101", lambda c: c.list_orders(limit=101), "limit"),
    ("order status", lambda c: c.list_orders(status="refunded"), "status"),
    ("gateway", lambda c: c.create_checkout("p_abc", gateway="paypal"), "gateway"),
    ("phone", lambda c: c.create_checkout("p_abc", customer={"phone": "12345"}), "customer.phone"),
    ("email", lambda c: c.create_checkout("p_abc", customer={"email": "nobody"}), "customer.email"),
    ("customer field", lambda c: c.create_checkout("p_abc", customer={"age": 3}), "customer.age"),
    ("success url", lambda c: c.create_checkout("p_abc", success_url="shop/done"), "success_url"),
    ("checkout link", lambda c: c.create_checkout("p_abc", checkout_link="x_1"), "checkout_link"),
    (
        "link in capitals",
        lambda c: c.create_checkout("p_abc", checkout_link="CL_a"),
        "checkout_link",
    ),
    (
        "link after a space",
        lambda c: c.create_checkout("p_abc", checkout_link=" cl_a"),
        "checkout_link",
    ),
    ("nested metadata", lambda c: c.create_checkout("p_abc", metadata={"a": {}}), "metadata.a"),
    ("custom amount 99", lambda c: c.create_custom_checkout(99, "Tip"), "amount"),
    ("custom description", lambda c: c.create_custom_checkout(100, ""), "description"),
    ("long description", lambda c: c.create_custom_checkout(100, "x" * 121), "description"),
    ("session id", lambda c: c.get_checkout("cs_123"), "session_id"),
    ("poll interval", lambda c: c.wait_for_checkout(SESSION, interval=0), "interval"),
    ("poll timeout", lambda c: c.wait_for_checkout(SESSION, timeout=-1), "timeout"),
    ("withdraw 9999", lambda c: c.create_withdrawal(9999, "cbe", "0911223344"), "amount"),
    ("withdraw account", lambda c: c.create_withdrawal(10000, "cbe", "+1555"), "account"),
    (
        "idempotency key",
        lambda c: c.create_withdrawal(10000, "cbe", "0911223344", idempotency_key="a\nb"),
        "idempotency_key",
    ),  # noqa: E501
    ("withdrawal id", lambda c: c.get_withdrawal("w_1"), "withdrawal_id"),
    *[
        (
            f"idempotency key {shown}",
            lambda c, key=key: c.create_withdrawal(10000, "cbe", "0911223344", idempotency_key=key),
            "idempotency_key",
        )
        for shown, key in (
            ("space first", " payout-1"),
            ("space last", "payout-1 "),
            ("only a space", " "),
            ("tab", "pay\tout"),
            ("not ASCII", "payout-\u00e9"),
        )
    ],
    *[
        (
            f"metadata {value}",
            lambda c, value=value: c.create_checkout("p_abc", metadata={"a": value}),
            "metadata.a must be a finite number",
        )
        for value in (float("nan"), float("inf"), float("-inf"))
    ],
    (
        "long title after trimming",
        lambda c: c.create_product(" " + "x" * 121 + " ", "free"),
        "title must be at most 120 characters after trimming, got 121",
    ),
    (
        "long description after trimming",
        lambda c: c.create_custom_checkout(100, "\t" + "x" * 121),
        "description must be at most 120 characters after trimming",
    ),
    (
        "phone with spaces inside",
        lambda c: c.create_withdrawal(10000, "cbe", "09 1122 3344"),
        "account",
    ),
]


@pytest.mark.parametrize(("case", "call", "parameter"), CASES, ids=[c[0] for c in CASES])
def test_invalid_arguments_are_refused_before_sending(
    case: str, call: Callable[[SvcClient], Any], parameter: str
) -> None:
    client = SvcClient("svc_test_abcdefgh", base_url=NOWHERE)
    with client, pytest.raises(ValueError) as caught:
        call(client)
    assert str(caught.value).startswith(parameter), caught.value


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"token": "sk_live_123"}, "token"),
        ({"token": 42}, "token"),
        ({"token": "svc_test_abcdefgh\n"}, "token"),
        ({"token": " svc_test_abcdefgh"}, "token"),
        ({"token": "svc_test_abcdefgh", "base_url": "127.0.0.1:8700/api"}, "base_url"),
        ({"token": "svc_test_abcdefgh", "base_url": "http://127.0.0.1:notaport/api"}, "base_url"),
        ({"token": "svc_test_abcdefgh", "base_url": "http://"}, "base_url"),
        ({"token": "svc_test_abcdefgh", "base_url": "http://:80/api"}, "base_url"),
        ({"token": "svc_test_abcdefgh", "base_url": "http://127.0.0.1:99999/api"}, "base_url"),
        ({"token": "svc_test_abcdefgh", "base_url": "http://127.0.0.1:8700/api\n"}, "base_url"),
        ({"token": "svc_test_abcdefgh", "timeout": 0}, "timeout"),
        # Paths are appended to a root: the first sent /api?x=1/balance; credentials made
        # httpx send Basic auth in place of the token.
        ({"token": "svc_test_abcdefgh", "base_url": "http://127.0.0.1:8700/api?x=1"}, "base_url"),
        ({"token": "svc_test_abcdefgh", "base_url": "http://127.0.0.1:8700/api#f"}, "base_url"),
        ({"token": "svc_test_abcdefgh", "base_url": "http://u:p@127.0.0.1:8700/api"}, "base_url"),
    ],
)
def test_invalid_client_settings_are_refused(kwargs: dict[str, Any], parameter: str) -> None:
    with pytest.raises(ValueError) as caught:
        SvcClient(**kwargs)
    assert str(caught.value).startswith(parameter)
    assert "abcdefgh" not in str(caught.value)  # a token is never echoed


@pytest.mark.parametrize(
    "make",
    [
        lambda url: WalletClient("at", "svc_test_abcdefgh", base_url=url),
        lambda url: IdentityClient("app_1", redirect_uri="http://127.0.0.1:9/cb", auth_url=url),
    ],
    ids=["WalletClient", "IdentityClient"],
)
def test_every_api_root_is_checked_up_front(make: Callable[[str], Any]) -> None:
    with pytest.raises(ValueError, match="(base_url|auth_url) .*notaport"):
        make("http://127.0.0.1:notaport/api")


CLIENTS: dict[str, Callable[[Any], Any]] = {
    "SvcClient": lambda timeout: SvcClient("svc_test_abcdefgh", timeout=timeout),
    "IdentityClient": lambda timeout: IdentityClient(
        "app_1", redirect_uri="http://127.0.0.1:9/cb", timeout=timeout
    ),
    "WalletClient": lambda timeout: WalletClient("at", "svc_test_abcdefgh", timeout=timeout),
}


@pytest.mark.parametrize("timeout", [0, -1, True, "30", float("nan"), float("inf")])
@pytest.mark.parametrize("client", list(CLIENTS))
def test_every_client_takes_only_a_positive_finite_timeout(client: str, timeout: Any) -> None:
    with pytest.raises(ValueError, match="^timeout must be"):
        CLIENTS[client](timeout)


def test_wait_for_checkout_checks_its_sleep_before_polling() -> None:
    """It polled once, then raised a bare TypeError calling None."""
    client = SvcClient("svc_test_abcdefgh", base_url=NOWHERE)
    with client, pytest.raises(ValueError, match="^sleep must be a function"):
        client.wait_for_checkout(SESSION, sleep=None)  # type: ignore[arg-type]


@pytest.mark.parametrize("token", ["t\u00f6k", "a\nb", "two words", ""])
def test_an_access_token_a_bearer_header_cannot_carry_is_refused(token: str) -> None:
    """A non-ASCII one raised UnicodeEncodeError at the call, a line break was a transport
    error: RFC 6750's token characters only."""
    with pytest.raises(ValueError, match="^access_token"):
        WalletClient(token, "svc_test_abcdefgh", base_url=NOWHERE)
    identity = IdentityClient("app_1", redirect_uri="http://127.0.0.1:9/cb", auth_url=NOWHERE)
    with identity, pytest.raises(ValueError, match="^access_token"):
        identity.userinfo(token)


@pytest.mark.parametrize("key", ["  abcdefgh  ", "x" * 256, "abcdefg\u00e9", "short"])
def test_a_wallet_idempotency_key_the_service_refuses_is_refused_first(key: str) -> None:
    """Keys with spaces at either end or over 255 characters went out and came back 400."""
    wallet = WalletClient("at", "svc_test_abcdefgh", base_url=NOWHERE)
    with wallet, pytest.raises(ValueError, match="^idempotency_key"):
        wallet.send(100, recipient_handle="tigist", idempotency_key=key)


@pytest.mark.parametrize(
    ("scopes", "extra", "says"),
    [
        (["openid"], {"state": "mine"}, "extra must not set state"),
        (["openid"], {"code_challenge_method": "plain"}, "extra must not set code_challenge_me"),
        (None, None, "scopes must be a list"),
        (["openid"], [1], "extra must be a mapping"),
    ],
)
def test_an_authorization_url_the_client_could_not_check_back_is_refused(
    scopes: Any, extra: Any, says: str
) -> None:
    """An ``extra`` state made a URL whose callback the client then refused (state_mismatch)
    every time; None scopes raised a bare TypeError."""
    identity = IdentityClient("app_1", redirect_uri="http://127.0.0.1:9/cb", auth_url=NOWHERE)
    with identity, pytest.raises(ValueError, match=f"^{says}"):
        identity.authorization_url(scopes, extra=extra)


def test_a_pool_of_the_other_kind_or_a_closed_one_is_refused() -> None:
    """It failed at the first call with httpx's AttributeError or RuntimeError."""
    closed = httpx.Client()
    closed.close()
    with pytest.raises(ValueError, match="^http must be an open pool"):
        SvcClient("svc_test_abcdefgh", base_url=NOWHERE, http=closed)
    refused = pytest.raises(ValueError, match="^http must be an httpx.AsyncClient, not Client")
    with httpx.Client() as sync_pool, refused:
        AsyncSvcClient("svc_test_abcdefgh", base_url=NOWHERE, http=sync_pool)  # type: ignore[arg-type]
    async_pool = httpx.AsyncClient()
    with pytest.raises(ValueError, match="^http must be an httpx.Client, not AsyncClient"):
        SvcClient("svc_test_abcdefgh", base_url=NOWHERE, http=async_pool)  # type: ignore[arg-type]


WALLET_TOKEN = "eyJhbGciOiJSUzI256.e30.c2ln"
#: Each client kind, its pool kind, and one call that would send a request.
LENT: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = [
    (
        "commerce",
        lambda http: SvcClient(base_url=NOWHERE, http=http),
        lambda c: c.get_checkout(SESSION),
    ),
    (
        "commerce async",
        lambda http: AsyncSvcClient(base_url=NOWHERE, http=http),
        lambda c: c.get_checkout(SESSION),
    ),
    (
        "identity",
        lambda http: IdentityClient("app_1", redirect_uri=NOWHERE, auth_url=NOWHERE, http=http),
        lambda c: c.discovery(),
    ),
    (
        "identity async",
        lambda http: AsyncIdentityClient(
            "app_1", redirect_uri=NOWHERE, auth_url=NOWHERE, http=http
        ),
        lambda c: c.discovery(),
    ),
    (
        "wallet",
        lambda http: WalletClient(WALLET_TOKEN, "svc_test_abcdefgh", base_url=NOWHERE, http=http),
        lambda c: c.balance(),
    ),
    (
        "wallet async",
        lambda http: AsyncWalletClient(
            WALLET_TOKEN, "svc_test_abcdefgh", base_url=NOWHERE, http=http
        ),
        lambda c: c.balance(),
    ),
]


def lent_pool(kind: str) -> httpx.Client | httpx.AsyncClient:
    return httpx.AsyncClient() if kind.endswith("async") else httpx.Client()


async def outcome(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@pytest.mark.parametrize(("kind", "build", "call"), LENT, ids=[row[0] for row in LENT])
def test_a_lent_pool_closed_after_the_client_was_built_is_a_transport_error(
    kind: str, build: Callable[[Any], Any], call: Callable[[Any], Any]
) -> None:
    """httpx's RuntimeError ("the client has been closed") came out of the call."""
    http = lent_pool(kind)
    client = build(http)
    asyncio.run(outcome(http.aclose() if isinstance(http, httpx.AsyncClient) else http.close()))
    with pytest.raises(SvcTransportError, match="lent as http= has been closed") as raised:
        asyncio.run(outcome(call(client)))
    assert raised.value.code == "connection_error"


@pytest.mark.parametrize(("kind", "build", "call"), LENT, ids=[row[0] for row in LENT])
def test_a_client_closed_keeps_its_lent_pool_and_makes_none_of_its_own(
    kind: str, build: Callable[[Any], Any], call: Callable[[Any], Any]
) -> None:
    """After ``close()``, the next call made a pool of its own that nothing ever closed."""
    http = lent_pool(kind)
    client = build(http)
    asyncio.run(outcome(client.aclose() if kind.endswith("async") else client.close()))
    assert client._client is http and not http.is_closed
    with pytest.raises(SvcTransportError):  # sent through the lent pool: nobody listens
        asyncio.run(outcome(call(client)))
    assert client._client is http
    asyncio.run(outcome(http.aclose() if isinstance(http, httpx.AsyncClient) else http.close()))


def test_a_custom_amount_checkout_needs_a_token() -> None:
    with SvcClient(base_url=NOWHERE) as client, pytest.raises(ValueError, match="^token"):
        client.create_custom_checkout(1000, "Tip")
