"""Balance and withdrawals (spec §2 Balance and Withdrawal, §3, §4, §8).

The withdrawable balance of an organization is its paid production earnings less every
withdrawal that has not been rejected. A withdrawal is quoted by ``commerce.fees``, checked
against the organization, its balance and the rolling 24-hour cap, and then lives on the
sandbox clock through the declared ``LIFECYCLE``; every future move is a scheduler entry.
Everything runs under the sandbox lock, so parallel requests can neither overdraw the balance
nor create two withdrawals under one idempotency key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from typing_extensions import TypedDict

from svc_sandbox.commerce.fees import Quote, quote_withdrawal
from svc_sandbox.commerce.orders import OrderService
from svc_sandbox.commerce.schemas import WithdrawalCreateBody
from svc_sandbox.core.clock import isoformat, seconds_delay
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import (
    BeyondCap,
    NotFound,
    PaymentRequired,
    RateLimited,
    Unprocessable,
    ValidationFailed,
    found,
)
from svc_sandbox.core.ids import OBJECT_ID_SHAPE, is_object_id
from svc_sandbox.core.lifecycle import NEW, Lifecycle, Transition
from svc_sandbox.core.locking import locked
from svc_sandbox.core.ratelimit import rolling_cap_wait
from svc_sandbox.core.records import from_json, snapshot
from svc_sandbox.core.validation import optional_one_of
from svc_sandbox.orgs.organizations import (
    Environment,
    KycStatus,
    Organization,
    OrganizationService,
)

#: Spec §8: up to this amount a withdrawal pays out automatically; above it, manual review.
REVIEW_THRESHOLD = 1_000_000
#: Spec §8: at most this much per organization per rolling 24 hours.
DAILY_CAP = 10_000_000
CAP_WINDOW = timedelta(hours=24)
#: Longest Idempotency-Key accepted (see docs/spec-gaps.md).
MAX_KEY_LENGTH = 255
_KEY_SHAPE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")

STATUSES = ("pending", "reviewing", "approved", "rejected", "processing", "completed")

#: The declared life of a withdrawal (spec §3 says "not shown"; see docs/spec-gaps.md).
LIFECYCLE = Lifecycle(
    "withdrawal",
    [
        Transition(NEW, "pending", f"POST /withdrawals, amount <= {REVIEW_THRESHOLD}"),
        Transition(NEW, "reviewing", f"POST /withdrawals, amount > {REVIEW_THRESHOLD}"),
        Transition("pending", "processing", "payout_pending_seconds elapse"),
        Transition("reviewing", "approved", "control plane approves"),
        Transition("reviewing", "rejected", "control plane rejects; the amount returns"),
        Transition("approved", "processing", "payout_pending_seconds elapse after approval"),
        Transition("processing", "completed", "payout_processing_seconds elapse"),
    ],
)


#: The scheduler kinds of a withdrawal's two steps.
PROCESS = "withdrawal.process"
COMPLETE = "withdrawal.complete"


class WithdrawalPayload(TypedDict):
    """What a withdrawal.process or withdrawal.complete scheduler entry carries."""

    withdrawalId: str


@dataclass
class Withdrawal:
    id: str
    org_id: str
    status: str
    amount: int
    fee_amount: int
    tax_amount: int
    net_amount: int
    gateway: str
    account: str
    created_at: datetime
    updated_at: datetime
    idempotency_key: str | None = None
    note: str | None = None
    #: Withdrawals pay out real earnings, so they only exist in production.
    environment: str = Environment.PRODUCTION.value
    seq: int = 0

    def to_public(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "_id": self.id,
            "status": self.status,
            "amount": self.amount,
            "feeAmount": self.fee_amount,
            "taxAmount": self.tax_amount,
            "netAmount": self.net_amount,
            "currency": "ETB",
            "gateway": self.gateway,
            "account": self.account,
            "createdAt": isoformat(self.created_at),
        }
        if self.note is not None:
            body["note"] = self.note
        if self.idempotency_key is not None:
            body["idempotencyKey"] = self.idempotency_key
        return body


@dataclass
class IdempotencyRecord:
    """A key an organization used, the request it came with and the withdrawal it made."""

    org_id: str
    key: str
    request: dict[str, Any]
    withdrawal_id: str
    created_at: datetime


@dataclass(frozen=True)
class Balance:
    eligible: bool
    balance_minor: int

    def to_public(self) -> dict[str, Any]:
        return {
            "success": True,
            "eligible": self.eligible,
            "balanceMinor": self.balance_minor,
            "currency": "ETB",
        }


@dataclass(frozen=True)
class Created:
    """The answer to POST /withdrawals: a new withdrawal, or the original one of a repeat."""

    withdrawal: Withdrawal
    replayed: bool


def check_idempotency_key(key: str | None) -> str | None:
    """None (no header) or a key of 1 to 255 printable ASCII characters; else 400."""
    if key is None:
        return None
    if not 1 <= len(key) <= MAX_KEY_LENGTH or not _KEY_SHAPE.fullmatch(key):
        raise ValidationFailed(
            f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} printable ASCII characters"
        )
    return key


def check_withdrawal_id(withdrawal_id: str) -> str:
    if not is_object_id(withdrawal_id):
        raise ValidationFailed(f"id must be {OBJECT_ID_SHAPE}")
    return withdrawal_id


def check_status(status: str | None) -> str | None:
    return optional_one_of(status, STATUSES, "status")


class PayoutService(Service):
    def __init__(
        self,
        ctx: ServiceContext,
        orgs: OrganizationService,
        orders: OrderService,
    ) -> None:
        super().__init__(ctx)
        self.orgs = orgs
        self.orders = orders
        self.withdrawals: dict[str, Withdrawal] = {}
        self.keys: dict[tuple[str, str], IdempotencyRecord] = {}
        #: Organizations whose owner's wallet cannot cover a payout now (402 switch).
        self.owner_wallet_short: set[str] = set()
        self._seq = 0
        self.scheduler.register(PROCESS, self._on_process, WithdrawalPayload)
        self.scheduler.register(COMPLETE, self._on_complete, WithdrawalPayload)

    # --- balance and quotes -----------------------------------------------------------------

    def quote_for(self, org: Organization, amount: int) -> Quote:
        """The organization's quote: its custom fee rate or the platform's, the platform's tax."""
        settings = self.settings
        fee_rate = org.custom_fee_rate
        return quote_withdrawal(
            amount,
            settings.withdrawal_fee_rate if fee_rate is None else fee_rate,
            settings.withdrawal_tax_rate,
            tax_base=settings.withdrawal_tax_base,
            rounding=settings.withdrawal_rounding,
        )

    @locked
    def withdrawable(self, org_id: str) -> int:
        """Paid production earnings less every withdrawal that was not rejected."""
        earned = self.orders.paid_total(org_id, Environment.PRODUCTION.value)
        withdrawn = sum(
            w.amount
            for w in self.withdrawals.values()
            if w.org_id == org_id and w.status != "rejected"
        )
        return earned - withdrawn

    @locked
    def balance(self, org_id: str) -> Balance:
        org = self.orgs.get(org_id)
        if org.environment is not Environment.PRODUCTION:
            return Balance(eligible=False, balance_minor=0)
        eligible = org.developer_mode and org.kyc is KycStatus.APPROVED
        return Balance(eligible=eligible, balance_minor=self.withdrawable(org_id))

    # --- create -----------------------------------------------------------------------------

    @locked
    def create(
        self, org_id: str, body: WithdrawalCreateBody, idempotency_key: str | None = None
    ) -> Created:
        """Checks in the order of docs/spec-gaps.md, then records and schedules a withdrawal."""
        key = check_idempotency_key(idempotency_key)
        request = body.model_dump()
        if key is not None:
            original = self._replay(org_id, key, request)
            if original is not None:
                return Created(original, replayed=True)
        org = self.orgs.get(org_id)
        self._check_organization(org)
        available = self.withdrawable(org_id)
        if body.amount > available:
            raise ValidationFailed(
                f"amount {body.amount} is more than the withdrawable balance {available}"
            )
        self._check_daily_cap(org_id, body.amount)
        if org_id in self.owner_wallet_short:
            raise PaymentRequired("The owner's wallet cannot cover this payout now")
        withdrawal = self._record(org, body, key)
        if key is not None:
            self.keys[(org_id, key)] = IdempotencyRecord(
                org_id, key, request, withdrawal.id, withdrawal.created_at
            )
        return Created(withdrawal, replayed=False)

    def _replay(self, org_id: str, key: str, request: dict[str, Any]) -> Withdrawal | None:
        """The withdrawal an organization's known key made (spec §4: 200, nothing created).

        None when the key is new: never used, its withdrawal is gone (an import left it
        dangling), or it is out of the organization's current environment (a sandbox token
        sees no production withdrawal, so it is answered like any sandbox request: 400).
        """
        self._forget_expired_keys()
        record = self.keys.get((org_id, key))
        original = None if record is None else self.withdrawals.get(record.withdrawal_id)
        if record is None or original is None:
            return None
        if original.environment != self.orgs.get(org_id).environment.value:
            return None
        if record.request != request and self.settings.withdrawal_key_reuse == "reject":
            raise Unprocessable(
                "Idempotency-Key was already used with a different request body: "
                "send a new key for a new withdrawal"
            )
        return original

    def _forget_expired_keys(self) -> None:
        """With ``idempotency_retention_hours`` above 0, keys older than that are free again."""
        hours = self.settings.idempotency_retention_hours
        if not hours:
            return  # 0: a key is kept as long as its withdrawal
        cutoff = self.clock.now() - timedelta(hours=hours)
        for stale in [k for k, r in self.keys.items() if r.created_at <= cutoff]:
            del self.keys[stale]

    @staticmethod
    def _check_organization(org: Organization) -> None:
        if org.environment is not Environment.PRODUCTION:
            raise ValidationFailed(
                "Withdrawals need a production organization: this organization is in sandbox"
            )
        if not org.developer_mode:
            raise ValidationFailed("Developer Mode is off: turn it on to withdraw")
        if org.kyc is not KycStatus.APPROVED:
            raise ValidationFailed(f"KYC is not approved (status {org.kyc.value})")

    def _check_daily_cap(self, org_id: str, amount: int) -> None:
        if amount > DAILY_CAP:
            # Still §8's 429, but no Retry-After: waiting would only be refused again.
            raise BeyondCap(
                f"Daily payout limit: this amount alone passes the cap of {DAILY_CAP} "
                "(100,000.00 ETB) per rolling 24 hours, so no wait makes it fit: withdraw at "
                f"most {DAILY_CAP} at a time"
            )
        now = self.clock.now()
        wait = rolling_cap_wait(
            (
                (w.created_at, w.amount)
                for w in self.withdrawals.values()
                if w.org_id == org_id and w.status != "rejected"
            ),
            amount,
            DAILY_CAP,
            CAP_WINDOW,
            now,
        )
        if wait is not None:
            raise RateLimited(
                f"Daily payout limit: withdrawals of this organization may not pass {DAILY_CAP} "
                "(100,000.00 ETB) per rolling 24 hours",
                retry_after=wait,
            )

    def _record(self, org: Organization, body: WithdrawalCreateBody, key: str | None) -> Withdrawal:
        quote = self.quote_for(org, body.amount)
        status = "pending" if body.amount <= REVIEW_THRESHOLD else "reviewing"
        LIFECYCLE.check(NEW, status)
        now = self.clock.now()
        self._seq += 1
        withdrawal = Withdrawal(
            id=self.ids.object_id(self.withdrawals),
            org_id=org.id,
            status=status,
            amount=quote.amount,
            fee_amount=quote.fee_amount,
            tax_amount=quote.tax_amount,
            net_amount=quote.net_amount,
            gateway=body.gateway,
            account=body.account,
            created_at=now,
            updated_at=now,
            idempotency_key=key,
            seq=self._seq,
        )
        self.withdrawals[withdrawal.id] = withdrawal
        if status == "pending":
            self._schedule(withdrawal, PROCESS, self.settings.payout_pending_seconds)
        return withdrawal

    # --- life -------------------------------------------------------------------------------

    def _schedule(self, withdrawal: Withdrawal, kind: str, seconds: float) -> None:
        due = self.clock.now() + seconds_delay(seconds)
        self.scheduler.schedule(due, kind, {"withdrawalId": withdrawal.id})

    def _move(self, withdrawal: Withdrawal, target: str, note: str | None = None) -> None:
        LIFECYCLE.move(withdrawal, target)
        withdrawal.updated_at = self.clock.now()
        if note is not None:
            withdrawal.note = note

    @locked
    def _on_process(self, payload: dict[str, Any]) -> None:
        withdrawal = self.withdrawals.get(payload["withdrawalId"])
        if withdrawal is None or withdrawal.status not in ("pending", "approved"):
            return
        self._move(withdrawal, "processing")
        self._schedule(withdrawal, COMPLETE, self.settings.payout_processing_seconds)

    @locked
    def _on_complete(self, payload: dict[str, Any]) -> None:
        withdrawal = self.withdrawals.get(payload["withdrawalId"])
        if withdrawal is None or withdrawal.status != "processing":
            return
        self._move(withdrawal, "completed")

    @locked
    def approve(self, withdrawal_id: str, note: str | None = None) -> Withdrawal:
        """Control plane: a withdrawal in review goes on to be paid out."""
        withdrawal = self.find(withdrawal_id)
        self._move(withdrawal, "approved", note)
        self._schedule(withdrawal, PROCESS, self.settings.payout_pending_seconds)
        return withdrawal

    @locked
    def reject(self, withdrawal_id: str, note: str | None = None) -> Withdrawal:
        """Control plane: a withdrawal in review is refused; its amount returns to the balance."""
        withdrawal = self.find(withdrawal_id)
        self._move(withdrawal, "rejected", note if note is not None else "Rejected in review")
        return withdrawal

    @locked
    def set_owner_wallet(self, org_id: str, can_cover: bool) -> bool:
        """Control plane: whether the owner's wallet can cover payouts (False: 402)."""
        self.orgs.get(org_id)
        if can_cover:
            self.owner_wallet_short.discard(org_id)
        else:
            self.owner_wallet_short.add(org_id)
        return can_cover

    @locked
    def owner_wallet_can_cover(self, org_id: str) -> bool:
        self.orgs.get(org_id)
        return org_id not in self.owner_wallet_short

    # --- reading ----------------------------------------------------------------------------

    @locked
    def find(self, withdrawal_id: str) -> Withdrawal:
        """Any organization's withdrawal (the control plane's view)."""
        return found(
            self.withdrawals.get(check_withdrawal_id(withdrawal_id)), "Withdrawal not found"
        )

    @locked
    def get(self, org_id: str, withdrawal_id: str, environment: str | None = None) -> Withdrawal:
        """A withdrawal of ``org_id`` (in ``environment``, when given); another's is absent."""
        withdrawal = self.find(withdrawal_id)
        if withdrawal.org_id != org_id or environment not in (None, withdrawal.environment):
            raise NotFound("Withdrawal not found")
        return withdrawal

    @locked
    def list_for(
        self, org_id: str | None, status: str | None = None, environment: str | None = None
    ) -> list[Withdrawal]:
        """Newest first; ``org_id`` None lists every organization's (control plane)."""
        check_status(status)
        found = [
            w
            for w in self.withdrawals.values()
            if (org_id is None or w.org_id == org_id)
            and (status is None or w.status == status)
            and (environment is None or w.environment == environment)
        ]
        return sorted(found, key=lambda w: (w.created_at, w.seq), reverse=True)

    # --- state ------------------------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        return {
            "seq": self._seq,
            "withdrawals": [snapshot(w) for w in self.withdrawals.values()],
            "keys": [snapshot(r) for r in self.keys.values()],
            "ownerWalletShort": sorted(self.owner_wallet_short),
        }

    def restore(self, data: dict[str, Any]) -> None:
        self._seq = data["seq"]
        self.withdrawals = {w["id"]: from_json(Withdrawal, w) for w in data["withdrawals"]}
        records = [from_json(IdempotencyRecord, r) for r in data["keys"]]
        self.keys = {(r.org_id, r.key): r for r in records}
        self.owner_wallet_short = set(data["ownerWalletShort"])
