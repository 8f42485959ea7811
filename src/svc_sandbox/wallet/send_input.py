"""The send body's input rules (spec §4 "Wallet API", §7, §8), in the order docs/spec-gaps.md
lists: the body's shape, then the recipient, the amount, the idempotency key."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from svc_sandbox.wallet.errors import WalletError, bad_request

#: Spec §8: each transfer is at least 1.00 ETB and at most 10,000.00 ETB.
MIN_AMOUNT = 100
MAX_AMOUNT = 1_000_000
#: Spec §8: at least 8 characters; the upper bound and the alphabet are ours (spec-gaps).
MIN_KEY_LENGTH = 8
MAX_KEY_LENGTH = 255
#: Longest recipientHandle / recipientUserId accepted before any lookup (spec-gaps).
MAX_RECIPIENT_LENGTH = 64

FIELDS = ("recipientHandle", "recipientUserId", "amountMinor", "idempotencyKey")
_KEY_SHAPE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")


@dataclass(frozen=True)
class SendRequest:
    """A valid send body: exactly one recipient field set."""

    recipient_handle: str | None
    recipient_user_id: str | None
    amount_minor: int
    idempotency_key: str

    def fingerprint(self) -> dict[str, Any]:
        """What a repeated key's body is compared on (the key itself aside)."""
        return {
            "recipientHandle": self.recipient_handle,
            "recipientUserId": self.recipient_user_id,
            "amountMinor": self.amount_minor,
        }


def parse_send(body: Any) -> SendRequest:
    """The body as a SendRequest, or a 400 naming the first field at fault."""
    if not isinstance(body, dict):
        raise bad_request("invalid_request", "body must be a JSON object")
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise bad_request(
            "invalid_request", f"unknown field {unknown[0]!r}: send only {', '.join(FIELDS)}"
        )
    handle = _recipient(body, "recipientHandle")
    user_id = _recipient(body, "recipientUserId")
    if (handle is None) == (user_id is None):
        raise bad_request(
            "invalid_recipient", "send exactly one of recipientHandle or recipientUserId"
        )
    return SendRequest(handle, user_id, _amount(body.get("amountMinor")), _key(body))


def _recipient(body: dict[str, Any], field: str) -> str | None:
    if field not in body:
        return None
    value = body[field]
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_RECIPIENT_LENGTH:
        raise bad_request(
            "invalid_recipient",
            f"{field} must be a string of 1 to {MAX_RECIPIENT_LENGTH} characters",
        )
    return value


def _amount(value: Any) -> int:
    # bool is an int in Python but not an integer in JSON.
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_request("invalid_amount", "amountMinor must be an integer number of santim")
    if not MIN_AMOUNT <= value <= MAX_AMOUNT:
        raise amount_out_of_bounds(too_small=value < MIN_AMOUNT)
    return value


def amount_out_of_bounds(too_small: bool) -> WalletError:
    """§7 ``amount_too_small`` / ``amount_too_large`` (also for an integer too long to read,
    refused at the JSON edge: it is out of bounds whatever its digits)."""
    if too_small:
        return bad_request(
            "amount_too_small", f"amountMinor must be at least {MIN_AMOUNT} (1.00 ETB)"
        )
    return bad_request(
        "amount_too_large", f"amountMinor must be at most {MAX_AMOUNT} (10,000.00 ETB)"
    )


def _key(body: dict[str, Any]) -> str:
    key = body.get("idempotencyKey")
    if (
        not isinstance(key, str)
        or not MIN_KEY_LENGTH <= len(key) <= MAX_KEY_LENGTH
        or not _KEY_SHAPE.fullmatch(key)
    ):
        raise bad_request(
            "invalid_idempotency_key",
            f"idempotencyKey must be {MIN_KEY_LENGTH} to {MAX_KEY_LENGTH} printable ASCII "
            "characters",
        )
    return key
