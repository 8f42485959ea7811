"""Withdrawal fees (spec §8): the one pure quote, amount and rates in, the four figures out.

Used by POST /withdrawals and by the tool server's ``svc_quote_withdrawal``. Arithmetic is
Decimal over integer santim, never floats:

* ``feeAmount`` = ``amount`` x fee rate (7% by default, or the organization's custom rate);
* ``taxAmount`` = tax rate x the tax base: by default the *fee* (VAT on the service fee);
  ``tax_base="amount"`` taxes the gross amount instead;
* each part is rounded on its own to the nearest santim, halves away from zero by default
  (``ROUND_HALF_UP``; ``"half_even"`` is the banker's alternative); the tax is computed on the
  already rounded fee, i.e. on what is actually charged;
* ``netAmount`` = ``amount`` - ``feeAmount`` - ``taxAmount``.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import Any, Literal

from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.numbers import decimal_text

#: The largest amount a money field takes (1 billion ETB): far above any real figure, keeps
#: inputs sane (and every quote within Decimal's precision).
MAX_MINOR = 100_000_000_000
DEFAULT_FEE_RATE = Decimal("0.07")
#: Ethiopia's standard VAT rate, applied to the service fee (see docs/spec-gaps.md).
DEFAULT_TAX_RATE = Decimal("0.15")

TaxBase = Literal["fee", "amount"]
Rounding = Literal["half_up", "half_even"]
_ROUNDING = {"half_up": ROUND_HALF_UP, "half_even": ROUND_HALF_EVEN}
_SANTIM = Decimal(1)

Rate = Decimal | int | str


@dataclass(frozen=True)
class Quote:
    """The four figures of a withdrawal, integer santim each."""

    amount: int
    fee_amount: int
    tax_amount: int
    net_amount: int

    def to_public(self) -> dict[str, Any]:
        return {
            "amount": self.amount,
            "feeAmount": self.fee_amount,
            "taxAmount": self.tax_amount,
            "netAmount": self.net_amount,
            "currency": "ETB",
        }


def _rate(value: Rate, name: str) -> Decimal:
    """A rate as a Decimal fraction in [0, 1]; floats are refused (they are inexact)."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int | str):
        raise ValidationFailed(f"{name} must be a decimal fraction (Decimal, int or string)")
    # A string is a JSON number's text in ASCII digits (core/numbers.py): Decimal() would
    # also read "٠.٠٧", "0.0_7", " 0.07" and "NaN".
    rate = decimal_text(value, exponent=True) if isinstance(value, str) else Decimal(value)
    if rate is None:
        raise ValidationFailed(f"{name} must be a decimal fraction such as 0.07")
    if not rate.is_finite() or not Decimal(0) <= rate <= Decimal(1):
        raise ValidationFailed(f"{name} must be between 0 and 1 (0.07 = 7%)")
    return rate


def _round(value: Decimal, rounding: Rounding) -> int:
    return int(value.quantize(_SANTIM, rounding=_ROUNDING[rounding]))


def quote_withdrawal(
    amount: int,
    fee_rate: Rate = DEFAULT_FEE_RATE,
    tax_rate: Rate = DEFAULT_TAX_RATE,
    *,
    tax_base: TaxBase = "fee",
    rounding: Rounding = "half_up",
) -> Quote:
    """The fee, tax and net of withdrawing ``amount`` santim (gross).

    Raises ValidationFailed (naming the argument) for a non-integer or negative amount, a rate
    outside [0, 1] or a float rate, and when the fee and tax together would exceed the amount.
    """
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise ValidationFailed("amount must be an integer number of santim")
    if amount < 0:
        raise ValidationFailed("amount must not be negative")
    if tax_base not in ("fee", "amount"):
        raise ValidationFailed("tax_base must be 'fee' or 'amount'")
    if rounding not in _ROUNDING:
        raise ValidationFailed("rounding must be 'half_up' or 'half_even'")
    fee = _round(Decimal(amount) * _rate(fee_rate, "fee_rate"), rounding)
    base = fee if tax_base == "fee" else amount
    tax = _round(Decimal(base) * _rate(tax_rate, "tax_rate"), rounding)
    if fee + tax > amount:
        raise ValidationFailed(
            f"fee ({fee}) and tax ({tax}) would exceed the amount ({amount}): rates too high"
        )
    return Quote(amount=amount, fee_amount=fee, tax_amount=tax, net_amount=amount - fee - tax)
