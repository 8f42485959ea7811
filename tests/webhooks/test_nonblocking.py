"""Delivery never slows the API request that caused the event (spec §6): a receiver that hangs
holds up only the delivery. Asserted on order of events, not on timings."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from svc_sandbox.pytest_plugin import RunningServer
from tests.helpers import token_of
from tests.webhooks.conftest import call, setup_endpoint
from tests.webhooks.receiver import Receiver


def test_frozen_clock_requests_go_on_while_a_flush_waits_for_a_hanging_receiver(
    svc_server: RunningServer, hanging_receiver: Receiver
) -> None:
    setup_endpoint(svc_server, hanging_receiver)
    call(svc_server, "POST", "/_sandbox/events/trigger", {"type": "order.created"})
    flushed: list[Any] = []
    flusher = threading.Thread(
        target=lambda: flushed.append(call(svc_server, "POST", "/_sandbox/webhooks/flush"))
    )
    flusher.start()
    assert hanging_receiver.hanging.wait(10)

    # While the receiver hangs: an event-causing call, a commerce call and a read all answer.
    event = call(svc_server, "POST", "/_sandbox/events/trigger", {"type": "order.completed"})
    auth = {"Authorization": f"Bearer {token_of(svc_server.sandbox)}"}
    product = call(
        svc_server,
        "POST",
        "/api/products",
        {"title": "Book", "pricingModel": "fixed", "price": {"amount": 5000}},
        **auth,
    )
    info = call(svc_server, "GET", "/_sandbox")
    assert event["event"]["type"] == "order.completed"
    assert product["product"]["_id"] and info["name"] == "svc-sandbox"
    assert flusher.is_alive() and not hanging_receiver.release.is_set()
    assert len(hanging_receiver.received) == 1

    hanging_receiver.release.set()
    flusher.join(timeout=30)
    [report] = flushed
    assert [a["eventType"] for a in report["attempts"]] == ["order.created", "order.completed"]


@pytest.mark.parametrize("svc_sandbox", ["real"], indirect=True)
def test_real_clock_delivers_from_a_worker_that_never_holds_up_requests(
    svc_server: RunningServer, hanging_receiver: Receiver
) -> None:
    setup_endpoint(svc_server, hanging_receiver)
    first = call(svc_server, "POST", "/_sandbox/events/trigger", {"type": "order.created"})
    assert hanging_receiver.hanging.wait(10)  # the worker is stuck in the first POST

    second = call(svc_server, "POST", "/_sandbox/events/trigger", {"type": "order.completed"})
    clock = call(svc_server, "GET", "/_sandbox/clock")
    assert second["event"]["id"] != first["event"]["id"]
    assert clock["clock"]["mode"] == "real"
    assert not hanging_receiver.release.is_set()
    assert len(hanging_receiver.received) == 1

    hanging_receiver.release.set()
    received = hanging_receiver.wait_for(2)
    assert [json.loads(r.body)["id"] for r in received] == [
        first["event"]["id"],
        second["event"]["id"],
    ]
