"""The one waitress server builder, used by ``svc-sandbox serve``, ``svc-sandbox exec`` and the
pytest plugin (``ServerThread``: the server on a daemon thread)."""

from __future__ import annotations

import threading
from typing import Any

from svc_sandbox.settings import Settings


def build_server(app: Any, settings: Settings) -> Any:
    """A waitress server for ``app`` on ``settings.host``/``port`` with the sandbox's thread
    count, connection limit and idle timeout; a port of 0 is replaced by the one picked."""
    from waitress.server import create_server

    server: Any = create_server(
        app,
        host=settings.host,
        port=settings.port,
        threads=settings.threads,
        connection_limit=settings.connection_limit,
        channel_timeout=settings.channel_timeout,
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
        self._thread = threading.Thread(target=self._serve, name="svc-sandbox-server", daemon=True)

    def _serve(self) -> None:
        self._server.run()  # returns once close() has emptied the socket map

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ServerThread:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stops serving; calling it again does nothing.

        The order matters (waitress 3, wasyncore and trigger.py): worker threads wake the loop
        through the trigger pipe when a response is ready, so the trigger must outlive them
        (a write to a closed trigger fd is EBADF in the worker, or lands in whatever socket
        reused the number); and sockets must be closed by the loop thread itself, never while
        its select() waits on them. So: stop accepting, let the workers finish what they are
        running (the loop still flushes their output), then close every socket, trigger
        included, from inside the loop, which ends it.
        """
        from waitress import wasyncore

        if self._closing.is_set():
            return
        self._closing.set()
        server = self._server
        sockets = server._map
        if not self._thread.is_alive():  # never started: no loop, no race
            server.task_dispatcher.shutdown()
            wasyncore.close_all(sockets)
            return
        # The listening socket alone (the server's own close() would close the trigger too).
        server.trigger.pull_trigger(lambda: wasyncore.dispatcher.close(server))
        server.task_dispatcher.shutdown()  # running requests end; queued ones are cancelled
        server.trigger.pull_trigger(lambda: wasyncore.close_all(sockets))
        self._thread.join(timeout=5)
