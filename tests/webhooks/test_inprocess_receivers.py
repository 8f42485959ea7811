"""In-process receivers (``Sandbox.add_webhook_receiver``) are callables, not state: a reset
or an import lets them go, so the sandbox after either answers as a fresh one given the same
document. Ids repeat from the seed after a reset: the callable of a test of before must not
be called for a new endpoint of the same id. A refused import changes nothing, receivers
included."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.core.errors import NotFound, ValidationFailed
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.settings import Settings


def fresh() -> tuple[Sandbox, FlaskClient]:
    sandbox = Sandbox(Settings.load({"clock_mode": "frozen", "seed": 7}))
    return sandbox, create_app(sandbox).test_client()


def with_receiver(calls: list[bytes]) -> tuple[Sandbox, FlaskClient, bytes]:
    """A sandbox with an in-process receiver, and its export (naming the endpoint)."""
    sandbox, http = fresh()
    org = sandbox.info()["organizations"][0]["id"]
    sandbox.add_webhook_receiver(org, lambda body, headers: calls.append(body) or 200)
    return sandbox, http, http.get("/_sandbox/state").data


def outcomes_after_import(http: FlaskClient, document: bytes) -> list[tuple[Any, ...]]:
    assert (
        http.put("/_sandbox/state", data=document, content_type="application/json").status_code
        == 200
    )
    http.post("/_sandbox/events/trigger", json={"type": "order.completed"})
    attempts: Any = http.post("/_sandbox/webhooks/flush", json={}).json
    return [(a["outcome"], a["error"], a["statusCode"]) for a in attempts["attempts"]]


def reset(http: FlaskClient) -> None:
    assert http.post("/_sandbox/reset", json={}).status_code == 200


def import_seeded(http: FlaskClient) -> None:
    assert http.put("/_sandbox/state", json=fresh()[0].export()).status_code == 200


@pytest.mark.parametrize("replace", [reset, import_seeded], ids=["reset", "import"])
def test_receivers_of_before_a_reset_or_import_are_let_go(
    replace: Callable[[FlaskClient], None],
) -> None:
    calls: list[bytes] = []
    _, http, document = with_receiver(calls)
    replace(http)
    after = outcomes_after_import(http, document)
    _, fresh_http = fresh()
    assert after == outcomes_after_import(fresh_http, document)
    assert after == [("failed", "connection_error", None)]
    assert calls == []


def test_a_refused_import_keeps_the_receivers() -> None:
    calls: list[bytes] = []
    _, http, _ = with_receiver(calls)
    refused = http.put("/_sandbox/state", json={"version": "not a state"})
    assert refused.status_code == 400
    http.post("/_sandbox/events/trigger", json={"type": "order.completed"})
    attempts: Any = http.post("/_sandbox/webhooks/flush", json={}).json
    assert [a["outcome"] for a in attempts["attempts"]] == ["succeeded"]
    assert len(calls) == 1


def test_an_imported_endpoint_gets_its_receiver_back_with_the_same_ids() -> None:
    """attach_webhook_receiver: the endpoint the document holds answers again, and what
    follows has the original's ids (a second add_webhook_receiver would draw a new one)."""
    first: list[bytes] = []
    original, http, document = with_receiver(first)
    [endpoint] = http.get("/_sandbox/webhooks/endpoints").json["items"]  # type: ignore[index]
    restored, again = fresh()
    again.put("/_sandbox/state", data=document, content_type="application/json")
    second: list[bytes] = []
    attached = restored.attach_webhook_receiver(
        endpoint["id"], lambda body, headers: second.append(body) or 200
    )
    assert attached.url == f"inprocess:{endpoint['id']}"
    for client in (http, again):
        client.post("/_sandbox/events/trigger", json={"type": "order.completed"})
        client.post("/_sandbox/webhooks/flush", json={})
    assert first == second and len(first) == 1  # the same signed bytes: the same event id


def test_only_an_in_process_endpoint_takes_a_receiver() -> None:
    sandbox, http = fresh()
    org = sandbox.info()["organizations"][0]["id"]
    url = "http://127.0.0.1:9/hooks"
    made = http.post("/_sandbox/webhooks/endpoints", json={"orgId": org, "url": url}).json
    with pytest.raises(ValidationFailed, match=f"delivers to {url}, not in-process"):
        sandbox.attach_webhook_receiver(made["id"], lambda body, headers: 200)  # type: ignore[index]
    with pytest.raises(NotFound):
        sandbox.attach_webhook_receiver("we_" + "0" * 24, lambda body, headers: 200)
