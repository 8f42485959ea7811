"""When two email addresses are one: the one rule of customers (per organization and
environment), users (sign-in, a taken address) and a state import's duplicate checks."""

from __future__ import annotations

import unicodedata


def email_key(address: str) -> str:
    """``address`` in the form two addresses compare in: Unicode's canonical caseless match
    (NFD, casefold, then NFC for a compact key). Mail providers treat an address without case,
    and ``josé`` typed on one keyboard (NFC, U+00E9) or another (NFD, e + U+0301) is one name;
    ``casefold`` rather than ``lower`` makes ``groß`` and ``GROSS`` one, as Unicode's caseless
    match does. The address itself is kept as given."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", address).casefold())
