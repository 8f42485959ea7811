"""pytest fixtures for testing against svc-sandbox (registered through the pytest11 entry point).

* ``svc_sandbox``: a fresh frozen-clock Sandbox (seed 1) per test, in strict contract mode
  (every commerce response is validated against the contract; a violation is a 500).
* ``svc_app`` / ``svc_client``: its Flask app and test client.
* ``svc_server``: the same Sandbox served by a real multi-threaded server on 127.0.0.1.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from flask import Flask
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.scenarios.pytest_items import (  # noqa: F401  (hooks: YAML scenarios as items)
    pytest_addoption,
    pytest_collect_file,
    pytest_configure,
)


@dataclass
class RunningServer:
    url: str
    sandbox: Sandbox


@pytest.fixture
def svc_sandbox() -> Sandbox:
    return Sandbox(clock_mode="frozen", seed=1, strict=True)


@pytest.fixture
def svc_app(svc_sandbox: Sandbox) -> Flask:
    return create_app(svc_sandbox)


@pytest.fixture
def svc_client(svc_app: Flask) -> FlaskClient:
    return svc_app.test_client()


@pytest.fixture
def svc_server(svc_sandbox: Sandbox, svc_app: Flask) -> Iterator[RunningServer]:
    from waitress import wasyncore

    from svc_sandbox.server import build_server

    svc_sandbox.settings.host, svc_sandbox.settings.port = "127.0.0.1", 0
    server = build_server(svc_app, svc_sandbox.settings)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield RunningServer(url=svc_sandbox.settings.origin, sandbox=svc_sandbox)
    finally:
        # Close every socket from inside the server's own loop thread (closing them from here
        # races its select() and leaks connection sockets); an empty map ends the loop.
        sockets = server._map
        server.trigger.pull_trigger(lambda: wasyncore.close_all(sockets))
        thread.join(timeout=5)
        server.task_dispatcher.shutdown()
