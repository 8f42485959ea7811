"""Due work on a flowing clock runs at its due time whoever gets there first (DESIGN.md
principle 3: "each at its own due time, so timestamps in events are exact and the outcome is
the same on every run"): the ticker, or a request that finds the work due (a poll).

The clock is scaled and its ticker is not started (``create_app`` never starts it), so the
test chooses who runs the due work: the ticker's call, ``run_due(background=True)``, or a
poll. Both must give the same answer, stamped with the due time, not the poll's time."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.core.clock import parse_instant
from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import checkout, push_checkout, status_of
from tests.helpers import token_of

#: 30 minutes of sandbox time pass in 18 ms of wall time.
FACTOR = 100_000
#: Who runs the work once it is due.
RUNNERS = ("ticker", "poll")


def flowing() -> tuple[Sandbox, FlaskClient]:
    sandbox = Sandbox(clock_mode="scaled", clock_factor=FACTOR)
    return sandbox, create_app(sandbox).test_client()


def wait_past(sandbox: Sandbox, instant: datetime) -> None:
    """Until the sandbox clock is past ``instant`` (a few wall milliseconds)."""
    while sandbox.now() <= instant:
        time.sleep(0.001)


def run_due_work(sandbox: Sandbox, client: FlaskClient, runner: str, session_id: str) -> None:
    if runner == "ticker":
        sandbox.run_due(background=True)  # what the ticker calls every tick_seconds
    status_of(client, session_id)  # the poll (after the ticker's run, it only reads)


def details(client: FlaskClient, session_id: str) -> dict[str, Any]:
    found: dict[str, Any] = client.get(f"/_sandbox/checkout/sessions/{session_id}").json  # type: ignore[assignment]
    return found


def events(client: FlaskClient, session_id: str) -> dict[str, dict[str, Any]]:
    items = client.get(f"/_sandbox/events?sessionId={session_id}").json["items"]  # type: ignore[index]
    return {event["type"]: event for event in items}


@pytest.mark.parametrize("runner", RUNNERS)
def test_an_expiry_is_stamped_at_expires_at_whoever_runs_it(runner: str) -> None:
    sandbox, client = flowing()
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    session_id = checkout(client, auth, amount=1000, description="link")["sessionId"]
    expires_at = status_of(client, session_id)["expiresAt"]
    wait_past(sandbox, parse_instant(expires_at))
    run_due_work(sandbox, client, runner, session_id)
    assert status_of(client, session_id)["status"] == "expired"
    assert events(client, session_id)["checkout.session.expired"]["created"] == expires_at


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize(
    ("notice", "learned_after"),
    [(None, 10), ({"kind": "late", "delaySeconds": 30}, 40)],
    ids=["notice_at_once", "late_notice"],
)
def test_a_provider_decision_is_stamped_at_its_due_time_whoever_runs_it(
    runner: str, notice: dict[str, Any] | None, learned_after: int
) -> None:
    """A production push is decided 10 s after it is sent (the default delay); its notice
    arrives at once or 30 s later: paidAt is when the emulator learned it, as due."""
    sandbox, client = flowing()
    auth = {"Authorization": f"Bearer {token_of(sandbox, 'production')}"}
    if notice is not None:
        assert client.post("/_sandbox/faults/notifications", json=notice).status_code == 201
    session_id = push_checkout(client, auth, phone="251900000002")["sessionId"]
    wait_past(sandbox, sandbox.now() + timedelta(seconds=learned_after))  # no request meanwhile
    run_due_work(sandbox, client, runner, session_id)
    session = details(client, session_id)
    attempt = session["attempts"][0]
    sent = parse_instant(attempt["createdAt"])
    decided = parse_instant(attempt["provider"]["decidedAt"])
    learned = parse_instant(attempt["decidedAt"])
    paid = parse_instant(events(client, session_id)["order.completed"]["data"]["paidAt"])
    assert session["status"] == "completed"
    assert decided == sent + timedelta(seconds=10)
    assert learned == paid == sent + timedelta(seconds=learned_after)
    decision = [step for step in session["providerTimeline"] if step["kind"] == "decision"]
    assert [parse_instant(step["at"]) for step in decision] == [decided]
