"""A reset (or an import) while a webhook POST is out: the outcome that comes back belongs to
the old state. Ids repeat from the seed, so the new state may hold a delivery with the same id;
the old outcome must not settle it, and an advance that was paused for the POST must not carry
on in the new state. Serial order "the work, then the reset" is the only answer allowed."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.settings import Settings
from tests.webhooks.receiver import running_receiver

WAIT = 30  # seconds; only reached if the code under test hangs


class HeldReceiver:
    """An in-process receiver whose first POST waits until the test lets it answer."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.bodies: list[bytes] = []

    def __call__(self, body: bytes, headers: dict[str, str]) -> int:
        self.bodies.append(body)
        if len(self.bodies) == 1:
            self.entered.set()
            assert self.release.wait(WAIT)
        return 200


def scene(
    sandbox: Sandbox, http: FlaskClient, receiver: Callable[[bytes, dict[str, str]], int]
) -> str:
    org = next(o for o in sandbox.info()["organizations"] if o["environment"] == "sandbox")
    sandbox.add_webhook_receiver(org["id"], receiver)
    answer: Any = http.post("/_sandbox/events/trigger", json={"type": "order.completed"}).json
    return str(answer["deliveries"][0]["id"])


@contextmanager
def while_posting(held: HeldReceiver, work: Callable[[], Any]) -> Iterator[dict[str, Any]]:
    """Runs ``work`` in a thread until ``held`` has its POST; the block runs then; the receiver
    answers and the work finishes on leaving it. ``["answer"]`` is what ``work`` returned."""
    out: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: out.setdefault("answer", work()))
    thread.start()
    assert held.entered.wait(WAIT)
    try:
        yield out
    finally:
        held.release.set()
        thread.join(WAIT)


def fresh() -> tuple[Sandbox, FlaskClient]:
    sandbox = Sandbox(Settings.load({"clock_mode": "frozen"}))
    return sandbox, create_app(sandbox).test_client()


def reset(http: FlaskClient) -> int:
    return http.post("/_sandbox/reset", json={}).status_code


def import_seeded(http: FlaskClient) -> int:
    return http.put("/_sandbox/state", json=fresh()[0].export()).status_code


REPLACEMENTS = pytest.mark.parametrize("replace", [reset, import_seeded], ids=["reset", "import"])


@REPLACEMENTS
def test_an_outcome_from_before_a_reset_does_not_settle_the_new_delivery_of_that_id(
    replace: Callable[[FlaskClient], int],
) -> None:
    sandbox, http = fresh()
    held = HeldReceiver()
    first = scene(sandbox, http, held)
    second_bodies: list[bytes] = []
    with while_posting(held, lambda: http.post("/_sandbox/webhooks/flush", json={})):
        assert replace(http) == 200
        second = scene(sandbox, http, lambda body, headers: second_bodies.append(body) or 200)
        assert second == first  # the seed repeats the id: the case that went wrong

    pending: Any = http.get(f"/_sandbox/webhooks/deliveries/{second}").json
    assert (pending["status"], pending["attempts"]) == ("pending", 0)
    assert http.post("/_sandbox/webhooks/flush", json={}).status_code == 200
    sent: Any = http.get(f"/_sandbox/webhooks/deliveries/{second}").json
    assert (sent["status"], sent["attempts"]) == ("succeeded", 1)
    assert len(second_bodies) == 1 and len(held.bodies) == 1


@REPLACEMENTS
def test_an_advance_paused_for_a_post_ends_when_a_reset_replaces_the_state(
    replace: Callable[[FlaskClient], int],
) -> None:
    sandbox, http = fresh()
    held = HeldReceiver()
    http.post("/_sandbox/clock/set", json={"now": "2026-01-01T05:00:00Z"})
    scene(sandbox, http, held)
    with while_posting(
        held, lambda: http.post("/_sandbox/clock/advance", json={"duration": "2h"}).json
    ) as out:
        assert replace(http) == 200

    seeded, _ = fresh()
    assert out["answer"]["clock"]["now"] == "2026-01-01T00:00:00.000Z"
    assert sandbox.export() == seeded.export()


def test_an_export_taken_while_an_attempt_is_out_keeps_it_due_and_an_import_sends_it() -> None:
    """The copy is of the state as it stands: the attempt has no outcome yet, so it is still
    due (at its due time, signed the same); the exporting process records its own outcome."""
    sandbox, http = fresh()
    with running_receiver(200) as receiver:
        receiver.behaviours = ["hang"]
        assert (
            http.post("/_sandbox/webhooks/endpoints", json={"url": receiver.url}).status_code == 201
        )
        event: Any = http.post("/_sandbox/events/trigger", json={"type": "order.completed"}).json
        delivery = event["deliveries"][0]["id"]
        flush = threading.Thread(target=lambda: http.post("/_sandbox/webhooks/flush", json={}))
        flush.start()
        assert receiver.hanging.wait(WAIT)
        document = http.get("/_sandbox/state").json
        receiver.release.set()
        flush.join(WAIT)

        assert document is not None
        due = document["services"]["webhookDeliveries"]["due"]
        assert [(d["delivery_id"], d["number"], d["due"]) for d in due] == [
            (delivery, 1, "2026-01-01T00:00:00+00:00")
        ]
        # The exporting process: its attempt answered 200 after the export, as if none was taken.
        here: Any = http.get(f"/_sandbox/webhooks/deliveries/{delivery}").json
        assert (here["status"], here["attempts"]) == ("succeeded", 1)

        importer, imported = fresh()
        assert imported.put("/_sandbox/state", json=document).status_code == 200
        assert imported.post("/_sandbox/clock/advance", json={"duration": "1s"}).status_code == 200
        arrived = receiver.wait_for(2)
        there: Any = imported.get(f"/_sandbox/webhooks/deliveries/{delivery}").json
        assert (there["status"], there["attempts"]) == ("succeeded", 1)
        assert len(arrived) == 2 and arrived[1].body == arrived[0].body
        signature = "X-Svc-Signature"
        assert arrived[1].headers[signature] == arrived[0].headers[signature]
        importer.stop()
