"""The one waitress server builder, used by ``svc-sandbox serve``, ``svc-sandbox exec`` and the
pytest plugin (``ServerThread``: the server on a daemon thread)."""

from __future__ import annotations

import sys
import threading
from typing import Any

from svc_sandbox.settings import Settings

#: What binding a listening socket raises: OSError (in use, not assignable, a name that does
#: not resolve), ValueError (waitress: no address at all), OverflowError (a port past 65535).
LISTEN_ERRORS = (OSError, ValueError, OverflowError)
#: waitress's own interval between looks for idle connections, shortened to a smaller
#: ``channel_timeout``.
CLEANUP_INTERVAL = 30  # whole seconds, as waitress reads it
#: Longest request line + headers a server here reads (waitress's own default, written out so
#: that the tool server's h11 reads the same: a longer one is refused before the app).
MAX_REQUEST_HEAD_BYTES = 256 * 1024


def cannot_listen(host: str, port: int, exc: BaseException) -> str:
    """The one line ``serve``, ``exec`` and ``mcp --http`` print when they cannot listen."""
    if isinstance(exc, OSError) and exc.strerror:
        reason = exc.strerror
    elif isinstance(exc, ValueError):
        reason = "not an address this machine can listen on"
    else:
        reason = str(exc)
    where = f"[{host}]:{port}" if ":" in host else f"{host or repr(host)}:{port}"
    return f"svc-sandbox: cannot listen on {where}: {reason}"


def body_limit(settings: Settings) -> int:
    """The body size from which waitress refuses a request (413, plain text) before the app
    sees it: a quarter more than the largest body the app takes (1 MiB, or a state import's
    ``max_state_bytes``), so a body a little over answers the app's own JSON 413 naming its
    limit, and chunked framing (which waitress counts) has room. Waitress buffers a body
    whole before the app runs: its own default, 1 GiB, let any route buffer that much."""
    from svc_sandbox.web import MAX_BODY_BYTES  # the app's: Flask is loaded with it

    largest = max(MAX_BODY_BYTES, settings.max_state_bytes)
    return largest + largest // 4


def build_server(app: Any, settings: Settings) -> Any:
    """A waitress server for ``app`` on ``settings.host``/``port`` with the sandbox's thread
    count, connection limit, idle timeout and body limit; a port of 0 is replaced by the one
    picked."""
    from waitress.server import create_server

    server: Any = create_server(
        app,
        host=settings.host,
        port=settings.port,
        threads=settings.threads,
        connection_limit=settings.connection_limit,
        channel_timeout=settings.channel_timeout,
        # waitress looks for idle connections every cleanup_interval (30 s): a shorter
        # channel_timeout was only met after up to 30 s more.
        cleanup_interval=max(1, min(CLEANUP_INTERVAL, int(settings.channel_timeout))),
        max_request_body_size=body_limit(settings),
        max_request_header_size=MAX_REQUEST_HEAD_BYTES,
    )
    if settings.port == 0:
        settings.port = int(server.effective_port)
    return server


class ServerThread:
    """Serves ``app`` from a daemon thread on ``settings.host``/``port`` (0 picks a free port,
    written back into ``settings``)."""

    def __init__(self, app: Any, settings: Settings) -> None:
        self._server = build_server(app, settings)
        self.host = settings.host
        self.port = int(self._server.effective_port)
        self._closing = threading.Event()
        #: Whether the thread entered its loop, and whether close() came first (then the
        #: thread never runs it): decided under one lock, as Ctrl-C may interrupt start()
        #: before or after the thread began, and is_alive() says neither for sure.
        self._gate = threading.Lock()
        self._looping = False
        self._closed_first = False
        self._thread = threading.Thread(target=self._serve, name="svc-sandbox-server", daemon=True)

    def _serve(self) -> None:
        with self._gate:
            if self._closed_first:
                return
            self._looping = True
        try:
            self._server.run()  # returns once close() has emptied the socket map
        except Exception as exc:
            if not self._closing.is_set():
                raise
            # Stopping already (a loaded machine where close() stopped waiting for the loop):
            # the loop met a socket closed under it. One line, not a traceback the process
            # may exit in the middle of (seen twice in full test runs, cut after one frame).
            print(
                f"svc-sandbox: the server loop ended while stopping: {type(exc).__name__}: {exc}",
                file=sys.stderr,
                flush=True,
            )

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ServerThread:
        self._thread.start()
        return self

    def wait(self) -> None:
        """Returns once the server has stopped (in the main thread, Ctrl-C or SIGTERM's
        KeyboardInterrupt ends the wait)."""
        self._thread.join()

    def close(self) -> None:
        """Stops serving; calling it again does nothing.

        The order matters (waitress 3, wasyncore and trigger.py): worker threads wake the loop
        through the trigger pipe when a response is ready, so the trigger must outlive them
        (a write to a closed trigger fd is EBADF in the worker, or lands in whatever socket
        reused the number); and sockets must be closed by the loop thread itself, never while
        its select() waits on them. So: stop accepting, let the workers finish what they are
        running (the loop still flushes their output), then close every other socket from
        inside the loop and take the trigger out of its map, which ends it. The trigger's own
        pipe is closed last, here, once the loop has ended: the loop may run a thunk before
        ``pull_trigger`` has written its wake-up byte, so a thunk that closed the pipe would
        leave that write to a closed (or reused) descriptor.
        """
        from waitress import wasyncore

        if self._closing.is_set():
            return
        self._closing.set()
        server = self._server
        sockets = server._map
        trigger = server.trigger
        with self._gate:
            looping = self._looping
            self._closed_first = not looping
        if not looping:  # no loop runs or will: no race
            server.task_dispatcher.shutdown()
            wasyncore.close_all(sockets)
            return

        def close_all_but_the_trigger() -> None:
            wasyncore.close_all({fd: s for fd, s in sockets.items() if s is not trigger})
            trigger.del_channel()
            sockets.clear()  # the loop ends

        # The listening socket alone (the server's own close() would close the trigger too).
        trigger.pull_trigger(lambda: wasyncore.dispatcher.close(server))
        server.task_dispatcher.shutdown()  # running requests end; queued ones are cancelled
        trigger.pull_trigger(close_all_but_the_trigger)
        self._thread.join(timeout=5)
        if self._thread.is_alive():
            # Still looping (a loaded machine, a worker slow to end): closing the trigger
            # under its select() breaks the loop with a traceback. Left to the daemon thread,
            # which ends with the process or once the loop empties its map.
            return
        trigger.close()
