"""A sandbox restored from its export goes on exactly as the original would: the same work
runs at the same sandbox instants, with the same outcomes and webhooks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.helpers import token_of

#: Half a millisecond past a whole one: the export writes instants to the millisecond.
ODD_DELAY = 10.0005
BUYER = {"email": "a@b.et", "phone": "0911223344"}


def fresh(**settings: Any) -> tuple[Sandbox, FlaskClient]:
    sandbox = Sandbox(clock_mode="frozen", seed=1, rate_limits=False, **settings)
    return sandbox, create_app(sandbox).test_client()


def production_push(sandbox: Sandbox, http: FlaskClient) -> None:
    http.patch("/_sandbox/payments/provider", json={"productionPushDelaySeconds": ODD_DELAY})
    push(http, token_of(sandbox, "production"), BUYER["phone"])


def delayed_trigger(sandbox: Sandbox, http: FlaskClient) -> None:
    trigger = {"phone": "0911000111", "outcome": "approve", "decisionDelaySeconds": ODD_DELAY}
    assert http.post("/_sandbox/triggers", json=trigger).status_code == 201
    push(http, token_of(sandbox), "0911000111")


def late_notice(sandbox: Sandbox, http: FlaskClient) -> None:
    fault = {"kind": "late", "delaySeconds": ODD_DELAY}
    assert http.post("/_sandbox/faults/notifications", json=fault).status_code == 201
    push(http, token_of(sandbox), "251900000001")  # the paying trigger phone


def push(http: FlaskClient, token: str, phone: str) -> None:
    body = {
        "amount": 5000,
        "description": "Soup",
        "gateway": "telebirr",
        "customer": {**BUYER, "phone": phone},
    }
    answer = http.post("/api/checkout", json=body, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.json


def restore(target: FlaskClient, source: FlaskClient) -> Any:
    """PUT /_sandbox/state of ``source``'s export into ``target``."""
    document = source.get("/_sandbox/state").data
    return target.put("/_sandbox/state", data=document, content_type="application/json")


def what_happens(http: FlaskClient) -> list[Any]:
    """The work each advance runs, then the events and the session's status."""
    ran = [
        [e["kind"] for e in http.post("/_sandbox/clock/advance", json={"seconds": s}).json["ran"]]
        for s in (10, 1, 1900)
    ]
    events = [e["type"] for e in http.get("/_sandbox/events").json["items"]]
    return [ran, events]


@pytest.mark.parametrize("begin", [production_push, delayed_trigger, late_notice])
def test_a_delay_finer_than_the_clock_runs_at_the_same_instant_after_an_import(
    begin: Callable[[Sandbox, FlaskClient], None],
) -> None:
    """A decision or notice due 10.0005 s after the prompt: the export wrote 10.000 s, the
    restored sandbox ran the entry early, found nothing due, and the paid session expired.
    Every delay is kept to the clock's millisecond, so both sides agree."""
    original, http = fresh()
    begin(original, http)
    restored, again = fresh()
    put = restore(again, http)
    assert put.status_code == 200, put.json
    expected = what_happens(http)
    assert "order.completed" in expected[1]
    assert what_happens(again) == expected


def test_a_webhook_retry_finer_than_the_clock_runs_at_the_same_instant_after_an_import() -> None:
    def failing_delivery() -> tuple[Sandbox, FlaskClient]:
        sandbox, http = fresh(webhook_retries="1.0005s,1m")
        org = next(o for o in sandbox.info()["organizations"] if o["environment"] == "sandbox")
        endpoint = {"orgId": org["id"], "url": "http://127.0.0.1:9/refused"}
        assert http.post("/_sandbox/webhooks/endpoints", json=endpoint).status_code == 201
        http.post("/_sandbox/events/trigger", json={"type": "order.completed"})
        http.post("/_sandbox/webhooks/flush", json={})
        return sandbox, http

    original, http = failing_delivery()
    restored, again = fresh(webhook_retries="1.0005s,1m")
    assert restore(again, http).status_code == 200

    def retries(client: FlaskClient) -> list[list[str]]:
        return [
            [
                e["kind"]
                for e in client.post("/_sandbox/clock/advance", json={"seconds": 1}).json["ran"]
            ]
            for _ in range(2)
        ]

    assert retries(again) == retries(http) == [["webhook.attempt"], []]
