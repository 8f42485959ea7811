"""The ledger's invariants under any sequence of sends (hypothesis, stateful), on the plain
Python service: transfers never change the sum of all wallets, no wallet goes below zero, a
balance is the sum of its entries, no (user, app) passes the cap in any 24 h window, and a
repeated key never moves money again."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from svc_sandbox.core.errors import SandboxError
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.wallet.ledger import CAP_WINDOW, DAILY_CAP
from svc_sandbox.wallet.send_input import SendRequest, parse_send

HANDLES = ("abebe", "tigist", "dawit")
APPS = ("app-one", "app-two")


class Ledger(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.sandbox = Sandbox(clock_mode="frozen", seed=7, wallet_seed_minor=3_000_000)
        self.wallets = self.sandbox.wallets
        self.users = {h: self.sandbox.users.by_handle(h) for h in HANDLES}
        self.total = self.wallets.sum_of_wallets()
        self.keys: dict[tuple[str, str, str], str] = {}

    @rule(
        sender=st.sampled_from(HANDLES),
        recipient=st.sampled_from((*HANDLES, "nobody")),
        by_id=st.booleans(),
        amount=st.one_of(
            st.integers(min_value=-10, max_value=2_000_000), st.sampled_from([100, 1_000_000])
        ),
        key=st.sampled_from([f"key-{i:04}" for i in range(6)]),
        app=st.sampled_from(APPS),
    )
    def send(
        self, sender: str, recipient: str, by_id: bool, amount: int, key: str, app: str
    ) -> None:
        user = self.users[sender]
        assert user is not None
        target = self.users.get(recipient)
        field = "recipientUserId" if by_id and target else "recipientHandle"
        value = target.id if by_id and target else recipient
        before = self.wallets.sum_of_wallets()
        moved_before = len(self.wallets.transfers)
        try:
            request: SendRequest = parse_send(
                {field: value, "amountMinor": amount, "idempotencyKey": key}
            )
            sent = self.wallets.send(user, app, request)
        except SandboxError:
            assert len(self.wallets.transfers) == moved_before
            return
        scope = (user.id, app, key)
        if sent.deduped:
            assert self.keys[scope] == sent.transfer.id
            assert len(self.wallets.transfers) == moved_before
        else:
            assert scope not in self.keys
            self.keys[scope] = sent.transfer.id
        assert self.wallets.sum_of_wallets() == before

    @rule(amount=st.integers(min_value=1, max_value=3_000_000), handle=st.sampled_from(HANDLES))
    def fund(self, amount: int, handle: str) -> None:
        user = self.users[handle]
        assert user is not None
        self.wallets.fund(user.id, amount)
        self.total += amount

    @rule(hours=st.integers(min_value=1, max_value=30))
    def advance(self, hours: int) -> None:
        self.sandbox.advance(timedelta(hours=hours))

    @invariant()
    def transfers_keep_the_sum(self) -> None:
        assert self.wallets.sum_of_wallets() == self.total

    @invariant()
    def balances_are_their_entries_and_never_negative(self) -> None:
        for user in self.users.values():
            assert user is not None
            entries = self.wallets.ledger(user.id)
            balance = self.wallets.balance(user.id)
            assert balance.available == sum(e.amount for e in entries) >= 0
            assert balance.total == sum(e.amount for e in entries if e.amount > 0)

    @invariant()
    def no_window_passes_the_cap(self) -> None:
        by_pair: dict[tuple[str, str], list[tuple[object, int]]] = {}
        for t in self.wallets.transfers.values():
            by_pair.setdefault((t.sender_id, t.client_id), []).append((t.created_at, t.amount))
        for sent in by_pair.values():
            for at, _ in sent:
                window = sum(a for t, a in sent if at - CAP_WINDOW < t <= at)  # type: ignore[operator]
                assert window <= DAILY_CAP


Ledger.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
TestLedger = Ledger.TestCase
