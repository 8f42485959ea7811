"""The one waitress server builder, used by ``svc-sandbox serve``, ``svc-sandbox exec`` and the
pytest plugin (``ServerThread``: the server on a daemon thread)."""

from __future__ import annotations

import errno
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
        try:
            self._server.run()
        except OSError as exc:
            # A socket closed while select() was waiting on it is the shutdown we asked for;
            # anything else, or EBADF while serving, is a real failure.
            if not (self._closing.is_set() and exc.errno == errno.EBADF):
                raise

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ServerThread:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stops serving; calling it again does nothing."""
        from waitress import wasyncore

        if self._closing.is_set():
            return
        self._closing.set()

        # Close every socket from inside the server's own loop thread (closing them from here
        # races its select() and leaks connection sockets); an empty map ends the loop.
        sockets = self._server._map
        if self._thread.is_alive():
            self._server.trigger.pull_trigger(lambda: wasyncore.close_all(sockets))
            self._thread.join(timeout=5)
        else:
            wasyncore.close_all(sockets)
        self._server.task_dispatcher.shutdown()
