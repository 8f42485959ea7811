"""The contracts' formats (contract/formats.py): the ``uri`` shortcut never changes a verdict of
jsonschema's own checker, and the compiled validator's callbacks answer as the checker does."""

from __future__ import annotations

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import FormatChecker

from svc_sandbox.contract.formats import PLAIN_URL, callbacks, format_checker

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


@pytest.mark.parametrize(
    ("name", "value"),
    [
        *(("uri", url) for url in PLAIN + OTHER_VALID + INVALID),
        ("date-time", "2026-01-01T00:30:00.000Z"),
        ("date-time", "2026-02-30T00:30:00Z"),  # no such day
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
