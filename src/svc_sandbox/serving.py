"""A WSGI app served by waitress on a thread (the pytest plugin and ``svc-sandbox exec``)."""

from __future__ import annotations

import threading
from typing import Any

from waitress import wasyncore
from waitress.server import create_server


class ServerThread:
    """Serves ``app`` on ``host:port`` (0 picks a free port) from a daemon thread."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, threads: int = 8) -> None:
        self._server = create_server(app, host=host, port=port, threads=threads)
        self.host = host
        self.port = int(self._server.effective_port)  # type: ignore[union-attr]
        self._thread = threading.Thread(
            target=self._server.run, name="svc-sandbox-server", daemon=True
        )

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ServerThread:
        self._thread.start()
        return self

    def close(self) -> None:
        # Close every socket from inside the server's own loop thread (closing them from here
        # races its select() and leaks connection sockets); an empty map ends the loop.
        sockets = self._server._map  # type: ignore[union-attr]
        self._server.trigger.pull_trigger(  # type: ignore[union-attr]
            lambda: wasyncore.close_all(sockets)
        )
        self._thread.join(timeout=5)
        self._server.task_dispatcher.shutdown()
