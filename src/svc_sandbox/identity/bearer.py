"""The access token of an ``Authorization: Bearer`` header (RFC 6750 §2.1), for the two
resources that take one: userinfo and the wallet API. Every failure is 401 ``invalid_token``
with an RFC 6750 challenge (docs/spec-gaps.md, "Error body format")."""

from __future__ import annotations

from svc_sandbox.core.authorization import scheme_and_credentials
from svc_sandbox.identity.errors import InvalidToken, bearer_challenge

ASK = "send 'Authorization: Bearer <access token>'"


class NoBearerToken(InvalidToken):
    """No header, or another scheme (``Basic``, ``DPoP``): RFC 6750 §3.1, a request that "lacks
    any authentication information" or used "an unsupported authentication method" gets a
    challenge without an error code."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.headers = {"WWW-Authenticate": bearer_challenge(None)}


def bearer_token(header: str | None) -> str:
    if header is None:
        raise NoBearerToken(f"Missing access token: {ASK}")
    scheme, token = scheme_and_credentials(header)
    if scheme.lower() != "bearer":
        raise NoBearerToken(f"Authorization is not a bearer token: {ASK}")
    if not token:
        raise InvalidToken(f"Malformed Authorization header, no access token: {ASK}")
    return token
