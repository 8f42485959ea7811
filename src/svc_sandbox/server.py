"""The one waitress server builder, used by ``svc-sandbox serve`` and the ``svc_server`` fixture."""

from __future__ import annotations

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
