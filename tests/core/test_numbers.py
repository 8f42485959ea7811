"""core/numbers.py: a number written as text is ASCII decimal, the one rule of the product
page's amount, a rate sent as a string, the command-line flags and the SVC_SANDBOX_* and tool
server variables. Python's int(), float() and Decimal() read every text below as a number."""

from __future__ import annotations

from decimal import Decimal

import pytest

from svc_sandbox.core.numbers import decimal_text, whole_text

#: Texts int(), float() or Decimal() take that are no ASCII decimal text.
NOT_ASCII_DECIMAL = [
    "\u0665\u0660",  # Arabic-Indic 50
    "\uff15\uff10",  # full-width 50
    "\u0967\u0966",  # Devanagari 10
    "\u00b2",  # superscript two (str.isdigit says yes; int() says no)
    "5_0",
    "1_000",
    "+50",
    " 50",
    "50\u2009",
    "\u00a050",
    "inf",
    "-Infinity",
    "NaN",
    "sNaN",
    "0x10",
    "",
    "-",
    ".5",
    "5.",
]


@pytest.mark.parametrize("text", [*NOT_ASCII_DECIMAL, "5e1", "0.5e2"])
def test_other_scripts_underscores_exponents_and_spaces_are_no_decimal_text(text: str) -> None:
    assert decimal_text(text) is None
    assert whole_text(text) is None


@pytest.mark.parametrize("text", NOT_ASCII_DECIMAL)
def test_an_exponent_is_the_only_thing_the_json_grammar_adds(text: str) -> None:
    assert decimal_text(text, exponent=True) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [("50", Decimal(50)), ("-1", Decimal(-1)), ("0.05", Decimal("0.05")), ("007", Decimal(7))],
)
def test_ascii_decimal_text_is_read_exactly(text: str, value: Decimal) -> None:
    assert decimal_text(text) == value
    assert decimal_text(text, exponent=True) == value


@pytest.mark.parametrize(("text", "value"), [("5e1", 50), ("1.5E-7", Decimal("1.5E-7"))])
def test_with_exponent_a_json_number_text_is_read(text: str, value: Decimal) -> None:
    assert decimal_text(text, exponent=True) == value


@pytest.mark.parametrize(("text", "value"), [("0", 0), ("8700", 8700), ("-3", -3), ("0042", 42)])
def test_whole_text(text: str, value: int) -> None:
    assert whole_text(text) == value


@pytest.mark.parametrize("text", ["1.5", "1" * 5000])
def test_whole_text_takes_no_fraction_and_nothing_int_cannot_convert(text: str) -> None:
    assert whole_text(text) is None
