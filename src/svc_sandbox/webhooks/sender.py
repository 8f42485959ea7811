"""One webhook POST over real HTTP, with its outcome; never raises.

A 2xx answered within the timeout is a success. ``Sender`` keeps one keep-alive connection per
receiver origin (a connection the receiver closed while idle is replaced before use, never
retried after a request went out) and calls in-process receivers (``inprocess:`` endpoints).
Anything else is a failure with a reason:
another status (a redirect is not followed), a refused or reset connection, an answer that is
not HTTP, or no answer in time.
"""

from __future__ import annotations

import http.client
import select
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from svc_sandbox.core.clock import monotonic

#: How much of the receiver's answer the journal keeps.
SNIPPET_CHARS = 200


@dataclass(slots=True)
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


#: An in-process receiver: gets the exact signed bytes and headers, answers a status.
Receiver = Callable[[bytes, dict[str, str]], int]

#: A receiver's answer up to this size is read whole, so its connection can be reused.
KEEP_ALIVE_MAX_BODY = 64 * 1024


class Sender:
    """POSTs webhooks over HTTP, reusing one keep-alive connection per origin, or hands them
    to in-process receivers. Used by one thread at a time (the dispatcher's send lock)."""

    def __init__(self, receivers: Mapping[str, Receiver] | None = None) -> None:
        #: In-process receivers by endpoint URL (``inprocess:<endpoint id>``).
        self.receivers: Mapping[str, Receiver] = receivers if receivers is not None else {}
        self._connections: dict[tuple[str, str, int | None], http.client.HTTPConnection] = {}
        #: New connections opened (a keep-alive test reads it).
        self.connections_opened = 0

    def post(self, url: str, body: bytes, headers: dict[str, str], timeout: float) -> Outcome:
        """POSTs ``body`` to ``url`` and reports what happened within ``timeout`` seconds."""
        if url.startswith(INPROCESS_SCHEME):
            return self._call(url, body, headers)
        return _outcome(url, body, headers, timeout, self._exchange)

    def _call(self, url: str, body: bytes, headers: dict[str, str]) -> Outcome:
        receiver = self.receivers.get(url)
        if receiver is None:
            return Outcome(None, "connection_error", "no in-process receiver is registered")
        started = monotonic()
        try:
            status = int(receiver(body, dict(headers)))
        except Exception as exc:  # a receiver must never crash the sandbox
            return Outcome(None, "connection_error", f"receiver raised {type(exc).__name__}: {exc}")
        duration = round((monotonic() - started) * 1000, 3)
        return Outcome(status, None, f"answered {status}", duration)

    def _exchange(
        self, url: str, body: bytes, headers: dict[str, str], timeout: float
    ) -> tuple[int, str, str | None]:
        parts = urlsplit(url)
        key = (parts.scheme, parts.hostname or "", parts.port)
        connection = self._connections.pop(key, None)
        if connection is not None and _dropped(connection):
            connection.close()  # the receiver closed the idle connection: open a new one
            connection = None
        if connection is None:
            connection = _connect(url, timeout)
            self.connections_opened += 1
        elif connection.sock is not None:
            connection.sock.settimeout(timeout)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        reusable = False
        try:
            connection.request("POST", target, body=body, headers=headers)
            response = connection.getresponse()
            length = response.length
            if not response.will_close and length is not None and length <= KEEP_ALIVE_MAX_BODY:
                raw = response.read()
                reusable = True
            else:
                raw = response.read(SNIPPET_CHARS * 4)
            text = raw.decode("utf-8", "replace")[:SNIPPET_CHARS]
            return response.status, text, response.getheader("Location")
        finally:
            if reusable:
                self._connections[key] = connection
            else:
                connection.close()

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()


INPROCESS_SCHEME = "inprocess:"

Exchange = Callable[[str, bytes, dict[str, str], float], tuple[int, str, "str | None"]]


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> Outcome:
    """One POST on a connection of its own (closed after), with its outcome."""
    sender = Sender()
    try:
        return sender.post(url, body, headers, timeout)
    finally:
        sender.close()


def _outcome(
    url: str, body: bytes, headers: dict[str, str], timeout: float, exchange: Exchange
) -> Outcome:
    """Runs one exchange and turns what happened into an Outcome (never raises)."""
    started = monotonic()

    def elapsed_ms() -> float:
        return round((monotonic() - started) * 1000, 3)

    try:
        status, text, location = exchange(url, body, headers, timeout)
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


def _connect(url: str, timeout: float) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    connection_class = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    return connection_class(parts.hostname or "", parts.port, timeout=timeout)


def _dropped(connection: http.client.HTTPConnection) -> bool:
    """Whether an idle kept-alive connection was closed by the receiver (readable at rest
    means end of stream, or unexpected bytes: either way not reusable)."""
    sock = connection.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)
