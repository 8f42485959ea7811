"""What a webhook receiver sees when the provider's notice is late, lost or duplicated: one
``order.completed`` for the session, sent when the emulator first learned of the payment
(the notice or a poll), never again for the notice that comes second."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import push_checkout, status_of
from tests.webhooks.conftest import add_endpoint, flush
from tests.webhooks.receiver import Receiver

FAULTS = [
    {"kind": "late", "delaySeconds": 60},
    {"kind": "lost"},
    {"kind": "duplicate", "delaySeconds": 20},
]


def completed_for(receiver: Receiver, session_id: str) -> list[dict[str, Any]]:
    documents = [json.loads(r.body) for r in receiver.received]
    return [
        d
        for d in documents
        if d["type"] == "order.completed" and d["data"]["sessionId"] == session_id
    ]


@pytest.mark.parametrize("fault", FAULTS, ids=[f["kind"] for f in FAULTS])
def test_the_receiver_gets_one_order_completed_whatever_the_notice_does(
    svc_http: FlaskClient,
    auth: dict[str, str],
    svc_sandbox: Sandbox,
    receiver: Receiver,
    fault: dict[str, Any],
) -> None:
    add_endpoint(svc_http, receiver.url, eventTypes=["order.completed"])
    assert svc_http.post("/_sandbox/faults/notifications", json=fault).status_code == 201
    session_id = push_checkout(svc_http, auth, "251900000001")["sessionId"]
    assert status_of(svc_http, session_id)["status"] == "completed"  # a poll, at the latest
    flush(svc_http)
    svc_sandbox.advance(timedelta(minutes=2))  # whatever notice is still on its way arrives
    flush(svc_http)
    delivered = completed_for(receiver, session_id)
    assert len(delivered) == 1
    assert delivered[0]["data"]["paidAt"] == "2026-01-01T00:00:00.000Z"
