"""The wallet client against the emulator over real HTTP, with a user's wallet-bound token from
the identity client and the app's organization token as the second factor (spec §5).

``WalletClient`` and ``AsyncWalletClient`` are held to one set of expectations: each test runs
once per form (tests/client/twins.py), the token signed in with the identity client of the same
form."""

from __future__ import annotations

import asyncio
import inspect
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from svc_sandbox.client import (
    AsyncWalletClient,
    SvcAuthenticationError,
    SvcClientError,
    SvcNotFoundError,
    TransferResult,
    WalletClient,
)
from svc_sandbox.pytest_plugin import RunningServer
from tests.client.twins import (
    FORMS,
    Wallet,
    close,
    run,
    run_with,
    settle,
    wallet_client,
    wallet_token,
)
from tests.helpers import token_of

WALLET_SCOPES = ["openid", "wallet:read", "wallet:send"]


@pytest.fixture
def server(svc_server: RunningServer) -> RunningServer:
    svc_server.sandbox.settings.rate_limits = False
    return svc_server


async def wallet_of(
    server: RunningServer, form: str, handle: str, scopes: list[str] = WALLET_SCOPES
) -> Wallet:
    sandbox = server.sandbox
    return wallet_client(
        form,
        await wallet_token(server, form, handle, scopes),
        token_of(sandbox, "sandbox"),  # the organization that owns the seeded app
        base_url=sandbox.settings.root("wallet_base_url"),
    )


def test_the_async_client_has_both_methods_as_coroutines() -> None:
    for name in ("balance", "send"):
        twin = getattr(AsyncWalletClient, name)
        assert inspect.iscoroutinefunction(twin)
        assert twin.__doc__ == getattr(WalletClient, name).__doc__


@pytest.mark.parametrize("form", FORMS)
def test_balance_and_an_idempotent_send(server: RunningServer, form: str) -> None:
    sandbox = server.sandbox
    tigist = sandbox.users.by_handle("tigist")
    abebe = sandbox.users.by_handle("abebe")
    assert tigist is not None and abebe is not None

    async def scenario() -> None:
        wallet = await wallet_of(server, form, "abebe")
        start = await settle(wallet.balance())
        assert start.currency == "ETB"
        assert start.available_minor == sandbox.settings.wallet_seed_minor

        sent = await settle(
            wallet.send(5000, recipient_handle="tigist", idempotency_key="order-1234")
        )
        assert sent.deduped is False
        assert sent.transfer.amount_minor == 5000 and sent.transfer.recipient_user_id == tigist.id
        again = await settle(
            wallet.send(5000, recipient_user_id=tigist.id, idempotency_key="order-1234")
        )
        assert again.deduped is True and again.transfer.id == sent.transfer.id
        after = await settle(wallet.balance())
        assert after.available_minor == start.available_minor - 5000  # once
        await close(wallet)

    run(scenario)
    ledger = sandbox.wallets.ledger(abebe.id)
    assert len([e for e in ledger if "transfer" in str(e.kind)]) == 1


@pytest.mark.parametrize(
    ("balance", "recipient", "status", "code", "kind"),
    [
        (0, "tigist", 402, "insufficient_funds", SvcClientError),
        (None, "nobody-here", 404, "recipient_not_found", SvcNotFoundError),
        (None, "abebe", 400, "self_transfer", SvcClientError),
    ],
)
@pytest.mark.parametrize("form", FORMS)
def test_a_refused_send_is_the_same_svc_error_in_both_forms(
    server: RunningServer,
    form: str,
    balance: int | None,
    recipient: str,
    status: int,
    code: str,
    kind: type[SvcClientError],
) -> None:
    sandbox = server.sandbox
    abebe = sandbox.users.by_handle("abebe")
    assert abebe is not None
    if balance is not None:
        sandbox.wallets.set_available(abebe.id, balance)
    before = sandbox.wallets.balance(abebe.id).available

    async def scenario() -> SvcClientError:
        wallet = await wallet_of(server, form, "abebe")
        with pytest.raises(SvcClientError) as refused:
            await settle(
                wallet.send(5000, recipient_handle=recipient, idempotency_key="order-5678")
            )
        await close(wallet)
        return refused.value

    error = run(scenario)
    assert type(error) is kind
    assert (error.status, error.code) == (status, code)
    assert error.request_id and error.message
    ledger = sandbox.wallets.ledger(abebe.id)
    assert [e.kind for e in ledger if "transfer" in str(e.kind)] == []  # no money moved
    assert sandbox.wallets.balance(abebe.id).available == before


