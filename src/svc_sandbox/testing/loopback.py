"""A small HTTP server on 127.0.0.1, in a daemon thread, that hands every POST to a callback:
the webhook receivers of the pytest plugin (testing/webhooks.py) and of scenarios
(scenarios/receiver.py) are both one of these with their own filing and answers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: What the callback gets (path, headers, body) and gives back (status, body).
OnPost = Callable[[str, dict[str, str], bytes], tuple[int, bytes]]


class LoopbackServer:
    def __init__(self, on_post: OnPost, name: str) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, payload = on_post(self.path, dict(self.headers), body)
                self.send_response(status)
                if payload:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=name,
            daemon=True,
        )
        self._thread.start()

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
