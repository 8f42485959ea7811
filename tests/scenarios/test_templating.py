"""``${name[index]}`` references: an index is ASCII digits, as in paths."""

from __future__ import annotations

import pytest

from svc_sandbox.scenarios.templating import has_reference, render
from tests.scenarios.test_matchers import OTHER_DIGITS

VARIABLES = {"items": ["first", "second"]}


def test_an_ascii_index_reads_the_item() -> None:
    assert render("${items[1]}", VARIABLES.__getitem__) == "second"
    assert render("/p/${items[-1]}", VARIABLES.__getitem__) == "/p/second"


@pytest.mark.parametrize("digit", OTHER_DIGITS)
def test_another_scripts_digit_is_no_index(digit: str) -> None:
    """``${items[\\u0661]}`` is no reference (text, as any other ``${`` that names nothing)."""
    text = f"${{items[{digit}]}}"
    assert not has_reference(text)
    assert render(text, VARIABLES.__getitem__) == text
