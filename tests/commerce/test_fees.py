"""Spec §8 withdrawal fees: 7% (or the custom rate), tax at the platform rate, each part
rounded to the nearest santim, net = amount - fee - tax; integer/Decimal arithmetic only."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from flask.testing import FlaskClient
from hypothesis import given, settings
from hypothesis import strategies as st

from svc_sandbox.commerce.fees import quote_withdrawal
from svc_sandbox.commerce.schemas import MAX_MINOR, MIN_WITHDRAWAL
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.sandbox import Sandbox
from tests.commerce.earnings import earn
from tests.commerce.payout_helpers import org_id_of, withdraw


@pytest.mark.parametrize(
    ("amount", "fee_rate", "tax_rate", "tax_base", "rounding", "figures"),
    [
        # The defaults: 7% fee, 15% tax on the fee.
        (10000, "0.07", "0.15", "fee", "half_up", (700, 105, 9195)),
        (1000000, "0.07", "0.15", "fee", "half_up", (70000, 10500, 919500)),
        # 10007 x 7% = 700.49 -> 700 (below the half), tax 105.
        (10007, "0.07", "0.15", "fee", "half_up", (700, 105, 9202)),
        # 10050 x 7% = 703.5 -> 704 half up; tax 704 x 15% = 105.6 -> 106.
        (10050, "0.07", "0.15", "fee", "half_up", (704, 106, 9240)),
        # 10150 x 7% = 710.5: half up 711, half even 710; taxes 106.65 -> 107 / 106.5 -> 106.
        (10150, "0.07", "0.15", "fee", "half_up", (711, 107, 9332)),
        (10150, "0.07", "0.15", "fee", "half_even", (710, 106, 9334)),
        # Tax on the gross amount instead: 10030 x 15% = 1504.5 -> 1505 half up, 1504 half even.
        (10030, "0.07", "0.15", "amount", "half_up", (702, 1505, 7823)),
        (10030, "0.07", "0.15", "amount", "half_even", (702, 1504, 7824)),
        # No fee, no tax; a zero amount.
        (10000, "0", "0", "fee", "half_up", (0, 0, 10000)),
        (0, "0.07", "0.15", "fee", "half_up", (0, 0, 0)),
        # A custom rate of 5%.
        (12345, "0.05", "0.15", "fee", "half_up", (617, 93, 11635)),
    ],
)
def test_quote_examples(
    amount: int,
    fee_rate: str,
    tax_rate: str,
    tax_base: Any,
    rounding: Any,
    figures: tuple[int, int, int],
) -> None:
    quote = quote_withdrawal(
        amount, Decimal(fee_rate), Decimal(tax_rate), tax_base=tax_base, rounding=rounding
    )
    assert (quote.fee_amount, quote.tax_amount, quote.net_amount) == figures
    assert quote.to_public() == {
        "amount": amount,
        "feeAmount": figures[0],
        "taxAmount": figures[1],
        "netAmount": figures[2],
        "currency": "ETB",
    }


# Realistic rates: at most 45% each, so fee + tax (each rounded) never exceeds the amount.
rates = st.decimals(min_value=0, max_value=Decimal("0.45"), places=4)
any_rates = st.decimals(min_value=0, max_value=1, places=6)
rounding_rules = st.sampled_from(["half_up", "half_even"])
tax_bases = st.sampled_from(["fee", "amount"])


@settings(deadline=None)  # a loaded CI machine must not turn slowness into failure
@given(
    amount=st.integers(min_value=MIN_WITHDRAWAL, max_value=MAX_MINOR),
    fee_rate=rates,
    tax_rate=rates,
    tax_base=tax_bases,
    rounding=rounding_rules,
)
def test_quote_property(
    amount: int, fee_rate: Decimal, tax_rate: Decimal, tax_base: Any, rounding: Any
) -> None:
    quote = quote_withdrawal(amount, fee_rate, tax_rate, tax_base=tax_base, rounding=rounding)
    figures = (quote.amount, quote.fee_amount, quote.tax_amount, quote.net_amount)
    assert all(type(f) is int and f >= 0 for f in figures)
    assert quote.net_amount == amount - quote.fee_amount - quote.tax_amount
    # Each part is the exact product rounded to the nearest santim.
    assert abs(quote.fee_amount - amount * fee_rate) <= Decimal("0.5")
    base = quote.fee_amount if tax_base == "fee" else amount
    assert abs(quote.tax_amount - base * tax_rate) <= Decimal("0.5")


@settings(deadline=None)  # a loaded CI machine must not turn slowness into failure
@given(
    amount=st.integers(min_value=0, max_value=MAX_MINOR),
    fee_rate=any_rates,
    tax_rate=any_rates,
    tax_base=tax_bases,
    rounding=rounding_rules,
)
def test_quote_is_exact_or_refused_for_any_rates(
    amount: int, fee_rate: Decimal, tax_rate: Decimal, tax_base: Any, rounding: Any
) -> None:
    """Rates that (with rounding) would take more than the amount are refused, never netted
    below zero."""
    try:
        quote = quote_withdrawal(amount, fee_rate, tax_rate, tax_base=tax_base, rounding=rounding)
    except ValidationFailed as refused:
        assert "would exceed the amount" in refused.message
        return
    assert min(quote.fee_amount, quote.tax_amount, quote.net_amount) >= 0
    assert quote.fee_amount + quote.tax_amount + quote.net_amount == amount


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((10000, 0.07, Decimal("0.15")), "fee_rate must be a decimal fraction"),
        ((10000, Decimal("0.07"), 0.15), "tax_rate must be a decimal fraction"),
        ((10000, Decimal("1.5"), Decimal("0")), "fee_rate must be between 0 and 1"),
        ((10000, Decimal("-0.1"), Decimal("0")), "fee_rate must be between 0 and 1"),
        ((10000, Decimal("NaN"), Decimal("0")), "fee_rate must be between 0 and 1"),
        ((10000, "seven", Decimal("0")), "fee_rate must be a decimal fraction"),
        # A rate as a string is ASCII digits (core/numbers.py): Decimal() read these as 0.07.
        *(
            ((10000, text, Decimal("0")), "fee_rate must be a decimal fraction such as 0.07")
            for text in ["NaN", "\u0660.\u0660\u0667", "0.0_7", " 0.07", "+0.07"]
        ),
        ((-1, Decimal("0.07"), Decimal("0.15")), "amount must not be negative"),
        ((100.5, Decimal("0.07"), Decimal("0.15")), "amount must be an integer"),
        ((True, Decimal("0.07"), Decimal("0.15")), "amount must be an integer"),
        ((10000, Decimal("1"), Decimal("1")), "would exceed the amount"),
    ],
)
def test_quote_refuses(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ValidationFailed, match=message):
        quote_withdrawal(*args)


def test_quote_accepts_string_and_integer_rates() -> None:
    assert quote_withdrawal(10000, "0.07", 0).fee_amount == 700
    assert quote_withdrawal(10000, 1, "0").net_amount == 0
    assert quote_withdrawal(10000, "7E-2", 0).fee_amount == 700


def test_withdrawal_carries_the_default_quote(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 50000)
    body = withdraw(svc_http, live_auth, 10150)
    assert (body["amount"], body["feeAmount"], body["taxAmount"], body["netAmount"]) == (
        10150,
        711,
        107,
        9332,
    )


def test_withdrawal_uses_the_custom_fee_rate(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    org_id = org_id_of(svc_sandbox, live_auth)
    response = svc_http.patch(f"/_sandbox/orgs/{org_id}", json={"customFeeRate": "0.05"})
    assert response.status_code == 200, response.json
    earn(svc_http, live_auth, 50000)
    body = withdraw(svc_http, live_auth, 12345)
    assert (body["feeAmount"], body["taxAmount"], body["netAmount"]) == (617, 93, 11635)


@pytest.mark.parametrize(
    ("overrides", "figures"),
    [
        ({"withdrawal_tax_rate": Decimal("0")}, (700, 0, 9300)),
        ({"withdrawal_tax_base": "amount"}, (700, 1500, 7800)),
        ({"withdrawal_fee_rate": Decimal("0.1")}, (1000, 150, 8850)),
    ],
)
def test_platform_settings_change_the_quote(
    overrides: dict[str, Any], figures: tuple[int, int, int]
) -> None:
    from svc_sandbox.app import create_app
    from tests.helpers import token_of

    sandbox = Sandbox(clock_mode="frozen", seed=1, port=0, **overrides)
    client = create_app(sandbox).test_client()
    auth = {"Authorization": f"Bearer {token_of(sandbox, 'production')}"}
    earn(client, auth, 10000)
    body = withdraw(client, auth, 10000)
    assert (body["feeAmount"], body["taxAmount"], body["netAmount"]) == figures
