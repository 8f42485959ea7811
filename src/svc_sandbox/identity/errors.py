"""OAuth errors of spec §7 "Identity provider errors": one class per RFC 6749 code.

Every error renders as ``{error, error_description}`` (RFC 6749 §5.2); see docs/spec-gaps.md.
"""

from __future__ import annotations

import re

from svc_sandbox.core.errors import RateLimited, SandboxError
from svc_sandbox.core.validation import ELLIPSIS

#: What ``description`` writes for the characters it replaces by another: the two the set
#: leaves out, and the ellipsis ``core/validation.cut`` ends a cut value with (ours, not the
#: client's, so written as dots rather than as its code point).
_REPLACED = str.maketrans({'"': "'", "\\": "/", ELLIPSIS: "..."})
#: Outside RFC 6749's set once those are replaced: controls, DEL and every non-ASCII character.
_OUTSIDE = re.compile(r"[^\x20-\x7e]")


def description(message: str) -> str:
    """``message`` as an ``error_description`` may carry it, in the JSON body, the error
    redirect and the Bearer challenge alike: RFC 6749 §4.1.2.1 and §5.2 allow only
    %x20-21 / %x23-5B / %x5D-7E. ``"`` becomes ``'`` and ``\\`` ``/`` (so it also fits the
    quoted string of a ``WWW-Authenticate`` challenge, RFC 6750 §3), any other character
    outside the set ``U+XXXX`` (``é`` is ``U+00E9``). One pass: linear in the message."""
    return _OUTSIDE.sub(_code_point, message.translate(_REPLACED))


def _code_point(found: re.Match[str]) -> str:
    return f"U+{ord(found.group()):04X}"


class OAuthError(SandboxError):
    """An RFC 6749 error: ``code`` is the ``error`` value, ``message`` its description."""

    status = 400
    code = "invalid_request"


class InvalidRequest(OAuthError):
    code = "invalid_request"


class InvalidClient(OAuthError):
    """Wrong client id or secret, or client disabled (401, RFC 6749 §5.2)."""

    status = 401
    code = "invalid_client"

    def __init__(self, message: str) -> None:
        super().__init__(message, headers={"WWW-Authenticate": 'Basic realm="svc-sandbox"'})


class InvalidGrant(OAuthError):
    code = "invalid_grant"


class UnauthorizedClient(OAuthError):
    code = "unauthorized_client"


class UnsupportedGrantType(OAuthError):
    code = "unsupported_grant_type"


class UnsupportedResponseType(OAuthError):
    code = "unsupported_response_type"


class InvalidScope(OAuthError):
    code = "invalid_scope"


class InvalidTarget(OAuthError):
    """RFC 8707: a ``resource`` this provider does not serve."""

    code = "invalid_target"


class AccessDenied(OAuthError):
    status = 403
    code = "access_denied"


class LoginRequired(OAuthError):
    """OpenID Connect Core §3.1.2.6: ``prompt=none`` and the user would have to sign in."""

    code = "login_required"


class ConsentRequired(OAuthError):
    """OpenID Connect Core §3.1.2.6: ``prompt=none`` and the user would have to consent."""

    code = "consent_required"


class RequestNotSupported(OAuthError):
    """OpenID Connect Core §6.1: a ``request`` (a request object) sent to a provider that does
    not support it (discovery: ``request_parameter_supported: false``)."""

    code = "request_not_supported"


class RequestUriNotSupported(OAuthError):
    """OpenID Connect Core §6.2: a ``request_uri`` sent to a provider that does not support it
    (discovery: ``request_uri_parameter_supported: false``)."""

    code = "request_uri_not_supported"


class RedirectUriMismatch(OAuthError):
    code = "redirect_uri_mismatch"


class InvalidToken(OAuthError):
    """A bearer token that is missing, malformed, expired, revoked or not for this resource
    (RFC 6750 §3.1). The resource-server check (`verify_resource_token`) raises it too."""

    status = 401
    code = "invalid_token"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.headers = {"WWW-Authenticate": bearer_challenge(self.code, message)}


class InsufficientScope(OAuthError):
    status = 403
    code = "insufficient_scope"

    def __init__(self, message: str, scope: str) -> None:
        super().__init__(message)
        self.headers = {"WWW-Authenticate": bearer_challenge(self.code, message, scope)}


class TooManyRequests(RateLimited):
    """429 of spec §8 with ``Retry-After``; body ``{error: "rate_limited", ...}``."""

    code = "rate_limited"


def bearer_challenge(error: str | None, message: str | None = None, scope: str = "") -> str:
    """An RFC 6750 ``WWW-Authenticate: Bearer`` value; the message as ``description`` writes
    every ``error_description``."""
    parts = ['Bearer realm="svc-sandbox"']
    if error:
        parts.append(f'error="{error}"')
    if message:
        parts.append(f'error_description="{description(message)}"')
    if scope:
        parts.append(f'scope="{scope}"')
    return ", ".join(parts)
