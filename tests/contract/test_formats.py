"""The contracts' formats (contract/formats.py): the ``uri`` and ``date-time`` shortcuts never
change a verdict of jsonschema's own checker, and the compiled validator's callbacks answer as
the checker does."""

from __future__ import annotations

from datetime import datetime

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import FormatChecker

from svc_sandbox.contract.formats import (
    PLAIN_INSTANT,
    PLAIN_URL,
    callbacks,
    format_checker,
    is_plain_instant,
)

LIBRARY = FormatChecker()
OURS = format_checker()

#: Each absolute URL the shortcut takes (so the grammar is not consulted).
PLAIN = [
    "http://127.0.0.1:8700/pay/cs_060cea631d3b993f79490eab",
    "https://merchant.example/thanks",
    "https://merchant.example",
    "http://localhost:/a/b;c=d/@x:y/",  # an empty port, sub-delims, ':' and '@' in segments
    "svc+test.v1://a-b.c/~_.!$&'()*,=",
]
#: URIs outside the shortcut: the library's grammar decides them.
OTHER_VALID = [
    "https://merchant.example/thanks?order=1&x=%20",
    "https://merchant.example/#top",
    "https://user:pw@merchant.example/",
    "http://[::1]:8080/",
    "mailto:someone@example.com",
    "urn:svc-sandbox:contract",
    "https://merchant.example/caf%C3%A9",
    # The grammar's ``$`` matches before a final newline: not the shortcut's, so it stands.
    "https://merchant.example/\n",
]
INVALID = [
    "",
    "/relative/path",
    "merchant.example/thanks",
    "https://merchant.example/a b",
    "https://merchant.example/<script>",
    "https://merchant.example/%zz",
    "https://merchant.example/café",
    "1http://merchant.example/",
    "https://[::1/",
]


@pytest.mark.parametrize("url", PLAIN)
def test_a_plain_url_is_taken_by_the_shortcut_and_the_library_agrees(url: str) -> None:
    assert PLAIN_URL.fullmatch(url)
    assert OURS.conforms(url, "uri") and LIBRARY.conforms(url, "uri")


@pytest.mark.parametrize("url", OTHER_VALID + INVALID)
def test_other_strings_get_the_library_verdict(url: str) -> None:
    assert not PLAIN_URL.fullmatch(url)
    assert OURS.conforms(url, "uri") == LIBRARY.conforms(url, "uri") == (url in OTHER_VALID)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.from_regex(PLAIN_URL, fullmatch=True))
def test_the_library_accepts_everything_the_shortcut_takes(url: str) -> None:
    assert LIBRARY.conforms(url, "uri"), url


#: Near-URLs: the shortcut's characters and some it refuses, around its structure.
NEAR_URLS = st.builds(
    "".join,
    st.lists(
        st.sampled_from(
            ["http", "s", "://", ":", "/", "a", "Z", "0", "9", ".", "-", "_", "~", "@", "!"]
            + ["%", "%2F", "?", "#", "[", "]", " ", "é", "<", "\n", "+", "'", "="]
        ),
        max_size=14,
    ),
)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(st.one_of(NEAR_URLS, st.text(max_size=30)))
def test_the_shortcut_never_changes_a_verdict(text: str) -> None:
    assert OURS.conforms(text, "uri") == LIBRARY.conforms(text, "uri"), text


#: Instants the shortcut takes: the clock's shape, and the others it allows.
PLAIN_INSTANTS = [
    "2026-01-01T00:30:00.000Z",
    "2026-11-23T23:59:59Z",
    "2024-02-29T12:00:00.123456Z",  # a leap day
    "0001-01-01T00:00:00.5Z",
]
#: Outside the shortcut: its regular expression refuses them, or they are no real instant.
OTHER_INSTANTS = [
    "2026-01-01T00:30:00.000+03:00",  # an offset: the library's
    "2026-01-01t00:30:00z",  # lower case: the library upper-cases it
    "2026-01-01T00:30:00.1234567Z",  # seven fraction digits
    "2026-02-29T00:00:00Z",  # no such day
    "2026-13-01T00:00:00Z",
    "2026-01-01T24:00:00Z",
    "2026-01-01T23:59:60Z",  # a leap second: neither takes it
    "0000-01-01T00:00:00Z",
    "2026-01-01 00:30:00Z",
    "2026-01-01T00:30:00.000Z\n",
    "２０２６-01-01T00:30:00Z",  # full-width digits
    "",
]


@pytest.mark.parametrize("instant", PLAIN_INSTANTS)
def test_a_plain_instant_is_taken_by_the_shortcut_and_the_library_agrees(instant: str) -> None:
    assert is_plain_instant(instant)
    assert OURS.conforms(instant, "date-time") and LIBRARY.conforms(instant, "date-time")


@pytest.mark.parametrize("instant", OTHER_INSTANTS)
def test_other_instants_get_the_library_verdict(instant: str) -> None:
    assert not is_plain_instant(instant)
    assert OURS.conforms(instant, "date-time") == LIBRARY.conforms(instant, "date-time")


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.from_regex(PLAIN_INSTANT, fullmatch=True))
def test_the_library_accepts_every_instant_the_shortcut_takes(text: str) -> None:
    # Most random digits make no real date: those go to the library, which must agree.
    assert OURS.conforms(text, "date-time") == LIBRARY.conforms(text, "date-time"), text
    if is_plain_instant(text):
        assert LIBRARY.conforms(text, "date-time"), text


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.datetimes(timezones=st.none()))
def test_every_real_utc_instant_is_taken_by_the_shortcut(moment: datetime) -> None:
    text = moment.isoformat(timespec="milliseconds") + "Z"
    assert is_plain_instant(text) and LIBRARY.conforms(text, "date-time"), text


@pytest.mark.parametrize(
    ("name", "value"),
    [
        *(("uri", url) for url in PLAIN + OTHER_VALID + INVALID),
        *(("date-time", instant) for instant in PLAIN_INSTANTS + OTHER_INSTANTS),
        ("ipv4", "127.0.0.1"),
        ("ipv4", "999.0.0.1"),  # its checker raises: counted as a refusal
        ("email", "someone@example.com"),
        ("email", "no-at-sign"),
    ],
)
def test_the_compiled_validators_callbacks_answer_as_the_checker(name: str, value: str) -> None:
    assert name in LIBRARY.checkers
    compiled = jsonschema_rs.validator_for(
        {"type": "string", "format": name},
        validate_formats=True,
        formats=callbacks(OURS),
    )
    assert compiled.is_valid(value) == LIBRARY.conforms(value, name)


def test_our_checker_leaves_jsonschemas_own_checkers_as_they_are() -> None:
    """Other users of jsonschema in the process (schemathesis) keep the libraries' checks."""
    format_checker()
    fresh = FormatChecker()
    for name in ("uri", "date-time"):
        assert fresh.checkers[name] == FormatChecker.checkers[name]
        assert OURS.checkers[name] != fresh.checkers[name]
