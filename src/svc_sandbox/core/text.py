"""Text UTF-8 can encode. A Python string may hold a lone surrogate, which no UTF-8 encoder
takes: JSON's ``"\\ud800"`` escape and YAML's make one, and ``os.environ`` keeps a byte that
is not UTF-8 as one. Every place that takes text from outside asks here."""

from __future__ import annotations

import re

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in ``text``; None when UTF-8 can encode all of it."""
    if text.isascii():
        return None
    found = _LONE_SURROGATE.search(text)
    return found.group() if found else None


def isolated(text: object) -> str:
    """``text`` between FSI and PDI (U+2068, U+2069): typed text inside words of ours where no
    ``<bdi>`` can go (a page's title, an image's alt text, a confirm dialog), so a direction
    override in it (U+202E) cannot turn our words around."""
    return f"\u2068{text}\u2069"
