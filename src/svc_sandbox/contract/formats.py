"""The contracts' string formats (``uri``, ``date-time``, ...) as both validators check them.

jsonschema's format checkers are the authority: the explaining validator uses them, and the
compiled one (``jsonschema_rs``) calls them back, so both mean the same by every format. One
shortcut: a ``uri`` through rfc3986-validator's grammar costs about 24,000 instructions, a
fifth of what strict mode adds to POST /checkout (its ``checkoutUrl``), so a string of the
plainest absolute URL shape (``PLAIN_URL``) is accepted without it. Every part of that shape is
a subset of the grammar's rule for it, so the library would say yes too; anything else, and
every refusal, is the library's verdict (tests/contract/test_formats.py checks both ways).
"""

from __future__ import annotations

import re
from collections.abc import Callable
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


def format_checker() -> FormatChecker:
    """jsonschema's checker of every format it knows, ``uri`` trying ``PLAIN_URL`` first."""
    from jsonschema import FormatChecker

    checker = FormatChecker()
    if "uri" in checker.checkers:
        library_uri, raises = checker.checkers["uri"]

        def is_uri(instance: object) -> Any:
            if isinstance(instance, str) and PLAIN_URL.fullmatch(instance):
                return True
            return library_uri(instance)

        checker.checks("uri", raises)(is_uri)
    return checker


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
