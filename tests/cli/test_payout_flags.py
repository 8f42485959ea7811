"""`serve` flags of the withdrawal settings (docs/spec-gaps.md, Balance and withdrawals)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.cli.test_serve import parse


@pytest.mark.parametrize(
    ("flag", "value", "field", "expected"),
    [
        ("--withdrawal-fee-rate", "0.05", "withdrawal_fee_rate", Decimal("0.05")),
        ("--withdrawal-tax-rate", "0", "withdrawal_tax_rate", Decimal("0")),
        ("--withdrawal-tax-base", "amount", "withdrawal_tax_base", "amount"),
        ("--withdrawal-rounding", "half_even", "withdrawal_rounding", "half_even"),
        ("--payout-pending-seconds", "5", "payout_pending_seconds", 5.0),
        ("--payout-processing-seconds", "0", "payout_processing_seconds", 0.0),
        ("--idempotency-retention-hours", "1.5", "idempotency_retention_hours", 1.5),
        ("--idempotency-retention-hours", "0", "idempotency_retention_hours", 0.0),
        ("--withdrawal-key-reuse", "reject", "withdrawal_key_reuse", "reject"),
    ],
)
def test_withdrawal_settings_have_flags(
    flag: str, value: str, field: str, expected: object
) -> None:
    assert parse(flag, value)[field] == expected


def test_defaults() -> None:
    settings = parse()
    assert (settings["withdrawal_fee_rate"], settings["withdrawal_tax_rate"]) == (
        Decimal("0.07"),
        Decimal("0.15"),
    )
    assert (settings["withdrawal_tax_base"], settings["withdrawal_rounding"]) == ("fee", "half_up")
    # Spec §4: a withdrawal's key matches for as long as the withdrawal exists, whatever the body.
    assert settings["idempotency_retention_hours"] == 0
    assert settings["withdrawal_key_reuse"] == "replay"


@pytest.mark.parametrize("rate", ["1.5", "-0.1", "seven"])
def test_rates_outside_0_to_1_are_refused(rate: str) -> None:
    with pytest.raises(ValueError, match="^--withdrawal-fee-rate must be "):
        parse("--withdrawal-fee-rate", rate)


def test_a_negative_retention_is_refused() -> None:
    with pytest.raises(
        ValueError, match="^--idempotency-retention-hours must be greater than or equal to 0"
    ):
        parse("--idempotency-retention-hours", "-1")


@pytest.mark.parametrize("hours", ["nan", "inf", "1e1", "\u0661"])
def test_an_unreadable_retention_is_a_usage_error(
    hours: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A number flag is ASCII digits (core/numbers.py): argparse refuses the rest, exit 2."""
    with pytest.raises(SystemExit) as exit_:
        parse("--idempotency-retention-hours", hours)
    assert exit_.value.code == 2
    assert "argument --idempotency-retention-hours" in capsys.readouterr().err
