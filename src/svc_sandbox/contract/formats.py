"""The contracts' string formats (``uri``, ``date-time``, ...) as both validators check them.

jsonschema's format checkers are the authority: the explaining validator uses them, and the
compiled one (``jsonschema_rs``) calls them back, so both mean the same by every format. Two
shortcuts, for the shapes the emulator itself writes in every answer: a ``uri`` through
rfc3986-validator's grammar costs about 24,000 instructions (a fifth of what strict mode adds
to POST /checkout, for its ``checkoutUrl``) and a ``date-time`` through rfc3339-validator about
16,000 (every timestamp of a strict answer). A string of the plainest absolute URL shape
(``PLAIN_URL``), or a UTC instant of the clock's shape that is a real date and time
(``PLAIN_INSTANT``), is accepted without them: the library would say yes too, as every part of
each shape is a subset of its rule. Anything else, and every refusal, is the library's verdict
(tests/contract/test_formats.py checks both ways).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # jsonschema is imported when a message is first checked, not at start-up
    from jsonschema import FormatChecker

#: ``scheme "://" reg-name [":" port] path-abempty`` (RFC 3986 §3), the host of letters,
#: digits, dots and hyphens (unreserved characters) and each segment of unreserved
#: characters, sub-delims, ``:`` and ``@`` (``pchar`` without percent-encodings): no query, no
#: fragment, no user info, no IP literal. ASCII only (the classes are ranges, not ``\w``).
PLAIN_URL = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*://[A-Za-z0-9.\-]+(?::[0-9]*)?(?:/[A-Za-z0-9\-._~!$&'()*+,;=:@]*)*"
)
#: RFC 3339's ``date-time`` in UTC with an upper-case ``T`` and ``Z`` and at most six fraction
#: digits (the clock writes three). Its numbers must also make a real date and time, which
#: ``datetime.fromisoformat`` checks (no month 13, February 30, hour 24, second 60, year 0).
PLAIN_INSTANT = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z"
)


def is_plain_url(text: str) -> bool:
    return PLAIN_URL.fullmatch(text) is not None


def is_plain_instant(text: str) -> bool:
    if PLAIN_INSTANT.fullmatch(text) is None:
        return False
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


#: Each format with a shortcut: strings it accepts are accepted without the library.
SHORTCUTS: dict[str, Callable[[str], bool]] = {
    "uri": is_plain_url,
    "date-time": is_plain_instant,
}


def format_checker() -> FormatChecker:
    """jsonschema's checker of every format it knows, ``SHORTCUTS`` tried first."""
    from jsonschema import FormatChecker

    checker = FormatChecker()
    for name, shortcut in SHORTCUTS.items():
        if name in checker.checkers:
            library, raises = checker.checkers[name]
            checker.checks(name, raises)(_shortcut_first(shortcut, library))
    return checker


def _shortcut_first(
    shortcut: Callable[[str], bool], library: Callable[[object], Any]
) -> Callable[[object], Any]:
    def check(instance: object) -> Any:
        if isinstance(instance, str) and shortcut(instance):
            return True
        return library(instance)

    return check


def callbacks(checker: FormatChecker) -> dict[str, Callable[[str], Any]]:
    """The checker's formats as ``jsonschema_rs`` takes them (a callable per name answering
    whether a string conforms; a truthy answer is a yes). A checker that raises nothing but
    answers is passed as it is; one that raises its library's errors is wrapped, a raise
    counted as a refusal, as jsonschema's ``conforms`` does."""

    def conforming(name: str) -> Callable[[str], bool]:
        return lambda value: checker.conforms(value, name)

    return {
        name: conforming(name) if raises else check
        for name, (check, raises) in checker.checkers.items()
    }
