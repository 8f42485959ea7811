"""One webhook POST over real HTTP, with its outcome; never raises.

A 2xx status line and headers within the timeout is a success; the body of the answer is read
for the journal's snippet (and to keep the connection) but not required. The timeout is one
deadline for the whole attempt, counted from before the POST goes out: a receiver that drips
its answer a byte at a time cannot stretch it. ``Sender`` keeps a keep-alive connection per
receiver origin (a connection the receiver closed while idle is replaced before use; a POST
on a reused one closed without a byte of answer goes once more on a new one, nothing else
is sent twice; one whose answer was not read whole is closed), at most
``MAX_IDLE_CONNECTIONS`` of them and none idle for longer than ``IDLE_SECONDS``, and calls
in-process receivers (``inprocess:`` endpoints). Anything else is a failure with a reason:
another status (a redirect is not followed), a refused or reset connection, an answer that is
not HTTP, or no answer in time.
"""

from __future__ import annotations

import base64
import codecs
import http.client
import math
import select
import socket
import ssl
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import SplitResult, unquote, urlsplit

from svc_sandbox.core.clock import monotonic

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer, SupportsRead, WriteableBuffer

#: How much of the receiver's answer the journal keeps.
SNIPPET_CHARS = 200
#: The statuses that point elsewhere (RFC 9110 §15.4; 304 and 300 do not: "answered").
REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(slots=True)
class Outcome:
    status_code: int | None
    #: None when the receiver answered in time; else timeout, no_response, connection_reset,
    #: connection_error, invalid_response, fault_injected, endpoint_disabled, endpoint_deleted,
    #: signing_failed.
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

#: Idle keep-alive connections a sender keeps at most; past it the one idle longest is closed.
#: This many receivers can each be hot at once; a receiver per test (a new port each time)
#: no longer leaves a socket behind per test.
MAX_IDLE_CONNECTIONS = 32
#: An idle connection older than this (real seconds, not sandbox time: this is transport) is
#: closed at the sender's next use; receivers close theirs sooner (node 5 s, gunicorn 2 s).
IDLE_SECONDS = 15.0