@pytest.mark.parametrize("form", FORMS)
def test_both_factors_are_needed(server: RunningServer, form: str) -> None:
    sandbox = server.sandbox
    base = sandbox.settings.root("wallet_base_url")
    foreign = sandbox.orgs.create_token(sandbox.orgs.create("Other").id, "x").token

    async def scenario() -> None:
        token = await wallet_token(server, form, "abebe", ["openid", "wallet:read"])
        wallet = wallet_client(form, token, foreign, base_url=base)
        with pytest.raises(SvcAuthenticationError) as refused:
            await settle(wallet.balance())
        assert (refused.value.status, refused.value.code) == (401, "jamidev_key_required")
        await close(wallet)

        reader = wallet_client(form, token, token_of(sandbox, "sandbox"), base_url=base)
        assert (await settle(reader.balance())).currency == "ETB"
        with pytest.raises(SvcClientError) as scope:
            await settle(reader.send(5000, recipient_handle="tigist", idempotency_key="order-0001"))
        assert (scope.value.status, scope.value.code) == (403, "insufficient_scope")
        await close(reader)

    run(scenario)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"recipient_handle": "tigist", "idempotency_key": "short"}, "at least 8"),
        ({"idempotency_key": "order-0001"}, "exactly one"),
        (
            {"recipient_handle": "t", "recipient_user_id": "u", "idempotency_key": "order-0001"},
            "exactly one",
        ),
        ({"amount_minor": 99, "recipient_handle": "t", "idempotency_key": "order-0001"}, "amount"),
    ],
)
@pytest.mark.parametrize("form", FORMS)
def test_bad_arguments_never_leave_the_process(
    form: str, arguments: dict[str, object], message: str
) -> None:
    async def scenario(wallet: Wallet) -> None:
        with pytest.raises(ValueError, match=message):
            await settle(wallet.send(**{"amount_minor": 5000, **arguments}))

    # Port 9 (discard) has no listener: a request would fail with a transport error.
    nowhere = "http://127.0.0.1:9/wallet"
    run_with(wallet_client(form, "at", "svc_test_abcdefgh", base_url=nowhere), scenario)
    with pytest.raises(ValueError, match="api_key"):
        wallet_client(form, "at", "not-a-key")


def test_parallel_sends_with_one_key_move_the_money_once(server: RunningServer) -> None:
    """Eight clients on eight threads retry the same send at once: one transfer, seven replays."""
    sandbox = server.sandbox
    token = run(lambda: wallet_token(server, "sync", "abebe", WALLET_SCOPES))
    api_key = token_of(sandbox, "sandbox")
    base = sandbox.settings.root("wallet_base_url")
    abebe = sandbox.users.by_handle("abebe")
    assert abebe is not None
    start = sandbox.wallets.balance(abebe.id).available
    barrier = threading.Barrier(8)

    def send() -> TransferResult:
        with WalletClient(token, api_key, base_url=base) as wallet:
            barrier.wait()
            return wallet.send(7000, recipient_handle="tigist", idempotency_key="retry-me-8")

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: send(), range(8)))
    assert sorted(r.deduped for r in results) == [False] + [True] * 7
    assert len({r.transfer.id for r in results}) == 1
    assert sandbox.wallets.balance(abebe.id).available == start - 7000


def test_concurrent_async_sends_with_one_key_move_the_money_once(server: RunningServer) -> None:
    """Eight coroutines on one event loop retry the same send at once: one transfer, seven
    replays."""
    sandbox = server.sandbox
    abebe = sandbox.users.by_handle("abebe")
    assert abebe is not None
    start = sandbox.wallets.balance(abebe.id).available

    async def scenario() -> list[TransferResult]:
        token = await wallet_token(server, "async", "abebe", WALLET_SCOPES)
        base = sandbox.settings.root("wallet_base_url")
        limits = httpx.Limits(max_connections=8)
        async with (
            httpx.AsyncClient(limits=limits) as http,
            AsyncWalletClient(token, token_of(sandbox, "sandbox"), base_url=base, http=http) as w,
        ):
            sends = [
                w.send(7000, recipient_handle="tigist", idempotency_key="retry-me-8")
                for _ in range(8)
            ]
            return list(await asyncio.gather(*sends))

    results = run(scenario)
    assert sorted(r.deduped for r in results) == [False] + [True] * 7
    assert len({r.transfer.id for r in results}) == 1
    assert sandbox.wallets.balance(abebe.id).available == start - 7000
