"""Pages: time to first byte and page weight of every page a person opens.

Serves one Sandbox with waitress in this process (like `serve`), fills it with the browser
tests' tour (products, checkouts in each state, a withdrawal in review, events), then fetches
each page ``runs`` times, alternating with a bare Flask endpoint served the same way (the
baseline; only ratios mean anything on a noisy machine). Weight is the HTML plus the
stylesheet and scripts it links (uncompressed; images are the products' own URLs). Usage:
    .venv/bin/python bench/pages.py [runs]
"""

from __future__ import annotations

import http.client
import re
import statistics
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).parents[1]))

from bench._bare_flask import make_app  # noqa: E402
from tests.e2e.pages_tour import populate  # noqa: E402
from tests.helpers import token_of  # noqa: E402
from waitress.server import create_server  # noqa: E402

from svc_sandbox.app import create_app  # noqa: E402
from svc_sandbox.sandbox import Sandbox  # noqa: E402

ASSET = re.compile(r'(?:href|src)="(/_assets/[^"]+)"')


def serve(app: object) -> int:
    server = create_server(app, host="127.0.0.1", port=0, threads=8)
    threading.Thread(target=server.run, daemon=True).start()
    return int(server.effective_port)  # type: ignore[union-attr]


def fetch(port: int, path: str) -> tuple[float, bytes]:
    """Seconds from sending the request to the first byte of the answer, and the body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.connect()
        started = time.perf_counter()
        connection.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
        response = connection.getresponse()
        first_byte = time.perf_counter() - started
        return first_byte, response.read()
    finally:
        connection.close()


def main(runs: int = 15) -> None:
    sandbox = Sandbox(clock_mode="frozen", seed=1, port=0)
    app = create_app(sandbox)
    sandbox.settings.port = port = serve(app)
    bare = serve(make_app())
    client = app.test_client()
    auth = {"Authorization": f"Bearer {token_of(sandbox, 'sandbox')}"}
    live = {"Authorization": f"Bearer {token_of(sandbox, 'production')}"}
    pages = populate(client, sandbox, auth, live)
    print(f"runs: {runs} (medians); baseline: bare Flask GET /ping on waitress")
    print(f"{'page':<16} {'TTFB ms':>8} {'x bare':>7} {'HTML B':>7} {'total B':>8}")
    for name, url in pages.items():
        path = urlsplit(url).path + ("?" + urlsplit(url).query if urlsplit(url).query else "")
        ours, base = [], []
        body = b""
        for _ in range(runs):
            seconds, body = fetch(port, path)
            ours.append(seconds)
            base.append(fetch(bare, "/ping")[0])
        assets = sorted(set(ASSET.findall(body.decode())))
        weight = len(body) + sum(len(fetch(port, asset)[1]) for asset in assets)
        ttfb, baseline = statistics.median(ours), statistics.median(base)
        print(f"{name:<16} {ttfb * 1000:8.2f} {ttfb / baseline:7.1f} {len(body):7d} {weight:8d}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
