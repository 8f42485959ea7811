"""Wallets, their ledger and transfers (spec §2 "Wallet balance" and "Transfer", §4, §8).

Every movement of money is a ledger entry; a wallet's balances are derived from its entries
(kept as running sums, rebuilt from the entries on restore, so a balance can always be
explained). A transfer writes two entries that cancel out, so transfers never change the sum
of all wallets. Everything runs under the sandbox lock: parallel sends cannot overdraw a wallet,
pass the daily cap or move money twice under one idempotency key.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import ValidationFailed, found
from svc_sandbox.core.locking import locked
from svc_sandbox.core.ratelimit import rolling_cap_wait
from svc_sandbox.core.records import from_json, to_json
from svc_sandbox.core.validation import shown
from svc_sandbox.wallet.errors import WalletError
from svc_sandbox.wallet.send_input import MAX_AMOUNT, MIN_AMOUNT, SendRequest

CURRENCY = "ETB"
#: Spec §8: 50,000.00 ETB per (user, app) per rolling 24 hours of sandbox time.
DAILY_CAP = 5_000_000
CAP_WINDOW = timedelta(hours=24)
#: Largest balance the control plane may fund or set: a fund or a set-balance that would leave
#: ``availableMinor`` above it is refused (keeps sums far from any float range).
MAX_CONTROL_AMOUNT = 10**13
#: Largest ``availableMinor`` or ``totalMinor`` a wallet may ever hold: 2^53 - 1, the largest
#: integer a client reading JSON numbers as doubles (JavaScript) gets exactly. Received
#: transfers are not capped (a send is never refused for the recipient's balance); under the
#: daily cap they would need about 10^9 transfers to get from MAX_CONTROL_AMOUNT to here.
MAX_BALANCE = 2**53 - 1

#: Ledger entry kinds: control-plane money in or out, and the two sides of a transfer.
FUNDING = "funding"
ADJUSTMENT = "adjustment"
TRANSFER_OUT = "transfer_out"
TRANSFER_IN = "transfer_in"
KINDS = (FUNDING, ADJUSTMENT, TRANSFER_OUT, TRANSFER_IN)
#: Spec §2 "Transfer": transfers settle at once, so ``completed`` is the only status.
TRANSFER_STATUSES = ("completed",)
#: The sign of each kind's amount (credits positive, debits negative); an adjustment goes
#: either way but is never 0 (a set-balance that changes nothing writes no entry).
_SIGNS = {FUNDING: 1, ADJUSTMENT: 0, TRANSFER_OUT: -1, TRANSFER_IN: 1}
_LEGS = (TRANSFER_OUT, TRANSFER_IN)


# --- the ledger's rules -------------------------------------------------------------------
# Stated once, here: live operations ask them before writing, a state import asks them of
# every record (ledger_problem), so an import holds only a ledger the operations could write.


def entry_problem(kind: str, amount: int, transfer_id: str | None) -> str | None:
    """What keeps an entry of ``kind`` from being one the ledger writes (None: nothing), as
    ``<field> <problem>``. A transfer's two entries are checked against it by ledger_problem."""
    sign = _SIGNS[kind]
    if sign > 0 and amount <= 0:
        return f"amount must be positive for a {kind} entry (credits are positive)"
    if sign < 0 and amount >= 0:
        return f"amount must be negative for a {kind} entry (debits are negative)"
    if sign == 0 and amount == 0:
        return f"amount must not be 0 for an {kind} entry"
    if kind == FUNDING and amount > MAX_CONTROL_AMOUNT:
        return f"amount must be at most {MAX_CONTROL_AMOUNT} for a funding entry"
    if (kind in _LEGS) != (transfer_id is not None):
        return (
            f"transfer_id must name the transfer of a {kind} entry"
            if kind in _LEGS
            else f"transfer_id must be null for a {kind} entry"
        )
    return None


