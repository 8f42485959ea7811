"""Numbers written as text (a page form's amount, a header, a command-line flag, an
environment variable, a rate sent as a string): ASCII decimal only, the one rule of every
place that reads one. Python's ``int()``, ``float()`` and ``Decimal()`` also take other
scripts' digits (``٥٠``, ``５０``), ``_`` between digits, exponents (``5e1``), ``inf`` and
``nan``, a ``+`` and Unicode spaces around the figure: a typo or a look-alike would quietly
become another number, so none of them is a number here.

Also ``within``: the range check of a number already decoded (from JSON or YAML), which holds
for an integer of any length."""

from __future__ import annotations

import math
import re
import sys
from decimal import Decimal

#: An optional minus, ASCII digits, and optionally a point with more ASCII digits.
_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
#: The same with an exponent: a JSON number's grammar (RFC 8259 §6), leading zeros aside.
_EXPONENT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
#: The same without the fraction.
_WHOLE = re.compile(r"-?[0-9]+")

#: What a caller may strip around a figure: ASCII whitespace as WHATWG defines it (a form
#: field, an environment variable), never U+2009 or U+00A0.
ASCII_WHITESPACE = " \t\n\f\r"
#: How a message names the rule.
DECIMAL_TEXT = "a number in ASCII digits such as 10 or 0.5"
EXPONENT_TEXT = "a number in ASCII digits such as 0.05 or 5E-2"
WHOLE_TEXT = "a whole number in ASCII digits such as 10"


def decimal_text(text: str, exponent: bool = False) -> Decimal | None:
    """``text`` as an exact Decimal when it is ASCII decimal text (``50``, ``-1``, ``0.05``;
    with ``exponent``, also ``1.5E-7`` as a JSON number is written), else None. Never NaN or
    infinite; callers bound the magnitude they take."""
    return Decimal(text) if (_EXPONENT if exponent else _DECIMAL).fullmatch(text) else None


def whole_text(text: str) -> int | None:
    """``text`` as an int when it is ASCII digits with an optional minus, else None (also past
    Python's int conversion limit, where ``int()`` would raise)."""
    significant = text.lstrip("-").lstrip("0")
    if not _WHOLE.fullmatch(text) or len(significant) > sys.get_int_max_str_digits():
        return None
    return int(text)


def within(value: int | float, low: float, high: float) -> bool:
    """Whether ``value`` is a finite number from ``low`` to ``high``. An int is compared as it
    is (Python compares ints and floats exactly): ``math.isfinite`` or ``float()`` of an
    integer of 400 digits, valid JSON, raises OverflowError."""
    if isinstance(value, float) and not math.isfinite(value):
        return False
    return low <= value <= high


def number_text(value: float) -> str:
    """A JSON number decoded as a float, written as JSON writes it (ECMAScript's
    Number::toString, what ``JSON.stringify`` gives): ``1e2`` is ``100``, ``1.50`` is ``1.5``,
    ``-0.0`` is ``0``, ``1.5e-7`` is ``1.5e-7``, ``1e21`` is ``1e+21``. Python's ``str`` writes
    ``100.0``, ``1.5e-07`` and ``1e+16`` (ECMAScript waits until 1e21)."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr gives the shortest digits that read back as this float, as ECMAScript asks.
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # value = 0.<digits> x 10^point
    point = len(whole) + int(exponent or 0) - (len(whole + fraction) - len(digits))
    digits = digits.rstrip("0")
    size = len(digits)
    if size <= point <= 21:
        return sign + digits + "0" * (point - size)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    power = point - 1
    written = digits[0] + ("." + digits[1:] if size > 1 else "")
    return f"{sign}{written}e{'+' if power >= 0 else '-'}{abs(power)}"
