"""Checks of a state document (``PUT /_sandbox/state``) that need records of several kinds at
once, run once its shape (state_format.py) and its references (state_references.py) hold: the
webhook attempts still to make against their deliveries and the retry schedule, and the wallet
ledger against the wallet's rules. A document that fails is refused whole, a 400 naming the
path."""

from __future__ import annotations

from typing import Any

from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.records import from_json
from svc_sandbox.core.validation import shown
from svc_sandbox.wallet.ledger import LedgerEntry, Transfer, ledger_problem
from svc_sandbox.webhooks.delivery import ATTEMPT_KIND


def check_attempts(document: dict[str, Any], max_attempts: int) -> None:
    """The webhook attempts still to make (``webhookDeliveries.due`` and the scheduler's
    ``webhook.attempt`` entries), as the retry schedule makes them: each numbered from 1 to
    ``max_attempts`` (the first and one per retry delay), the next of its pending delivery
    (its ``attempts`` + 1), and each (delivery, number) once among both lists (else it is
    POSTed twice, and an attempt 0 retried after the schedule's last delay); and every pending
    delivery's next attempt among them."""
    deliveries = {d["id"]: d for d in document["services"]["webhookDeliveries"]["deliveries"]}
    outstanding = [
        (f"services.webhookDeliveries.due[{i}].number", due["delivery_id"], due["number"])
        for i, due in enumerate(document["services"]["webhookDeliveries"]["due"])
    ] + [
        (
            f"scheduler.entries[{i}].payload.attempt",
            e["payload"]["deliveryId"],
            e["payload"]["attempt"],
        )
        for i, e in enumerate(document["scheduler"]["entries"])
        if e["kind"] == ATTEMPT_KIND
    ]
    seen: dict[tuple[str, int], str] = {}
    for where, delivery_id, number in outstanding:
        if not 1 <= number <= max_attempts:
            raise ValidationFailed(
                f"state document: {where} is {number}; an attempt number is from 1 to "
                f"{max_attempts} (the first attempt and one per retry delay)"
            )
        delivery = deliveries.get(delivery_id)
        if delivery is not None and delivery.get("status", "pending") == "pending":
            made = delivery.get("attempts", 0)
            if number != made + 1:
                raise ValidationFailed(
                    f"state document: {where} is {number}, but delivery {shown(delivery_id)} "
                    f"has made {made} attempts (its attempts): its next is number {made + 1}"
                )
        if (delivery_id, number) in seen:
            raise ValidationFailed(
                f"state document: {where} repeats delivery {shown(delivery_id)}, attempt "
                f"{number} (of {seen[delivery_id, number]}; each attempt is due or scheduled once)"
            )
        seen[delivery_id, number] = where
    for index, delivery in enumerate(document["services"]["webhookDeliveries"]["deliveries"]):
        following = delivery.get("attempts", 0) + 1
        if (
            delivery.get("status", "pending") == "pending"
            and (delivery["id"], following) not in seen
        ):
            # An export always holds it (one being POSTed as due): without it the imported
            # delivery stayed pending forever, nothing due and nothing scheduled.
            raise ValidationFailed(
                f"state document: services.webhookDeliveries.deliveries[{index}] is pending, "
                f"but its next attempt (number {following}) is neither due "
                "(webhookDeliveries.due) nor scheduled (a webhook.attempt scheduler entry)"
            )


def check_ledger(document: dict[str, Any]) -> None:
    """Raises ValidationFailed naming the first path of a ``document`` (valid against the
    format, its references checked) whose wallet records are no ledger the wallet's operations
    could write: wallet/ledger.py states the rules (signs by kind, a transfer's two entries,
    transfer bounds and status, no balance below 0 or past MAX_BALANCE)."""
    wallets = document["services"]["wallets"]
    problem = ledger_problem(
        [from_json(LedgerEntry, e) for e in wallets["entries"]],
        [from_json(Transfer, t) for t in wallets["transfers"]],
    )
    if problem:
        raise ValidationFailed(f"state document: services.wallets.{problem}")