def balance_problem(balance: Balance) -> str | None:
    """What keeps a wallet from holding ``balance`` (None: nothing)."""
    if balance.available < 0:
        return f"takes availableMinor to {balance.available} (a balance is never below 0)"
    if balance.available > MAX_BALANCE:
        return f"takes availableMinor to {balance.available}, past {MAX_BALANCE}"
    if balance.total > MAX_BALANCE:
        return f"takes totalMinor to {balance.total}, past {MAX_BALANCE}"
    return None


def transfer_problem(transfer: Transfer) -> str | None:
    """What keeps ``transfer`` from being one a send makes (None: nothing), as ``<field>
    <problem>``. Its status is checked by the import's format (TRANSFER_STATUSES)."""
    if not MIN_AMOUNT <= transfer.amount <= MAX_AMOUNT:
        return f"amount must be from {MIN_AMOUNT} to {MAX_AMOUNT} (spec §8)"
    if transfer.recipient_id == transfer.sender_id:
        return "recipient_id must not be the sender (a transfer never pays its sender)"
    return None


def ledger_problem(entries: list[LedgerEntry], transfers: list[Transfer]) -> str | None:
    """The first way these records break the ledger's rules (None: none), as a path inside
    the wallet state (``entries[3].amount ...``): each record by itself, each transfer's two
    entries (``transfer_out`` of its sender, ``transfer_in`` of its recipient, -/+ its
    amount), and every wallet's balance after each entry, in order. An entry naming a transfer
    the records lack is left to the import's reference check (state_references.py)."""
    by_id = {t.id: t for t in transfers}
    for index, transfer in enumerate(transfers):
        problem = transfer_problem(transfer)
        if problem:
            return f"transfers[{index}].{problem}"
    legs: dict[tuple[str, str], int] = {}  # (transfer id, kind) -> index of its entry
    balances: dict[str, Balance] = {}
    for index, entry in enumerate(entries):
        problem = entry_problem(entry.kind, entry.amount, entry.transfer_id)
        if problem:
            return f"entries[{index}].{problem}"
        paid = by_id.get(entry.transfer_id or "")
        if paid is not None:
            problem = _leg_problem(entry, paid, legs.get((paid.id, entry.kind)))
            if problem:
                return f"entries[{index}].{problem}"
            legs[(paid.id, entry.kind)] = index
        balance = balances.setdefault(entry.user_id, Balance())
        balance.apply(entry.amount)
        problem = balance_problem(balance)
        if problem:
            return f"entries[{index}].amount {problem} for user {entry.user_id}"
    for index, transfer in enumerate(transfers):
        for kind in _LEGS:
            if (transfer.id, kind) not in legs:
                return f"transfers[{index}].id {shown(transfer.id)} has no {kind} entry"
    return None


def _leg_problem(entry: LedgerEntry, transfer: Transfer, earlier: int | None) -> str | None:
    if earlier is not None:
        return (
            f"transfer_id {shown(transfer.id)} already has its {entry.kind} entry "
            f"(entries[{earlier}])"
        )
    out = entry.kind == TRANSFER_OUT
    user_id, amount = (
        (transfer.sender_id, -transfer.amount) if out else (transfer.recipient_id, transfer.amount)
    )
    if entry.user_id != user_id:
        side = "sender" if out else "recipient"
        return f"user_id must be {shown(user_id)}, the {side} of transfer {shown(transfer.id)}"
    if entry.amount != amount:
        return f"amount must be {amount}, as transfer {shown(transfer.id)} moved {transfer.amount}"
    return None


class WalletUser(Protocol):
    """What the wallet needs of an identity user."""

    @property
    def id(self) -> str: ...
    @property
    def handle(self) -> str: ...
    @property
    def kyc(self) -> Any: ...


class UserDirectory(Protocol):
    def find(self, user_id: str) -> Any: ...
    def by_handle(self, handle: str) -> Any: ...


@dataclass
class LedgerEntry:
    id: str
    user_id: str
    #: Signed santim: credits are positive, debits negative.
    amount: int
    kind: str
    created_at: datetime
    seq: int
    transfer_id: str | None = None
    note: str | None = None

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "userId": self.user_id,
            "amountMinor": self.amount,
            "kind": self.kind,
            "transferId": self.transfer_id,
            "note": self.note,
            "createdAt": isoformat(self.created_at),
        }


