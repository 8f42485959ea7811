"""One error base for the whole sandbox; each API family renders it in its own body shape."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


class SandboxError(Exception):
    """A failure with an HTTP status, a machine code and a human message."""

    status = 400
    code = "bad_request"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        if code is not None:
            self.code = code
        self.headers = headers or {}


class ValidationFailed(SandboxError):
    status = 400
    code = "validation_failed"


class Unauthorized(SandboxError):
    status = 401
    code = "unauthorized"


class PaymentRequired(SandboxError):
    status = 402
    code = "payment_required"


class Forbidden(SandboxError):
    status = 403
    code = "forbidden"


class NotFound(SandboxError):
    status = 404
    code = "not_found"


class Conflict(SandboxError):
    status = 409
    code = "conflict"


class Unprocessable(SandboxError):
    status = 422
    code = "unprocessable"


class RateLimited(SandboxError):
    status = 429
    code = "rate_limited"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message, headers={"Retry-After": str(max(1, retry_after))})
        self.retry_after = retry_after


class BeyondCap(SandboxError):
    """A 429 that no wait cures (one payout above the whole daily cap): no ``Retry-After``,
    which a client would honour only to be refused again."""

    status = 429
    code = "rate_limited"


class ProviderRefused(SandboxError):
    status = 502
    code = "provider_refused"


class IllegalTransition(SandboxError):
    """A lifecycle move that its table does not allow: a bug or a race lost, never bad input."""

    status = 409
    code = "illegal_transition"


def found(value: T | None, message: str) -> T:
    """``value``, or a 404 with ``message`` when it is None (the services' get-or-404)."""
    if value is None:
        raise NotFound(message)
    return value
