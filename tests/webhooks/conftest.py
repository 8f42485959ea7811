"""Fixtures of the webhook tests: a real receiver on 127.0.0.1 and an endpoint pointing at it."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from tests.webhooks.receiver import Receiver, running_receiver

SECRET = "whsec_receiver_test_secret"

ORDER_FIELDS = {
    "sessionId",
    "orderId",
    "metadata",
    "description",
    "amount",
    "currency",
    "customerExternalId",
}
#: The data fields of each event type, as docs/webhooks.md documents them.
DOCUMENTED_DATA = {
    "order.created": ORDER_FIELDS,
    "order.completed": ORDER_FIELDS | {"paidAt"},
    "checkout.session.expired": {"sessionId", "failure"},
}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver(200) as running:
        yield running


@pytest.fixture
def svc_sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """The plugin's sandbox (frozen clock, seed 1); ``indirect`` "real" gives a real clock with
    its ticker and delivery worker running, and a dict gives settings (``clock_mode`` among
    them, frozen if left out)."""
    param = getattr(request, "param", "frozen")
    settings = param if isinstance(param, dict) else {"clock_mode": param}
    sandbox = Sandbox(
        **{"clock_mode": "frozen", "seed": 1, "port": 0, "tick_seconds": 0.02, **settings}
    )
    sandbox.start_background()
    try:
        yield sandbox
    finally:
        sandbox.stop()


@pytest.fixture
def hanging_receiver() -> Iterator[Receiver]:
    with running_receiver("hang") as receiver:
        yield receiver


def wait_until(done: Callable[[], object], timeout: float = 10.0) -> None:
    """Waits (bounded) for ``done()``; the assertion after it says what did not happen."""
    finished = threading.Event()
    while not done() and not finished.wait(0.01):
        timeout -= 0.01
        if timeout <= 0:
            return


def call(server: RunningServer, method: str, path: str, body: Any = None, **headers: str) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        server.url + path,
        data=data,
        method=method,
        headers={"Content-Type": "application/json", **headers},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def setup_endpoint(server: RunningServer, receiver: Receiver) -> None:
    call(server, "POST", "/_sandbox/webhooks/endpoints", {"url": receiver.url, "secret": SECRET})


def add_endpoint(client: FlaskClient, url: str, **fields: Any) -> dict[str, Any]:
    body = {"url": url, "secret": SECRET, **fields}
    response = client.post("/_sandbox/webhooks/endpoints", json=body)
    assert response.status_code == 201, response.json
    endpoint: dict[str, Any] = response.json  # type: ignore[assignment]
    return endpoint


def trigger(client: FlaskClient, type_: str, **fields: Any) -> dict[str, Any]:
    response = client.post("/_sandbox/events/trigger", json={"type": type_, **fields})
    assert response.status_code == 201, response.json
    event: dict[str, Any] = response.json["event"]  # type: ignore[index]
    return event


def flush(client: FlaskClient) -> list[dict[str, Any]]:
    response = client.post("/_sandbox/webhooks/flush", json={})
    assert response.status_code == 200, response.json
    attempts: list[dict[str, Any]] = response.json["attempts"]  # type: ignore[index]
    return attempts


def advance(client: FlaskClient, duration: str) -> dict[str, Any]:
    response = client.post("/_sandbox/clock/advance", json={"duration": duration})
    assert response.status_code == 200, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result


def attempts(client: FlaskClient, **filters: str) -> list[dict[str, Any]]:
    response = client.get("/_sandbox/webhooks/attempts", query_string=filters)
    assert response.status_code == 200, response.json
    items: list[dict[str, Any]] = response.json["items"]  # type: ignore[index]
    return items
