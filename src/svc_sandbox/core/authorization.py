"""An ``Authorization`` header's scheme and credentials, the one reading of the commerce API,
the identity resources (userinfo, wallet) and the tool server's HTTP transport."""

from __future__ import annotations

#: What HTTP allows around a field value and after the scheme (RFC 9110 §5.6.3 OWS, §11.4):
#: space and tab. ``str.strip()`` would also drop U+00A0, U+0085 and U+001C, so a token sent
#: with one of them around it would be taken where it is malformed (spec §5.3: 401).
HTTP_SPACE = " \t"


def scheme_and_credentials(header: str) -> tuple[str, str]:
    """``("Bearer", "<token>")`` of ``"Bearer <token>"``: the scheme up to the first space,
    the rest with only HTTP's space and tab trimmed (what else surrounds it stays, and the
    credentials are then no token)."""
    scheme, _, credentials = header.strip(HTTP_SPACE).partition(" ")
    return scheme, credentials.strip(HTTP_SPACE)
