"""core/text.py: the one test of text UTF-8 can encode (JSON bodies, scenario files and the
tool server's environment all ask it)."""

from __future__ import annotations

import pytest

from svc_sandbox.core.text import lone_surrogate


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("plain ASCII", None),
        ("Addis Ababa አዲስ አበባ", None),
        ("an emoji 💳 is a pair in UTF-16, one character here", None),
        ("\ud800", "\ud800"),
        ("ok then \udfff", "\udfff"),
        ("b\udc80d", "\udc80"),  # os.environ's stand-in for the byte 0x80
    ],
)
def test_the_first_lone_surrogate_is_found(text: str, found: str | None) -> None:
    assert lone_surrogate(text) == found
    encodes = True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        encodes = False
    assert encodes is (found is None)
