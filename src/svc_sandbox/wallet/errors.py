"""The wallet API's errors (spec §7 "Wallet API errors"): body ``{error}`` with these codes.

The bearer errors (``invalid_token``, ``insufficient_scope``) and their RFC 6750 challenges are
the identity provider's (identity/errors.py), shared with userinfo."""

from __future__ import annotations

from svc_sandbox.core.errors import SandboxError


class WalletError(SandboxError):
    """A wallet refusal: ``code`` is the wire value of ``error``, ``message`` says why."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message, status=status, code=code, headers=headers)


def key_required(message: str) -> WalletError:
    """401 ``jamidev_key_required`` (the spec's literal wire value, READING-NOTES 3); the
    challenge names the header that is missing."""
    challenge = 'X-Svc-Key realm="wallet"'
    return WalletError(401, "jamidev_key_required", message, {"WWW-Authenticate": challenge})


def bad_request(code: str, message: str) -> WalletError:
    return WalletError(400, code, message)
