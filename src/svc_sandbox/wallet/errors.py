"""The wallet API's errors (spec §7 "Wallet API errors"): body ``{error}`` with these codes."""

from __future__ import annotations

from svc_sandbox.core.errors import SandboxError

#: The wallet API's realm in WWW-Authenticate challenges.
REALM = "wallet"


class WalletError(SandboxError):
    """A wallet refusal: ``code`` is the wire value of ``error``, ``message`` says why."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message, status=status, code=code, headers=headers)


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def bearer_challenge(error: str, description: str, scope: str | None = None) -> str:
    """An RFC 6750 §3 challenge (``Bearer realm=..., error=..., ...``)."""
    params = [f"realm={_quoted(REALM)}", f"error={_quoted(error)}"]
    if scope is not None:
        params.append(f"scope={_quoted(scope)}")
    params.append(f"error_description={_quoted(description)}")
    return "Bearer " + ", ".join(params)


def invalid_token(message: str) -> WalletError:
    """401 ``invalid_token`` with its Bearer challenge."""
    challenge = bearer_challenge("invalid_token", message)
    return WalletError(401, "invalid_token", message, {"WWW-Authenticate": challenge})


def insufficient_scope(scope: str, message: str) -> WalletError:
    """403 ``insufficient_scope`` whose challenge names the scope the call needs."""
    challenge = bearer_challenge("insufficient_scope", message, scope)
    return WalletError(403, "insufficient_scope", message, {"WWW-Authenticate": challenge})


def key_required(message: str) -> WalletError:
    """401 ``jamidev_key_required`` (the spec's literal wire value, READING-NOTES 3)."""
    challenge = f"X-Svc-Key realm={_quoted(REALM)}"
    return WalletError(401, "jamidev_key_required", message, {"WWW-Authenticate": challenge})


def bad_request(code: str, message: str) -> WalletError:
    return WalletError(400, code, message)