#: Where a connection goes: scheme, host, port (the scheme's default port when none is given).
Origin = tuple[str, str, int | None]
DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> Origin:
    """The origin of ``url``, the key of its kept connection (none for a URL that cannot be
    read: no connection was made to it)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "", "", None
    return _origin(parts)


def _origin(parts: SplitResult) -> Origin:
    try:
        port = parts.port
    except ValueError:  # not a port: no connection was made to it
        port = None
    return parts.scheme, parts.hostname or "", port or DEFAULT_PORTS.get(parts.scheme)


class Sender:
    """POSTs webhooks over HTTP, reusing a keep-alive connection per origin, or hands them to
    in-process receivers. Posts to one origin come one at a time (the dispatcher's lanes),
    posts to different origins may come at once from different threads; ``keep_only`` and
    ``close`` may come from any thread (a delete, a reset, an import)."""

    def __init__(
        self,
        receiver_of: Callable[[str], Receiver | None] = lambda url: None,
        *,
        max_idle: int = MAX_IDLE_CONNECTIONS,
        idle_seconds: float = IDLE_SECONDS,
    ) -> None:
        #: The in-process receiver of an endpoint URL (``inprocess:<endpoint id>``), read at
        #: each call: a reset or an import puts the endpoints' receivers anew.
        self.receiver_of = receiver_of
        self.max_idle = max_idle
        self.idle_seconds = idle_seconds
        #: Idle connections and since when (``monotonic``), the one idle longest first.
        self._idle: OrderedDict[Origin, tuple[_Connection, float]] = OrderedDict()
        self._pool = threading.Lock()
        #: Counts ``keep_only`` calls: a connection out during one comes back only if the
        #: last one kept its origin (``_kept``).
        self._releases = 0
        self._kept: frozenset[Origin] = frozenset()
        #: New connections opened (a keep-alive test reads it).
        self.connections_opened = 0

    def post(self, url: str, body: bytes, headers: dict[str, str], timeout: float) -> Outcome:
        """POSTs ``body`` to ``url`` and reports what happened within ``timeout`` seconds."""
        if url.startswith(INPROCESS_SCHEME):
            return self._call(url, body, headers)
        return _outcome(url, body, headers, timeout, self._exchange)

    def _call(self, url: str, body: bytes, headers: dict[str, str]) -> Outcome:
        receiver = self.receiver_of(url)
        if receiver is None:
            return Outcome(None, "connection_error", "no in-process receiver is registered")
        started = monotonic()
        try:
            status = int(receiver(body, dict(headers)))
        except Exception as exc:  # a receiver must never crash the sandbox
            return Outcome(None, "connection_error", f"receiver raised {type(exc).__name__}: {exc}")
        duration = round((monotonic() - started) * 1000, 3)
        return Outcome(status, None, f"answered {status}", duration)

    def _exchange(self, url: str, body: bytes, headers: dict[str, str], timeout: float) -> Answer:
        deadline = monotonic() + timeout
        parts = urlsplit(url)
        key = _origin(parts)
        connection, releases = self._take(key)
        if connection is not None and _dropped(connection):
            connection.close()  # the receiver closed the idle connection: open a new one
            connection = None
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if parts.username is not None:  # https://user:pass@host/hooks: Basic auth (as Stripe)
            headers = {**headers, "Authorization": basic_credentials(parts)}
        if connection is not None:
            try:
                return self._send(key, connection, releases, url, target, body, headers, deadline)
            except (ConnectionResetError, BrokenPipeError):
                # A reused connection closed without a byte of answer: the receiver's idle
                # timeout ran out as the POST went out, so it closed rather than read it.
                # Sent once more on a new connection, as Go's HTTP client does; an outcome
                # that hung on when the receiver timed out would depend on wall-clock timing.
                pass
        return self._send(key, None, releases, url, target, body, headers, deadline)

    def _send(
        self,
        key: Origin,
        connection: _Connection | None,
        releases: int,
        url: str,
        target: str,
        body: bytes,
        headers: dict[str, str],
        deadline: float,
    ) -> Answer:
        """One POST on ``connection`` (None: a new one), kept for reuse if answered whole."""
        timeout = max(deadline - monotonic(), 0.001)
        reusable = False
        try:
            if connection is None:
                connection = _connect(url, timeout)
                connection.connect()
                with self._pool:
                    self.connections_opened += 1
            connection.start(deadline, timeout)
            connection.post(target, body, headers)
            response = connection.getresponse()
            answered = monotonic()
            raw, reusable = _read_body(response)
            text = snippet_of(raw)
            return Answer(response.status, text, response.getheader("Location"), answered)
        finally:
            if connection is not None:
                if reusable:
                    self._give_back(key, connection, releases)
                else:
                    connection.close()

    def _take(self, key: Origin) -> tuple[_Connection | None, int]:
        """The idle connection to ``key``, if any, after closing those idle too long."""
        now = monotonic()
        stale: list[_Connection] = []
        with self._pool:
            while self._idle:
                oldest, (connection, since) = next(iter(self._idle.items()))
                if now - since < self.idle_seconds:
                    break
                del self._idle[oldest]
                stale.append(connection)
            kept = self._idle.pop(key, None)
            releases = self._releases
        _close_all(stale)
        return (kept[0] if kept is not None else None), releases

    def _give_back(self, key: Origin, connection: _Connection, releases: int) -> None:
        """Keeps ``connection`` idle, unless ``keep_only`` let its origin go meanwhile; closes
        the ones idle longest past ``max_idle``."""
        surplus: list[_Connection] = []
        with self._pool:
            if releases != self._releases and key not in self._kept:
                surplus.append(connection)
            else:
                self._idle[key] = (connection, monotonic())
            while len(self._idle) > self.max_idle:
                surplus.append(self._idle.popitem(last=False)[1][0])
        _close_all(surplus)

    def keep_only(self, urls: Collection[str]) -> None:
        """Closes every idle connection except those to the origins of ``urls`` (the URLs
        endpoints still point at); one out now is closed when it comes back, unless kept."""
        kept = frozenset(origin(url) for url in urls if not url.startswith(INPROCESS_SCHEME))
        with self._pool:
            self._releases += 1
            self._kept = kept
            gone = [key for key in self._idle if key not in kept]
            closing = [self._idle.pop(key)[0] for key in gone]
        _close_all(closing)

    def close(self) -> None:
        """Closes every connection (one out now when it comes back)."""
        self.keep_only(())

    def idle(self) -> list[Origin]:
        """The origins of the idle connections kept, the one idle longest first."""
        with self._pool:
            return list(self._idle)


def _close_all(connections: Iterable[_Connection]) -> None:
    for connection in connections:
        connection.close()


INPROCESS_SCHEME = "inprocess:"


@dataclass(slots=True)
class Answer:
    """A receiver's answer: its status line and headers came in time; the body may not have."""

    status: int
    snippet: str
    location: str | None
    #: When the status line and headers had arrived (``monotonic``).
    at: float


Exchange = Callable[[str, bytes, dict[str, str], float], Answer]


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
        answer = exchange(url, body, headers, timeout)
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
    # The answer's time is when its status line and headers arrived; the body is not required.
    status, text = answer.status, answer.snippet
    duration = round((answer.at - started) * 1000, 3)
    if duration > timeout * 1000:
        return Outcome(status, "timeout", f"answered after {timeout:g} s", duration, text)
    if status in REDIRECTS:
        message = f"redirect to {answer.location or '?'} (not followed)"
    else:
        message = f"answered {status}"
    return Outcome(status, None, message, duration, text)


def snippet_of(raw: bytes) -> str:
    """The journal's text of what was read of an answer: cut at a character boundary. The read
    may end inside a UTF-8 sequence (the receiver's second TCP piece not read, or the byte
    limit), which ``decode("replace")`` would show as U+FFFD for a character sent whole; an
    incremental decoder not told the input is final leaves that tail out."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    return decoder.decode(raw, final=False)[:SNIPPET_CHARS]


def _read_body(response: http.client.HTTPResponse) -> tuple[bytes, bool]:
    """Reads what the deadline allows of the answer's body: all of it when it is small enough
    to keep the connection, else one read for the snippet. Returns the bytes and whether the
    connection can be used again (the body was read whole). A body cut short by the deadline,
    a reset or a bad chunk ends the read, not the answer."""
    length = response.length
    # A chunked body (Node's and many frameworks' default) has no length: read up to the
    # bound, and keep the connection if its last chunk came within it.
    chunked = bool(response.chunked)
    keep = not response.will_close and (
        chunked or (length is not None and length <= KEEP_ALIVE_MAX_BODY)
    )
    want = (length or KEEP_ALIVE_MAX_BODY) if keep else SNIPPET_CHARS * 4
    received = bytearray()
    try:
        while len(received) < want:
            chunk = response.read1(want - len(received))
            if not chunk:
                break
            received += chunk
            if not keep:
                break  # the snippet needs no more than one read
    except (OSError, ValueError, http.client.HTTPException):
        return bytes(received), False
    whole = response.isclosed() if chunked else response.length == 0
    if keep and whole:
        response.close()  # read whole: the connection is ready for the next request
        return bytes(received), True
    return bytes(received), False


def basic_credentials(parts: SplitResult) -> str:
    """The ``Authorization`` value of a URL's user and password (RFC 7617), percent-decoded."""
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")


class _FinalResponse(http.client.HTTPResponse):
    """An answer read past its interim 1xx responses (103 Early Hints, 102 Processing; 100
    Continue too) to the final one, which decides the attempt: RFC 9110 §15.2, a client must
    take 1xx answers it did not ask for. http.client skips 100 only. 101 is a final answer
    (a protocol switch nobody asked for: not a 2xx)."""

    def _read_status(self) -> tuple[str, int, str]:
        while True:
            version, status, reason = super()._read_status()  # type: ignore[misc]
            if not 100 <= status < 200 or status == 101:
                return version, status, reason
            http.client.parse_headers(self.fp)  # the interim answer's headers: read, dropped


def _connect(url: str, timeout: float) -> _Connection:
    parts = urlsplit(url)
    if parts.scheme == "https":
        context = ssl.create_default_context()
        context.sslsocket_class = _DeadlineSSLSocket
        return _SecureConnection(parts.hostname or "", parts.port, timeout=timeout, context=context)
    return _PlainConnection(parts.hostname or "", parts.port, timeout=timeout)


#: How far past its deadline a wait may end: a socket's timeout is only shortened (a system
#: call) when it would overrun by more, so a prompt answer costs no extra calls.
DEADLINE_SLACK_SECONDS = 0.05


def _spend(sock: socket.socket, deadline: float) -> None:
    """Gives the next wait on ``sock`` only the time left before ``deadline``."""
    left = deadline - monotonic()
    if left <= 0:
        raise TimeoutError("timed out")
    timeout = sock.gettimeout()
    if timeout is None or timeout > left + DEADLINE_SLACK_SECONDS:
        sock.settimeout(left)


class _DeadlineSocket(socket.socket):
    """A socket whose every read and send may wait only until ``deadline`` (a monotonic
    reading): the socket timeout alone bounds each read, not the answer as a whole."""

    deadline = math.inf

    def recv_into(self, buffer: WriteableBuffer, nbytes: int = 0, flags: int = 0) -> int:
        _spend(self, self.deadline)
        return super().recv_into(buffer, nbytes, flags)

    def sendall(self, data: ReadableBuffer, flags: int = 0) -> None:
        _spend(self, self.deadline)
        super().sendall(data, flags)


class _DeadlineSSLSocket(ssl.SSLSocket):
    """The same deadline for an https receiver (reads and sends go through the TLS layer)."""

    deadline = math.inf

    def recv_into(self, buffer: WriteableBuffer, nbytes: int | None = None, flags: int = 0) -> int:
        _spend(self, self.deadline)
        return super().recv_into(buffer, nbytes, flags)

    def sendall(self, data: ReadableBuffer, flags: int = 0) -> None:
        _spend(self, self.deadline)
        super().sendall(data, flags)


class _Connection(http.client.HTTPConnection):
    """A webhook connection: its socket waits only until the attempt's deadline, and a
    request's head and body go out in one write (two small writes cost a second system call
    and wake the receiver twice; the bytes are the same)."""

    response_class = _FinalResponse
    #: The request head, held back until its body is sent with it.
    _head: bytes | None = None
    _joining = False

    def start(self, deadline: float, timeout: float) -> None:
        """Starts an attempt that must be over by ``deadline`` (a ``monotonic`` reading)."""
        sock = self.sock
        if isinstance(sock, _DeadlineSocket | _DeadlineSSLSocket):
            sock.deadline = deadline
        if sock is not None:
            sock.settimeout(timeout)

    def post(self, target: str, body: bytes, headers: dict[str, str]) -> None:
        self._joining = bool(body)
        try:
            self.request("POST", target, body=body, headers=headers)
        finally:
            self._joining, self._head = False, None

    def send(
        self, data: ReadableBuffer | SupportsRead[bytes] | Iterable[ReadableBuffer] | str
    ) -> None:
        # http.client sends the head, then the body: the head waits for the body.
        if self._joining and isinstance(data, bytes):
            if self._head is None:
                self._head = data
                return
            data, self._joining, self._head = self._head + data, False, None
        super().send(data)


class _PlainConnection(_Connection):
    def connect(self) -> None:
        super().connect()
        plain = self.sock
        assert plain is not None
        timeout = plain.gettimeout()
        self.sock = _DeadlineSocket(plain.family, plain.type, plain.proto, plain.detach())
        self.sock.settimeout(timeout)


class _SecureConnection(_Connection, http.client.HTTPSConnection):
    """An https connection; its context makes ``_DeadlineSSLSocket``s."""


def _dropped(connection: _Connection) -> bool:
    """Whether an idle kept-alive connection was closed by the receiver (readable at rest
    means end of stream, or unexpected bytes: either way not reusable). ``poll`` where the
    system has it: ``select`` refuses a descriptor past 1023, and a busy server has those."""
    sock = connection.sock
    if sock is None:
        return True
    try:
        if hasattr(select, "poll"):
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)
