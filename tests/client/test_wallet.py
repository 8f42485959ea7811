"""The wallet client against the emulator over real HTTP, with a user's wallet-bound token from
the identity client and the app's organization token as the second factor (spec §5)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from svc_sandbox.client import (
    IdentityClient,
    SvcAuthenticationError,
    SvcClientError,
    TransferResult,
    WalletClient,
)
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.testing.identity import authorize
from tests.helpers import token_of

WALLET_SCOPES = ["openid", "wallet:read", "wallet:send"]


@pytest.fixture
def server(svc_server: RunningServer) -> RunningServer:
    svc_server.sandbox.settings.rate_limits = False
    return svc_server


def access_token(server: RunningServer, handle: str, scopes: list[str]) -> str:
    sandbox = server.sandbox
    app = next(a for a in sandbox.info()["identity"]["apps"] if a["clientType"] == "confidential")
    user = sandbox.users.by_handle(handle)
    assert user is not None
    with IdentityClient(
        app["clientId"],
        app["clientSecret"],
        redirect_uri=app["redirectUris"][0],
        auth_url=sandbox.settings.issuer,
    ) as idp:
        resource = sandbox.settings.root("resource_url")
        return authorize(server.url, idp, user.id, scopes, resource=resource).access_token


def wallet_of(
    server: RunningServer, handle: str, scopes: list[str] = WALLET_SCOPES
) -> WalletClient:
    sandbox = server.sandbox
    return WalletClient(
        access_token(server, handle, scopes),
        token_of(sandbox, "sandbox"),  # the organization that owns the seeded app
        base_url=sandbox.settings.root("wallet_base_url"),
    )


def test_balance_and_an_idempotent_send(server: RunningServer) -> None:
    sandbox = server.sandbox
    tigist = sandbox.users.by_handle("tigist")
    assert tigist is not None
    with wallet_of(server, "abebe") as wallet:
        start = wallet.balance()
        assert (
            start.currency == "ETB" and start.available_minor == sandbox.settings.wallet_seed_minor
        )

        sent = wallet.send(5000, recipient_handle="tigist", idempotency_key="order-1234")
        assert sent.deduped is False
        assert sent.transfer.amount_minor == 5000 and sent.transfer.recipient_user_id == tigist.id
        again = wallet.send(5000, recipient_user_id=tigist.id, idempotency_key="order-1234")
        assert again.deduped is True and again.transfer.id == sent.transfer.id
        assert wallet.balance().available_minor == start.available_minor - 5000  # once


@pytest.mark.parametrize(
    ("balance", "recipient", "status", "code"),
    [
        (0, "tigist", 402, "insufficient_funds"),
        (None, "nobody-here", 404, "recipient_not_found"),
        (None, "abebe", 400, "self_transfer"),
    ],
)
def test_a_refused_send_is_an_svc_error_with_the_wallet_code(
    server: RunningServer, balance: int | None, recipient: str, status: int, code: str
) -> None:
    sandbox = server.sandbox
    if balance is not None:
        sandbox.wallets.set_available(sandbox.users.by_handle("abebe").id, balance)
    with wallet_of(server, "abebe") as wallet, pytest.raises(SvcClientError) as refused:
        wallet.send(5000, recipient_handle=recipient, idempotency_key="order-5678")
    assert (refused.value.status, refused.value.code) == (status, code)
    assert refused.value.request_id and refused.value.message
    ledger = sandbox.wallets.ledger(sandbox.users.by_handle("abebe").id)
    assert [e.kind for e in ledger if "transfer" in str(e.kind)] == []  # no money moved


def test_both_factors_are_needed(server: RunningServer) -> None:
    sandbox = server.sandbox
    token = access_token(server, "abebe", ["openid", "wallet:read"])
    base = sandbox.settings.root("wallet_base_url")
    foreign = sandbox.orgs.create_token(sandbox.orgs.create("Other").id, "x").token
    with (
        WalletClient(token, foreign, base_url=base) as wallet,
        pytest.raises(SvcAuthenticationError) as refused,
    ):
        wallet.balance()
    assert refused.value.code == "jamidev_key_required"
    reader = WalletClient(token, token_of(sandbox, "sandbox"), base_url=base)
    with reader, pytest.raises(SvcClientError) as scope:
        reader.send(5000, recipient_handle="tigist", idempotency_key="order-0001")
    assert (scope.value.status, scope.value.code) == (403, "insufficient_scope")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"recipient_handle": "tigist", "idempotency_key": "short"}, "at least 8"),
        ({"idempotency_key": "order-0001"}, "exactly one"),
        (
            {"recipient_handle": "t", "recipient_user_id": "u", "idempotency_key": "order-0001"},
            "exactly one",
        ),
    ],
)
def test_bad_arguments_never_leave_the_process(arguments: dict[str, str], message: str) -> None:
    wallet = WalletClient("at", "svc_test_abc", base_url="http://127.0.0.1:9/wallet")
    with pytest.raises(ValueError, match=message):
        wallet.send(5000, **arguments)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="amount_minor"):
        wallet.send(99, recipient_handle="t", idempotency_key="order-0001")


def test_parallel_sends_with_one_key_move_the_money_once(server: RunningServer) -> None:
    """Eight clients on eight threads retry the same send at once: one transfer, seven replays."""
    sandbox = server.sandbox
    token = access_token(server, "abebe", WALLET_SCOPES)
    api_key = token_of(sandbox, "sandbox")
    base = sandbox.settings.root("wallet_base_url")
    start = sandbox.wallets.balance(sandbox.users.by_handle("abebe").id).available
    barrier = threading.Barrier(8)

    def send() -> TransferResult:
        with WalletClient(token, api_key, base_url=base) as wallet:
            barrier.wait()
            return wallet.send(7000, recipient_handle="tigist", idempotency_key="retry-me-8")

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: send(), range(8)))
    assert sorted(r.deduped for r in results) == [False] + [True] * 7
    assert len({r.transfer.id for r in results}) == 1
    after = sandbox.wallets.balance(sandbox.users.by_handle("abebe").id).available
    assert after == start - 7000
