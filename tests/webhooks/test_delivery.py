"""Delivery to a real receiver on 127.0.0.1 (spec §6): documented data, signatures, the retry
schedule on the sandbox clock, and every way a receiver can fail."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.webhooks.events import EVENT_TYPES, TRIGGER_DATA_NESTING
from tests.webhooks.conftest import (
    DOCUMENTED_DATA,
    SECRET,
    add_endpoint,
    advance,
    attempts,
    flush,
    trigger,
)
from tests.webhooks.receiver import Receiver, running_receiver

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T0_SECONDS = int(T0.timestamp())


def client_with(**settings: Any) -> FlaskClient:
    return create_app(Sandbox(clock_mode="frozen", seed=1, port=0, **settings)).test_client()


def independent_signature(t: str, body: bytes) -> str:
    return hmac.new(SECRET.encode(), t.encode() + b"." + body, hashlib.sha256).hexdigest()


@pytest.mark.parametrize("event_type", EVENT_TYPES)
def test_each_event_type_arrives_with_its_envelope_and_documented_data(
    svc_http: FlaskClient, receiver: Receiver, event_type: str
) -> None:
    endpoint = add_endpoint(svc_http, receiver.url)
    event = trigger(svc_http, event_type)
    assert receiver.received == []  # frozen clock: nothing goes out before a flush or advance
    [attempt] = flush(svc_http)
    [request] = receiver.received
    assert request.path == "/hooks"
    assert request.headers["Content-Type"] == "application/json"
    document = json.loads(request.body)
    assert document == event
    assert list(document) == [
        "id",
        "object",
        "type",
        "created",
        "environment",
        "organizationId",
        "data",
    ]
    assert document["type"] == event_type
    assert document["environment"] == "sandbox"
    assert document["organizationId"] == endpoint["organizationId"]
    assert document["created"] == "2026-01-01T00:00:00.000Z"
    assert set(document["data"]) == DOCUMENTED_DATA[event_type]
    assert document["data"]["sessionId"]
    assert (attempt["attempt"], attempt["outcome"], attempt["statusCode"]) == (1, "succeeded", 200)
    assert attempt["responseSnippet"] == '{"received":true}'


def test_signature_verifies_with_an_independent_hmac(
    svc_http: FlaskClient, receiver: Receiver
) -> None:
    add_endpoint(svc_http, receiver.url)
    trigger(svc_http, "order.completed", data={"amount": 12345, "metadata": {"ref": "é"}})
    flush(svc_http)
    [request] = receiver.received
    header = request.headers["X-Svc-Signature"]
    t_part, v1_part = header.split(",")
    assert t_part == f"t={T0_SECONDS}"
    assert v1_part == "v1=" + independent_signature(str(T0_SECONDS), request.body)
    assert json.loads(request.body)["data"]["metadata"] == {"ref": "é"}


def test_retries_follow_the_schedule_exactly_against_a_500_receiver(
    svc_http: FlaskClient,
) -> None:
    with running_receiver(500) as receiver:
        add_endpoint(svc_http, receiver.url)
        event = trigger(svc_http, "order.completed")
        advance(svc_http, "15h")
        made = attempts(svc_http, eventId=event["id"])
        times = [a["time"] for a in made]
        assert times == [
            "2026-01-01T00:00:00.000Z",
            "2026-01-01T00:01:00.000Z",
            "2026-01-01T00:06:00.000Z",
            "2026-01-01T00:36:00.000Z",
            "2026-01-01T02:36:00.000Z",
            "2026-01-01T14:36:00.000Z",
        ]
        assert [a["attempt"] for a in made] == [1, 2, 3, 4, 5, 6]
        assert {(a["outcome"], a["statusCode"]) for a in made} == {("failed", 500)}
        # Each retry is signed afresh at its own time, over the same bytes (same event id).
        assert len(receiver.received) == 6
        bodies = {r.body for r in receiver.received}
        assert len(bodies) == 1
        for request, when in zip(receiver.received, times, strict=True):
            t = str(int(datetime.fromisoformat(when.replace("Z", "+00:00")).timestamp()))
            v1 = independent_signature(t, request.body)
            assert request.headers["X-Svc-Signature"] == f"t={t},v1={v1}"
        [delivery] = svc_http.get("/_sandbox/webhooks/deliveries").json["items"]  # type: ignore[index]
        assert (delivery["status"], delivery["attempts"]) == ("failed", 6)
        assert delivery["nextAttemptAt"] is None
        advance(svc_http, "2d")
        assert len(receiver.received) == 6


def test_retries_wait_for_their_time(svc_http: FlaskClient) -> None:
    with running_receiver(503) as receiver:
        add_endpoint(svc_http, receiver.url)
        trigger(svc_http, "order.created")
        advance(svc_http, "59s")
        assert len(receiver.received) == 1
        advance(svc_http, "1s")
        assert len(receiver.received) == 2
        [delivery] = svc_http.get("/_sandbox/webhooks/deliveries").json["items"]  # type: ignore[index]
        assert delivery["nextAttemptAt"] == "2026-01-01T00:06:00.000Z"
        assert delivery["status"] == "pending"


def test_the_retry_list_is_a_setting() -> None:
    client = client_with(webhook_retries="1m,5m,30m,2h")
    with running_receiver(500) as receiver:
        add_endpoint(client, receiver.url)
        trigger(client, "order.created")
        advance(client, "15h")
        assert [a["time"][11:19] for a in attempts(client)] == [
            "00:00:00",
            "00:01:00",
            "00:06:00",
            "00:36:00",
            "02:36:00",
        ]


def test_a_success_stops_the_retries(svc_http: FlaskClient) -> None:
    with running_receiver(200) as receiver:
        receiver.behaviours += [500, 502]
        add_endpoint(svc_http, receiver.url)
        event = trigger(svc_http, "order.completed")
        advance(svc_http, "15h")
        made = attempts(svc_http, eventId=event["id"])
        assert [(a["time"][11:19], a["outcome"]) for a in made] == [
            ("00:00:00", "failed"),
            ("00:01:00", "failed"),
            ("00:06:00", "succeeded"),
        ]
        assert len(receiver.received) == 3
        deliveries = svc_http.get("/_sandbox/webhooks/deliveries").json["items"]  # type: ignore[index]
        assert [(d["status"], d["attempts"]) for d in deliveries] == [("succeeded", 3)]


def test_a_late_answer_is_a_timeout_failure() -> None:
    client = client_with(webhook_timeout_seconds=0.2)
    with running_receiver(200) as receiver:
        receiver.behaviours.append("hang")
        add_endpoint(client, receiver.url)
        trigger(client, "order.completed")
        [first] = flush(client)
        receiver.release.set()
        assert (first["outcome"], first["error"], first["statusCode"]) == (
            "failed",
            "timeout",
            None,
        )
        assert first["nextAttemptAt"] == "2026-01-01T00:01:00.000Z"
        advance(client, "1m")
        assert [a["outcome"] for a in attempts(client)] == ["failed", "succeeded"]


@pytest.mark.parametrize(
    ("behaviour", "error", "status"),
    [
        ("reset", "connection_reset", None),
        ("garbage", "invalid_response", None),
        ("close", "no_response", None),
        (302, None, 302),
        (404, None, 404),
        (500, None, 500),
    ],
)
def test_a_misbehaving_receiver_is_a_failed_attempt_not_a_crash(
    svc_http: FlaskClient, behaviour: int | str, error: str | None, status: int | None
) -> None:
    with running_receiver(200) as receiver:
        receiver.behaviours.append(behaviour)
        add_endpoint(svc_http, receiver.url)
        trigger(svc_http, "order.created")
        [attempt] = flush(svc_http)
        assert (attempt["outcome"], attempt["error"], attempt["statusCode"]) == (
            "failed",
            error,
            status,
        )
        assert attempt["message"]
        assert attempt["durationMs"] >= 0
        advance(svc_http, "1m")
        assert attempts(svc_http)[-1]["outcome"] == "succeeded"


def test_nobody_listening_is_a_connection_error(svc_http: FlaskClient) -> None:
    with running_receiver() as receiver:
        url = receiver.url
    add_endpoint(svc_http, url)
    trigger(svc_http, "order.created")
    [attempt] = flush(svc_http)
    assert (attempt["outcome"], attempt["error"]) == ("failed", "connection_error")


def test_event_type_filter_and_disabled_endpoints(
    svc_http: FlaskClient, receiver: Receiver
) -> None:
    only_completed = add_endpoint(svc_http, receiver.url, eventTypes=["order.completed"])
    add_endpoint(svc_http, receiver.url, enabled=False)
    trigger(svc_http, "order.created")
    trigger(svc_http, "order.completed")
    made = flush(svc_http)
    assert [(a["eventType"], a["endpointId"]) for a in made] == [
        ("order.completed", only_completed["id"])
    ]


def test_endpoints_see_only_their_own_organizations_events(
    svc_http: FlaskClient, svc_sandbox: Sandbox, receiver: Receiver
) -> None:
    production = next(o for o in svc_sandbox.orgs.all() if o.environment.value == "production")
    add_endpoint(svc_http, receiver.url, orgId=production.id)
    trigger(svc_http, "order.created")
    trigger(svc_http, "order.created", orgId=production.id)
    [attempt] = flush(svc_http)
    assert json.loads(receiver.received[0].body)["environment"] == "production"
    assert attempt["organizationId"] == production.id


@pytest.mark.parametrize("route", ["attempts", "deliveries"])
def test_journals_filter_by_organization(
    svc_http: FlaskClient, svc_sandbox: Sandbox, receiver: Receiver, route: str
) -> None:
    orgs = {o.environment.value: o.id for o in svc_sandbox.orgs.all()}
    for org_id in orgs.values():
        add_endpoint(svc_http, receiver.url, orgId=org_id)
        trigger(svc_http, "order.created", orgId=org_id)
    flush(svc_http)
    for org_id in orgs.values():
        listed = svc_http.get(f"/_sandbox/webhooks/{route}", query_string={"orgId": org_id})
        assert listed.status_code == 200
        assert [item["organizationId"] for item in listed.json["items"]] == [org_id]  # type: ignore[index]
    unknown = svc_http.get(f"/_sandbox/webhooks/{route}", query_string={"orgId": "nobody"})
    assert unknown.json["items"] == []  # type: ignore[index]


def test_deliveries_go_out_in_due_time_order(svc_http: FlaskClient) -> None:
    with running_receiver(200) as receiver:
        receiver.behaviours.append(500)
        add_endpoint(svc_http, receiver.url)
        first = trigger(svc_http, "order.created")
        flush(svc_http)  # fails; retry due at 00:01
        advance(svc_http, "30s")
        second = trigger(svc_http, "order.completed")  # due at 00:00:30
        advance(svc_http, "1m")
        ids = [json.loads(r.body)["id"] for r in receiver.received]
        assert ids == [first["id"], second["id"], first["id"]]


def test_redeliver_sends_the_same_event_again(svc_http: FlaskClient, receiver: Receiver) -> None:
    add_endpoint(svc_http, receiver.url)
    event = trigger(svc_http, "order.completed")
    flush(svc_http)
    advance(svc_http, "10m")
    response = svc_http.post(f"/_sandbox/webhooks/events/{event['id']}/redeliver", json={})
    assert response.status_code == 201
    body = response.json
    assert body is not None
    [delivery] = body["deliveries"]
    assert delivery["redeliveryOf"] is not None
    assert delivery["status"] == "succeeded"
    [attempt] = body["attempts"]
    assert attempt["time"] == "2026-01-01T00:10:00.000Z"
    first, again = receiver.received
    assert first.body == again.body
    assert again.headers["X-Svc-Signature"].startswith(f"t={T0_SECONDS + 600},")


def test_redeliver_errors(svc_http: FlaskClient, svc_sandbox: Sandbox, receiver: Receiver) -> None:
    assert svc_http.post("/_sandbox/webhooks/events/evt_nope/redeliver", json={}).status_code == 404
    event = trigger(svc_http, "order.created")
    no_endpoint = svc_http.post(f"/_sandbox/webhooks/events/{event['id']}/redeliver", json={})
    assert no_endpoint.status_code == 409
    production = next(o for o in svc_sandbox.orgs.all() if o.environment.value == "production")
    other = add_endpoint(svc_http, receiver.url, orgId=production.id)
    wrong = svc_http.post(
        f"/_sandbox/webhooks/events/{event['id']}/redeliver", json={"endpointId": other["id"]}
    )
    assert wrong.status_code == 400
    assert wrong.json["error"].startswith("endpointId ")  # type: ignore[index]


def test_redeliver_to_a_named_endpoint(svc_http: FlaskClient, receiver: Receiver) -> None:
    """A named endpoint takes the event whatever its filter; a disabled one is refused, and
    nothing is recorded for it."""
    event = trigger(svc_http, "order.completed")
    filtered = add_endpoint(svc_http, receiver.url, eventTypes=["order.created"])
    redeliver = f"/_sandbox/webhooks/events/{event['id']}/redeliver"
    sent = svc_http.post(redeliver, json={"endpointId": filtered["id"]})
    assert sent.status_code == 201
    assert [json.loads(r.body)["id"] for r in receiver.received] == [event["id"]]
    off = svc_http.patch(f"/_sandbox/webhooks/endpoints/{filtered['id']}", json={"enabled": False})
    assert off.status_code == 200
    refused = svc_http.post(redeliver, json={"endpointId": filtered["id"]})
    assert refused.status_code == 409
    assert refused.json == {  # type: ignore[comparison-overlap]
        "error": f"webhook endpoint {filtered['id']} is disabled: enable it to redeliver to it",
        "code": "conflict",
    }
    deliveries = svc_http.get("/_sandbox/webhooks/deliveries").json["items"]  # type: ignore[index]
    assert len(deliveries) == 1


@pytest.mark.parametrize("send", [False, True])
def test_receiver_outcome_fault_fails_the_next_deliveries(
    svc_http: FlaskClient, receiver: Receiver, send: bool
) -> None:
    add_endpoint(svc_http, receiver.url)
    fault = svc_http.post("/_sandbox/webhooks/faults/receiver", json={"count": 2, "send": send})
    assert fault.json == {"count": 2, "send": send}
    trigger(svc_http, "order.created")
    trigger(svc_http, "order.completed")
    trigger(svc_http, "checkout.session.expired")
    made = flush(svc_http)
    assert [(a["outcome"], a["error"]) for a in made] == [
        ("failed", "fault_injected"),
        ("failed", "fault_injected"),
        ("succeeded", None),
    ]
    assert len(receiver.received) == (3 if send else 1)
    assert svc_http.get("/_sandbox/webhooks/faults/receiver").json == {"count": 0, "send": send}
    advance(svc_http, "1m")
    assert [a["outcome"] for a in attempts(svc_http)][-2:] == ["succeeded", "succeeded"]


def test_disabling_an_endpoint_fails_its_due_attempts_and_deleting_it_ends_them(
    svc_http: FlaskClient,
) -> None:
    with running_receiver(500) as receiver:
        endpoint = add_endpoint(svc_http, receiver.url)
        trigger(svc_http, "order.created")
        flush(svc_http)
        path = f"/_sandbox/webhooks/endpoints/{endpoint['id']}"
        svc_http.patch(path, json={"enabled": False})
        advance(svc_http, "1m")
        assert attempts(svc_http)[-1]["error"] == "endpoint_disabled"
        svc_http.delete(path, json={})
        advance(svc_http, "5m")
        assert attempts(svc_http)[-1]["error"] == "endpoint_deleted"
        [delivery] = svc_http.get("/_sandbox/webhooks/deliveries").json["items"]  # type: ignore[index]
        assert (delivery["status"], delivery["attempts"]) == ("failed", 3)
        assert len(receiver.received) == 1


def test_journal_filters(svc_http: FlaskClient) -> None:
    with running_receiver(200) as receiver:
        receiver.behaviours.append(500)
        add_endpoint(svc_http, receiver.url)
        failed_event = trigger(svc_http, "order.created")
        trigger(svc_http, "order.completed")
        flush(svc_http)
        assert [a["eventId"] for a in attempts(svc_http, outcome="failed")] == [failed_event["id"]]
        assert len(attempts(svc_http, eventType="order.completed")) == 1
        assert len(attempts(svc_http, limit="1")) == 1
        pending = svc_http.get("/_sandbox/webhooks/deliveries", query_string={"status": "pending"})
        [delivery] = pending.json["items"]  # type: ignore[index]
        assert delivery["eventId"] == failed_event["id"]
        detail = svc_http.get(f"/_sandbox/webhooks/deliveries/{delivery['id']}").json
        assert [a["statusCode"] for a in detail["attemptLog"]] == [500]  # type: ignore[index]
        events = svc_http.get("/_sandbox/events", query_string={"type": "order.created"}).json
        assert [e["id"] for e in events["items"]] == [failed_event["id"]]  # type: ignore[index]


@pytest.mark.parametrize(
    ("path", "query", "field"),
    [
        ("/_sandbox/webhooks/attempts", {"outcome": "maybe"}, "outcome"),
        ("/_sandbox/webhooks/attempts", {"limit": "0"}, "limit"),
        ("/_sandbox/webhooks/attempts", {"eventType": "order.paid"}, "eventType"),
        ("/_sandbox/webhooks/deliveries", {"status": "lost"}, "status"),
        ("/_sandbox/webhooks/deliveries", {"colour": "red"}, "colour"),
    ],
)
def test_bad_filters_answer_400_naming_the_parameter(
    svc_http: FlaskClient, path: str, query: dict[str, str], field: str
) -> None:
    response = svc_http.get(path, query_string=query)
    assert response.status_code == 400
    assert response.json["error"].startswith(field + " ")  # type: ignore[index]


def nested(levels: int) -> dict[str, Any]:
    """An object nesting ``levels`` levels (itself one)."""
    value: dict[str, Any] = {"leaf": True}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"type": "order.refunded"}, "type"),
        ({}, "type"),
        ({"type": "order.created", "data": [1]}, "data"),
        ({"type": "order.created", "orgId": 5}, "orgId"),
        ({"type": "order.created", "data": nested(TRIGGER_DATA_NESTING + 1)}, "data"),
    ],
)
def test_bad_triggers_answer_400(svc_http: FlaskClient, body: dict[str, Any], field: str) -> None:
    response = svc_http.post("/_sandbox/events/trigger", json=body)
    assert response.status_code == 400
    assert response.json["error"].startswith(field + " ")  # type: ignore[index]
    assert svc_http.get("/_sandbox/events").json["items"] == []  # type: ignore[index]


def test_the_deepest_triggered_data_survives_an_export_and_import(svc_http: FlaskClient) -> None:
    """An export imports again (spec-gaps): it keeps the data 5 levels deeper than the trigger
    body did, and an import is held to the 64 levels of any body."""
    made = svc_http.post(
        "/_sandbox/events/trigger",
        json={"type": "order.created", "data": nested(TRIGGER_DATA_NESTING)},
    )
    assert made.status_code == 201, made.json
    export = svc_http.get("/_sandbox/state").data
    again = create_app(Sandbox(clock_mode="frozen", seed=1)).test_client()
    imported = again.put("/_sandbox/state", data=export, content_type="application/json")
    assert imported.status_code == 200, imported.json
    assert again.get("/_sandbox/state").data == export


@pytest.mark.parametrize("body", [{"count": -1}, {"count": "2"}, {"count": 1, "send": "no"}])
def test_bad_faults_answer_400(svc_http: FlaskClient, body: dict[str, Any]) -> None:
    response = svc_http.post("/_sandbox/webhooks/faults/receiver", json=body)
    assert response.status_code == 400


def test_pending_retries_survive_export_and_import(svc_sandbox: Sandbox) -> None:
    app = create_app(svc_sandbox)
    client = app.test_client()
    with running_receiver(500) as receiver:
        add_endpoint(client, receiver.url)
        trigger(client, "order.created")
        flush(client)
        state = client.get("/_sandbox/state").json
        other = create_app(Sandbox(clock_mode="frozen", seed=1, port=0)).test_client()
        assert other.put("/_sandbox/state", json=state).status_code == 200
        advance(other, "1m")
        assert [a["attempt"] for a in attempts(other)] == [1, 2]
        assert len(receiver.received) == 2


@pytest.mark.parametrize("svc_sandbox", ["real"], indirect=True)
def test_a_real_clock_delivers_in_the_background(svc_http: FlaskClient, receiver: Receiver) -> None:
    client = svc_http
    add_endpoint(client, receiver.url)
    event = trigger(client, "order.completed")
    [request] = receiver.wait_for(1)
    assert json.loads(request.body)["id"] == event["id"]


def test_parallel_flushes_send_each_attempt_once(svc_http: FlaskClient, receiver: Receiver) -> None:
    add_endpoint(svc_http, receiver.url)
    events = [trigger(svc_http, "order.created")["id"] for _ in range(12)]
    results: list[list[dict[str, Any]]] = []
    threads = [threading.Thread(target=lambda: results.append(flush(svc_http))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    # Each report lists the attempts made while its call ran (by any caller).
    assert {a["eventId"] for batch in results for a in batch} == set(events)
    assert [json.loads(r.body)["id"] for r in receiver.received] == events


def test_in_process_advance_sends_before_it_returns(
    svc_sandbox: Sandbox, receiver: Receiver
) -> None:
    org = svc_sandbox.orgs.all()[0]
    svc_sandbox.webhook_endpoints.create(org.id, receiver.url, secret=SECRET)
    event = svc_sandbox.events.trigger(org.id, "sandbox", "checkout.session.expired")
    svc_sandbox.advance(timedelta(0))
    [request] = receiver.received
    assert request.body == event.body()


def test_an_exported_attempt_has_duration_0_and_the_rest_as_made(receiver: Receiver) -> None:
    """durationMs is the receiver's wall time, an observation: the export writes 0 so the
    same seed and requests give the same export; an import shows it as 0 (control-plane.md)."""
    http = client_with()
    add_endpoint(http, receiver.url)
    trigger(http, "order.created")
    [made] = flush(http)
    assert made["durationMs"] > 0  # a round trip over a socket, in ms to the microsecond

    document: Any = http.get("/_sandbox/state").json
    assert [a["duration_ms"] for a in document["services"]["webhookDeliveries"]["attempts"]] == [
        0.0
    ]
    imported = client_with()
    assert imported.put("/_sandbox/state", json=document).status_code == 200
    [shown] = attempts(imported)
    assert shown == {**made, "durationMs": 0.0}


def test_an_attempt_that_cannot_be_signed_is_recorded_failed_and_retried_not_lost(
    svc_http: FlaskClient, svc_sandbox: Sandbox, receiver: Receiver
) -> None:
    """An endpoint secret the control plane refuses (empty) can no longer be imported, but a
    state left by an older import may hold one: the clock move that makes its attempt due
    answered 500 and the delivery stayed pending with nothing scheduled. Now the attempt is
    recorded as failed (``signing_failed``, not sent) and the retries go on, so a new secret
    in time delivers it."""
    endpoint = add_endpoint(svc_http, receiver.url)
    svc_sandbox.webhook_endpoints.endpoints[endpoint["id"]].secret = ""  # as an older import
    trigger(svc_http, "order.completed")
    [first] = flush(svc_http)
    assert (first["attempt"], first["outcome"], first["error"]) == (1, "failed", "signing_failed")
    assert "could not be signed: secret must not be empty" in first["message"]
    assert receiver.received == []
    [delivery] = svc_http.get("/_sandbox/webhooks/deliveries").json["items"]  # type: ignore[index]
    assert (delivery["status"], delivery["attempts"]) == ("pending", 1)
    assert delivery["nextAttemptAt"] is not None
    patched = svc_http.patch(
        f"/_sandbox/webhooks/endpoints/{endpoint['id']}", json={"secret": SECRET}
    )
    assert patched.status_code == 200
    moved = svc_http.post("/_sandbox/clock/advance", json={"duration": "1m"})
    assert moved.status_code == 200
    [request] = receiver.received
    assert attempts(svc_http)[-1]["outcome"] == "succeeded"
    t, v1 = (part.split("=", 1)[1] for part in request.headers["X-Svc-Signature"].split(","))
    assert v1 == independent_signature(t, request.body)


def test_a_trigger_answers_the_deliveries_of_its_own_event_only(
    svc_http: FlaskClient, receiver: Receiver
) -> None:
    """The answer lists the deliveries the event started, one per matching endpoint in the
    endpoints' order, and none of the deliveries of events before it (nor a redelivery)."""
    first_endpoint = add_endpoint(svc_http, receiver.url)["id"]
    second_endpoint = add_endpoint(svc_http, receiver.url + "/second")["id"]
    earlier = trigger(svc_http, "order.created")
    svc_http.post(f"/_sandbox/webhooks/events/{earlier['id']}/redeliver", json={})
    answer = svc_http.post("/_sandbox/events/trigger", json={"type": "order.completed"}).json
    assert answer is not None
    listed = [(d["eventId"], d["endpointId"]) for d in answer["deliveries"]]
    event = answer["event"]["id"]
    assert listed == [(event, first_endpoint), (event, second_endpoint)]
