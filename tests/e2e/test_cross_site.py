"""A page of another site, open in the developer's browser while the sandbox runs: what its
scripts make the browser send in the background is refused before it counts, records or
changes anything; its links still lead to the sandbox's pages."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import Page

from svc_sandbox.pytest_plugin import RunningServer

#: Background requests (no-cors fetches, an image, a beacon) to each family, then a link.
ATTACKER = """<!doctype html><title>another site</title>
<a id="link" href="{sandbox}/_sandbox/ui">the dashboard</a>
<script>
const base = "{sandbox}";
const sent = [
  fetch(base + "/_sandbox/reset", {{method: "POST", mode: "no-cors", body: "{{}}"}}),
  fetch(base + "/api/products?limit=1000", {{mode: "no-cors"}}),
  fetch(base + "/auth/oauth2/token", {{method: "POST", mode: "no-cors", body: "a=b",
    headers: {{"Content-Type": "application/x-www-form-urlencoded"}}}}),
];
navigator.sendBeacon(base + "/api/checkout", "{{}}");
new Image().src = base + "/api/checkout/000000000000000000000000";
Promise.allSettled(sent).then(() => {{ document.title = "sent"; }});
</script>"""


@pytest.fixture
def other_site(svc_server: RunningServer) -> Iterator[str]:
    """The attacker page on ``localhost`` (another site than the sandbox's 127.0.0.1)."""
    page = ATTACKER.format(sandbox=svc_server.url).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_another_sites_page_reaches_nothing_but_by_its_links(
    page: Page, svc_server: RunningServer, other_site: str
) -> None:
    sandbox = svc_server.sandbox
    before = sandbox.export()
    page.goto(other_site)
    page.wait_for_function("document.title === 'sent'")
    page.wait_for_timeout(200)  # the beacon and the image go out on their own
    assert sandbox.journal.recent(1000) == []  # nothing of it recorded (or counted)
    assert sandbox.export() == before
    with page.expect_navigation() as followed:
        page.click("#link")  # a person following a link: served
    answer = followed.value
    assert answer is not None and answer.status == 200
    assert answer.url == f"{svc_server.url}/_sandbox/ui"
