"""Errors of the client library (spec §7: they carry ``status``, ``code`` and ``requestId``).

Every failure of a call is an ``SvcError``: an error answer of the API, an answer that is not
the JSON the contract promises, a transport failure, or a poll that ran out of time. The class
says the status family; ``code`` is a stable string to branch on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: The commerce API's error bodies carry no code (``{error}`` or ``{message}``): the client
#: names each status so that callers can branch on ``code`` (docs/spec-gaps.md, Client).
STATUS_CODES = {
    400: "invalid_request",
    401: "unauthorized",
    402: "payment_required",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "locked_field",
    429: "rate_limited",
    500: "server_error",
    502: "provider_refused",
    503: "unavailable",
}


class SvcError(Exception):
    """A failed call. ``status`` is None when no HTTP answer came (transport, poll timeout)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str,
        request_id: str | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.request_id = request_id
        #: The decoded error body, or the raw text when it was not JSON.
        self.body = body

    def __str__(self) -> str:
        where = f" [{self.status}]" if self.status is not None else ""
        request = f" (request {self.request_id})" if self.request_id else ""
        return f"{self.code}{where}: {self.message}{request}"


class SvcClientError(SvcError):
    """A 4xx answer: fix the request."""


class SvcAuthenticationError(SvcClientError):
    """401: missing, malformed, revoked or wrong-environment token."""


class SvcNotFoundError(SvcClientError):
    """404: not found, or not in the organization."""


class SvcRateLimitError(SvcClientError):
    """429: a checkout rate limit or the daily payout cap; ``retry_after`` in seconds if sent."""

    retry_after: float | None = None


class SvcServerError(SvcError):
    """A 5xx answer (502: the payment provider refused the checkout)."""


class SvcResponseError(SvcError):
    """An answer that is not the JSON the contract promises (not JSON, truncated, wrong shape)."""


class SvcTransportError(SvcError):
    """No answer: the connection failed or timed out."""


class SvcPollTimeout(SvcError):
    """``wait_for_checkout`` gave up (code ``poll_timeout``); ``last`` is the last status."""

    last: Any = None


def error_class(status: int) -> type[SvcError]:
    if status == 401:
        return SvcAuthenticationError
    if status == 404:
        return SvcNotFoundError
    if status == 429:
        return SvcRateLimitError
    if 400 <= status < 500:
        return SvcClientError
    if status >= 500:
        return SvcServerError
    return SvcResponseError


def from_answer(status: int, body: Any, request_id: str | None) -> SvcError:
    """The error an error answer means: message from ``error`` or ``message``, code from the
    body's ``code`` when it has one (the control plane's), else from the status."""
    message = f"HTTP {status}"
    code = STATUS_CODES.get(status, f"http_{status}")
    if isinstance(body, dict):
        text = body.get("error") or body.get("message")
        if isinstance(text, str) and text:
            message = text
        if isinstance(body.get("code"), str) and body["code"]:
            code = body["code"]
    return error_class(status)(message, status=status, code=code, request_id=request_id, body=body)


#: Reads an error answer (status, decoded body, request id) into the error it means.
ErrorReader = Callable[[int, Any, str | None], SvcError]


def from_coded_answer(status: int, body: Any, request_id: str | None) -> SvcError:
    """The error of an identity or wallet answer, whose ``error`` is the code (RFC 6749
    ``{error, error_description}``; the wallet's ``{error, message}``, spec §7)."""
    code = STATUS_CODES.get(status, f"http_{status}")
    message = f"HTTP {status}"
    if isinstance(body, dict):
        if isinstance(body.get("error"), str) and body["error"]:
            code = message = body["error"]
        for field in ("error_description", "message"):
            if isinstance(body.get(field), str) and body[field]:
                message = body[field]
                break
    return error_class(status)(message, status=status, code=code, request_id=request_id, body=body)