@dataclass
class Transfer:
    id: str
    sender_id: str
    recipient_id: str
    client_id: str
    amount: int
    idempotency_key: str
    #: The body the key came with (recipient as sent, amount), to compare repeats.
    request: dict[str, Any]
    created_at: datetime
    seq: int
    status: str = "completed"

    def to_public(self) -> dict[str, Any]:
        """Spec §2 "Transfer"."""
        return {
            "id": self.id,
            "amountMinor": self.amount,
            "currency": CURRENCY,
            "recipientUserId": self.recipient_id,
            "status": self.status,
            "createdAt": isoformat(self.created_at),
        }

    def to_control(self) -> dict[str, Any]:
        """The public shape plus what only the control plane shows."""
        return {
            **self.to_public(),
            "senderUserId": self.sender_id,
            "clientId": self.client_id,
            "idempotencyKey": self.idempotency_key,
        }


@dataclass
class Balance:
    """Derived from the entries: ``available`` their sum, ``total`` the sum of credits."""

    available: int = 0
    total: int = 0

    def apply(self, amount: int) -> None:
        self.available += amount
        if amount > 0:
            self.total += amount

    def to_public(self) -> dict[str, Any]:
        """Spec §2 "Wallet balance"."""
        return {"currency": CURRENCY, "availableMinor": self.available, "totalMinor": self.total}


@dataclass
class CapWindow:
    """One (sender, app)'s transfers, oldest first, and the sum of those inside the cap window
    as of the last ``trim``: the cap's check is one addition; the wait is only worked out when
    the cap is passed. Nothing is dropped: the clock may be set back, and a transfer that left
    the window then counts again (as it does for an import of the same state)."""

    sent: list[tuple[datetime, int]] = field(default_factory=list)
    #: ``sent[start:]`` are inside the window; ``total`` is their sum.
    start: int = 0
    total: int = 0

    def add(self, at: datetime, amount: int) -> None:
        index = bisect.bisect_right(self.sent, (at, amount))
        self.sent.insert(index, (at, amount))
        if index < self.start:
            self.start += 1  # sent before the window of the last trim: the next trim decides
        else:
            self.total += amount

    def trim(self, now: datetime) -> None:
        """Moves the window's start to ``now - CAP_WINDOW`` (forward, or back after the clock
        was set back); what was sent at or before it is outside."""
        cut = bisect.bisect_right(self.sent, now - CAP_WINDOW, key=lambda entry: entry[0])
        if cut > self.start:
            self.total -= sum(amount for _, amount in self.sent[self.start : cut])
        elif cut < self.start:
            self.total += sum(amount for _, amount in self.sent[cut : self.start])
        self.start = cut

    def inside(self) -> list[tuple[datetime, int]]:
        return self.sent[self.start :]


@dataclass(frozen=True)
class Sent:
    """The answer to a send: a new transfer, or the original one of a repeated key."""

    transfer: Transfer
    deduped: bool


