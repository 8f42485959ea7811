"""The waitress server of `serve` and the svc_server fixture: idle connections do not stall it."""

from __future__ import annotations

import json
import socket
import urllib.request
from urllib.parse import urlsplit

from svc_sandbox.pytest_plugin import RunningServer

#: waitress's own default connection limit, which 105 idle connections used to exhaust.
WAITRESS_DEFAULT_LIMIT = 100


def test_more_idle_connections_than_waitress_default_do_not_stall_the_server(
    svc_server: RunningServer,
) -> None:
    assert svc_server.sandbox.settings.connection_limit > WAITRESS_DEFAULT_LIMIT + 50
    address = urlsplit(svc_server.url)
    idle = [
        socket.create_connection((address.hostname, address.port), timeout=10)
        for _ in range(WAITRESS_DEFAULT_LIMIT + 50)
    ]
    try:
        with urllib.request.urlopen(svc_server.url + "/_sandbox", timeout=20) as response:
            assert json.loads(response.read())["name"] == "svc-sandbox"
    finally:
        for connection in idle:
            connection.close()


def test_the_limits_are_settings_with_flags() -> None:
    from svc_sandbox.cli import build_parser, settings_from_args

    args = ["serve", "--connection-limit", "200", "--channel-timeout", "5"]
    settings = settings_from_args(build_parser().parse_args(args))
    assert (settings.connection_limit, settings.channel_timeout) == (200, 5.0)
