"""Text someone typed cannot turn the page's own words around it (core/bidi.py)."""

from __future__ import annotations

import pytest
from markupsafe import Markup

from svc_sandbox.core.bidi import PDF, PDI, closed_bidi

RLO, LRE, RLI, FSI = "\u202e", "\u202a", "\u2067", "\u2068"

CASES = [
    ("plain text", "Bank App", "Bank App"),
    ("right-to-left text, no control", "בנק", "בנק"),
    ("an override left open", f"{RLO}ppA knaB", f"{RLO}ppA knaB{PDF}"),
    ("an override closed", f"{RLO}x{PDF} y", f"{RLO}x{PDF} y"),
    ("two embeddings open", f"{LRE}a{RLO}b", f"{LRE}a{RLO}b{PDF}{PDF}"),
    ("an isolate left open", f"{RLI}a", f"{RLI}a{PDI}"),
    ("an override inside an open isolate", f"{FSI}a{RLO}b", f"{FSI}a{RLO}b{PDF}{PDI}"),
    (
        "a PDI closes its isolate and what opened inside",
        f"{RLI}a{RLO}b{PDI}c",
        f"{RLI}a{RLO}b{PDI}c",
    ),
    ("a PDF does not close past an isolate", f"{RLO}a{RLI}b{PDF}", f"{RLO}a{RLI}b{PDF}{PDI}{PDF}"),
    ("a stray PDF or PDI", f"a{PDF}{PDI}b", f"a{PDF}{PDI}b"),
]


@pytest.mark.parametrize(("case", "typed", "shown"), CASES, ids=[c[0] for c in CASES])
def test_what_is_left_open_is_closed_at_the_end(case: str, typed: str, shown: str) -> None:
    assert closed_bidi(typed) == shown


def test_markup_stays_markup_and_other_values_pass_through() -> None:
    closed = closed_bidi(Markup(f"<b>{RLO}x</b>"))
    assert isinstance(closed, Markup) and closed == Markup(f"<b>{RLO}x</b>{PDF}")
    assert closed_bidi(5) == 5
    assert closed_bidi(None) is None
