"""The local webhook receiver the benches deliver to: HTTP/1.1 keep-alive on 127.0.0.1,
answering every POST with one status after an optional delay (a handler doing its work)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple


def handler(status: int, delay: float = 0.0) -> type[BaseHTTPRequestHandler]:
    class Answering(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out as two writes: without this, Nagle's algorithm and the
        # client's delayed ACK add 40 ms to every keep-alive answer.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: object) -> None:
            return

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if delay:
                time.sleep(delay)
            try:
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
            except OSError:  # the sandbox gave up waiting and closed the connection
                self.close_connection = True

    return Answering


class Running(NamedTuple):
    url: str
    port: int


@contextmanager
def receiving(status: int = 200, delay: float = 0.0) -> Iterator[Running]:
    """A running receiver: its URL (…/hooks) and port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(status, delay))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        port = int(server.server_address[1])
        yield Running(f"http://127.0.0.1:{port}/hooks", port)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
