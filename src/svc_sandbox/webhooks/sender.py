"""One webhook POST over real HTTP, with its outcome; never raises.

A 2xx answered within the timeout is a success. Anything else is a failure with a reason:
another status (a redirect is not followed), a refused or reset connection, an answer that is
not HTTP, or no answer in time.
"""

from __future__ import annotations

import http.client
from dataclasses import dataclass
from urllib.parse import urlsplit

from svc_sandbox.core.clock import monotonic

#: How much of the receiver's answer the journal keeps.
SNIPPET_CHARS = 200


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    #: None when the receiver answered in time; else timeout, no_response, connection_reset,
    #: connection_error, invalid_response, fault_injected, endpoint_disabled, endpoint_deleted.
    error: str | None
    message: str
    duration_ms: float = 0.0
    snippet: str = ""

    @property
    def succeeded(self) -> bool:
        return self.error is None and self.status_code is not None and 200 <= self.status_code < 300


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> Outcome:
    """POSTs ``body`` to ``url`` and reports what happened within ``timeout`` seconds."""
    started = monotonic()

    def elapsed_ms() -> float:
        return round((monotonic() - started) * 1000, 3)

    try:
        status, text, location = _exchange(url, body, headers, timeout)
    except TimeoutError:
        return Outcome(None, "timeout", f"no answer within {timeout:g} s", elapsed_ms())
    except http.client.RemoteDisconnected:
        return Outcome(None, "no_response", "closed the connection without answering", elapsed_ms())
    except ConnectionResetError as exc:
        return Outcome(None, "connection_reset", f"connection reset: {exc}", elapsed_ms())
    except http.client.HTTPException as exc:
        message = f"not an HTTP answer: {type(exc).__name__} {exc}"[:SNIPPET_CHARS]
        return Outcome(None, "invalid_response", message, elapsed_ms())
    except (OSError, ValueError) as exc:
        return Outcome(None, "connection_error", f"{type(exc).__name__}: {exc}", elapsed_ms())
    duration = elapsed_ms()
    if duration > timeout * 1000:
        return Outcome(status, "timeout", f"answered after {timeout:g} s", duration, text)
    if 300 <= status < 400:
        message = f"redirect to {location or '?'} (not followed)"
    else:
        message = f"answered {status}"
    return Outcome(status, None, message, duration, text)


def _exchange(
    url: str, body: bytes, headers: dict[str, str], timeout: float
) -> tuple[int, str, str | None]:
    parts = urlsplit(url)
    connection_class = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    connection = connection_class(parts.hostname or "", parts.port, timeout=timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("POST", target, body=body, headers=headers)
        response = connection.getresponse()
        raw = response.read(SNIPPET_CHARS * 4)
        text = raw.decode("utf-8", "replace")[:SNIPPET_CHARS]
        return response.status, text, response.getheader("Location")
    finally:
        connection.close()