class WalletService(Service):
    def __init__(self, ctx: ServiceContext, users: UserDirectory) -> None:
        super().__init__(ctx)
        self.users = users
        self.entries: list[LedgerEntry] = []
        #: The entries' ids, so a new entry never takes one (core/ids.py draws past them).
        self._entry_ids: set[str] = set()
        self.transfers: dict[str, Transfer] = {}
        #: (sender, client_id, key) -> transfer id: the scope of an idempotency key.
        self.keys: dict[tuple[str, str, str], str] = {}
        self._balances: dict[str, Balance] = {}
        #: (sender, client_id) -> its transfers of the last CAP_WINDOW (derived; the cap's index).
        self._recent: dict[tuple[str, str], CapWindow] = {}
        self._seq = 0

    # --- reading ----------------------------------------------------------------------------

    @locked
    def user(self, ref: str) -> WalletUser:
        """A user by id or handle (the control plane's ``<user>``), or 404."""
        user: WalletUser = found(
            self.users.find(ref) or self.users.by_handle(ref), "User not found"
        )
        return user

    @locked
    def balance(self, user_id: str) -> Balance:
        """The user's balances (a copy); a user who never moved money has zeros."""
        found = self._balances.get(user_id, Balance())
        return Balance(found.available, found.total)

    @locked
    def ledger(self, user_id: str) -> list[LedgerEntry]:
        """The user's entries, oldest first."""
        return [e for e in self.entries if e.user_id == user_id]

    @locked
    def transfers_of(self, user_id: str) -> list[Transfer]:
        """Transfers the user sent or received, oldest first."""
        return [t for t in self.transfers.values() if user_id in (t.sender_id, t.recipient_id)]

    @locked
    def sum_of_wallets(self) -> int:
        return sum(b.available for b in self._balances.values())

    # --- control plane ----------------------------------------------------------------------

    @locked
    def fund(self, user_id: str, amount: int, note: str | None = None) -> Balance:
        """Adds money to a user's wallet (it counts as received in ``totalMinor``), as long as
        ``availableMinor`` stays at most MAX_CONTROL_AMOUNT."""
        if entry_problem(FUNDING, amount, None):
            raise ValidationFailed(f"amountMinor must be an integer from 1 to {MAX_CONTROL_AMOUNT}")
        self._control_entry(user_id, amount, FUNDING, "amountMinor", note)
        return self.balance(user_id)

    @locked
    def set_available(self, user_id: str, available: int, note: str | None = None) -> Balance:
        """Makes ``availableMinor`` exactly ``available`` with one adjustment entry."""
        if not 0 <= available <= MAX_CONTROL_AMOUNT:
            raise ValidationFailed(
                f"availableMinor must be an integer from 0 to {MAX_CONTROL_AMOUNT}"
            )
        difference = available - self._balances.get(user_id, Balance()).available
        if difference:
            self._control_entry(user_id, difference, ADJUSTMENT, "availableMinor", note)
        return self.balance(user_id)

    def _control_entry(
        self, user_id: str, amount: int, kind: str, field: str, note: str | None
    ) -> None:
        """Writes a control-plane entry, or a 400 naming ``field`` when the balance it leaves
        breaks the ledger's rules or passes what the control plane may fund (state unchanged)."""
        before = self._balances.get(user_id, Balance())
        after = Balance(before.available, before.total)
        after.apply(amount)
        problem = balance_problem(after)
        if problem is None and after.available > MAX_CONTROL_AMOUNT:
            problem = (
                f"takes availableMinor to {after.available}, past {MAX_CONTROL_AMOUNT}, the "
                f"largest balance the control plane may fund (this wallet holds {before.available})"
            )
        if problem:
            raise ValidationFailed(f"{field} {problem}")
        self._entry(user_id, amount, kind, note=note)

    # --- send -------------------------------------------------------------------------------

    @locked
    def send(self, sender: WalletUser, client_id: str, request: SendRequest) -> Sent:
        """Spec §4 Send, its checks in the order of docs/spec-gaps.md (wallet section)."""
        original = self._repeat(sender.id, client_id, request)
        if original is not None:
            return Sent(original, deduped=True)
        if sender.kyc != "approved":
            raise WalletError(
                403, "kyc_required", "The sending user has no approved KYC: they cannot send"
            )
        recipient = self._recipient(request)
        if recipient.id == sender.id:
            raise WalletError(400, "self_transfer", "The recipient is the sender")
        available = self._balances.get(sender.id, Balance()).available
        if request.amount_minor > available:
            raise WalletError(
                402,
                "insufficient_funds",
                f"The sender's available balance ({available}) does not cover "
                f"{request.amount_minor}",
            )
        self._check_daily_cap(sender.id, client_id, request.amount_minor)
        return Sent(self._record(sender.id, recipient.id, client_id, request), deduped=False)

    def _repeat(self, sender_id: str, client_id: str, request: SendRequest) -> Transfer | None:
        transfer_id = self.keys.get((sender_id, client_id, request.idempotency_key))
        if transfer_id is None:
            return None
        original = self.transfers[transfer_id]
        if original.request != request.fingerprint() and self.settings.wallet_key_reuse == "reject":
            raise WalletError(
                422,
                "idempotency_key_reused",
                "idempotencyKey was already used with a different body: send a new key for a "
                "new transfer",
            )
        return original

    def _recipient(self, request: SendRequest) -> WalletUser:
        if request.recipient_user_id is not None:
            user = self.users.find(request.recipient_user_id)
            field, value = "recipientUserId", request.recipient_user_id
        else:
            assert request.recipient_handle is not None
            user = self.users.by_handle(request.recipient_handle)
            field, value = "recipientHandle", request.recipient_handle
        if user is None:
            raise WalletError(404, "recipient_not_found", f"No user matches {field} {value!r}")
        recipient: WalletUser = user
        return recipient

    def _check_daily_cap(self, sender_id: str, client_id: str, amount: int) -> None:
        now = self.clock.now()
        window = self._recent.setdefault((sender_id, client_id), CapWindow())
        window.trim(now)
        if window.total + amount <= DAILY_CAP:
            return
        wait = rolling_cap_wait(window.inside(), amount, DAILY_CAP, CAP_WINDOW, now)
        if wait is not None:
            raise WalletError(
                429,
                "daily_cap_exceeded",
                f"This user may send at most {DAILY_CAP} (50,000.00 ETB) through this app per "
                "rolling 24 hours",
                {"Retry-After": str(wait)},
            )

    def _record(
        self, sender_id: str, recipient_id: str, client_id: str, request: SendRequest
    ) -> Transfer:
        self._seq += 1
        transfer = Transfer(
            id=self.ids.object_id(self.transfers),
            sender_id=sender_id,
            recipient_id=recipient_id,
            client_id=client_id,
            amount=request.amount_minor,
            idempotency_key=request.idempotency_key,
            request=request.fingerprint(),
            created_at=self.clock.now(),
            seq=self._seq,
        )
        self._index(transfer)
        self._entry(sender_id, -transfer.amount, TRANSFER_OUT, transfer.id)
        self._entry(recipient_id, transfer.amount, TRANSFER_IN, transfer.id)
        return transfer

    def _entry(
        self,
        user_id: str,
        amount: int,
        kind: str,
        transfer_id: str | None = None,
        note: str | None = None,
    ) -> LedgerEntry:
        self._seq += 1
        entry = LedgerEntry(
            self.ids.object_id(self._entry_ids),
            user_id,
            amount,
            kind,
            self.clock.now(),
            self._seq,
            transfer_id,
            note,
        )
        self.entries.append(entry)
        self._entry_ids.add(entry.id)
        self._balances.setdefault(user_id, Balance()).apply(amount)
        return entry

    def _index(self, transfer: Transfer) -> None:
        self.transfers[transfer.id] = transfer
        self.keys[(transfer.sender_id, transfer.client_id, transfer.idempotency_key)] = transfer.id
        window = self._recent.setdefault((transfer.sender_id, transfer.client_id), CapWindow())
        window.add(transfer.created_at, transfer.amount)

    # --- state ------------------------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        return {
            "seq": self._seq,
            "entries": [to_json(e) for e in self.entries],
            "transfers": [to_json(t) for t in self.transfers.values()],
        }

    def restore(self, data: dict[str, Any]) -> None:
        self._seq = data["seq"]
        self.entries = [from_json(LedgerEntry, e) for e in data["entries"]]
        self._entry_ids = {e.id for e in self.entries}
        # Keys, the cap's index and balances are derived: every transfer holds its key, every
        # entry its amount.
        self.transfers, self.keys, self._recent = {}, {}, {}
        for transfer in data["transfers"]:
            self._index(from_json(Transfer, transfer))
        self._balances = {}
        for entry in self.entries:
            self._balances.setdefault(entry.user_id, Balance()).apply(entry.amount)
