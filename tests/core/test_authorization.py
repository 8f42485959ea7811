"""core/authorization.py: an Authorization header is trimmed of HTTP's space and tab only
(RFC 9110 §5.6.3), the one reading of the commerce API, userinfo/wallet and the tool server."""

from __future__ import annotations

import pytest

from svc_sandbox.core.authorization import scheme_and_credentials

#: Characters str.strip() drops that HTTP does not: a token with one of them is malformed.
NOT_HTTP_SPACE = ["\u00a0", "\u0085", "\u001c", "\u001f", "\u000b", "\u000c", "\u3000"]
#: The header's bytes are Latin-1 (RFC 9110 §5.5): the stray characters one byte can carry.
STRAY_BYTES = [c for c in NOT_HTTP_SPACE if ord(c) < 256]


@pytest.mark.parametrize("stray", NOT_HTTP_SPACE)
def test_only_space_and_tab_are_trimmed(stray: str) -> None:
    assert scheme_and_credentials(f"Bearer tok{stray}") == ("Bearer", f"tok{stray}")
    assert scheme_and_credentials(f"Bearer {stray}tok") == ("Bearer", f"{stray}tok")


@pytest.mark.parametrize("header", ["Bearer tok", "Bearer  tok\t", " Bearer tok ", "Bearer \ttok"])
def test_http_space_around_the_token_is_no_part_of_it(header: str) -> None:
    assert scheme_and_credentials(header) == ("Bearer", "tok")
