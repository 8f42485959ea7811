"""Text someone typed, shown inside the emulator's own sentences: a directional override or
embedding it opens and never closes (U+202E RIGHT-TO-LEFT OVERRIDE in an app's name) would
run on over the page's words that follow it ("Bank App wants to access your account" read
backwards on the consent page). Every value a page writes is closed here (app.py makes it
the templates' ``finalize``), in text and attributes alike, with the characters Unicode's
bidirectional algorithm (UAX #9) ends them with: PDF for an embedding or override, PDI for
an isolate. The text itself is kept as typed."""

from __future__ import annotations

import re
from typing import Any

PDF = "\u202c"  # POP DIRECTIONAL FORMATTING: ends LRE, RLE, LRO, RLO
PDI = "\u2069"  # POP DIRECTIONAL ISOLATE: ends LRI, RLI, FSI
EMBEDDINGS = frozenset("\u202a\u202b\u202d\u202e")
ISOLATES = frozenset("\u2066\u2067\u2068")
_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def closed_bidi(value: Any) -> Any:
    """``value`` with every embedding, override and isolate it leaves open closed at its end
    (in the order UAX #9 pops them); anything else (no such character, not text) as it is.
    A ``Markup`` stays one."""
    if not isinstance(value, str) or _CONTROLS.search(value) is None:
        return value
    open_: list[str] = []
    for char in value:
        if char in EMBEDDINGS or char in ISOLATES:
            open_.append(char)
        elif char == PDF:
            # X7: a PDF ends the innermost embedding, never past an isolate.
            if open_ and open_[-1] in EMBEDDINGS:
                open_.pop()
        elif char == PDI and any(c in ISOLATES for c in open_):
            # X6a: a PDI ends the innermost isolate and whatever opened inside it.
            while open_.pop() not in ISOLATES:
                pass
    if not open_:
        return value
    return value + "".join(PDI if c in ISOLATES else PDF for c in reversed(open_))
