"""The provider's decision and its notice apart (issue 17): what an integrator sees through the
public API (GET /checkout/{id}, GET /orders, the events its webhooks carry) when the notice is
late, lost, duplicated or out of order, and that each case leaves one paid order and one
``order.completed``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import checkout, events, published, push_checkout, status_of

PAYS = "251900000001"
FAILS = "0900000002"
WAITS = "0911223344"


def notice_fault(client: FlaskClient, **body: Any) -> dict[str, Any]:
    response = client.post("/_sandbox/faults/notifications", json=body)
    assert response.status_code == 201, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result


def timeline(client: FlaskClient, session_id: str) -> list[tuple[str, str]]:
    response = client.get(f"/_sandbox/checkout/sessions/{session_id}/timeline")
    assert response.status_code == 200, response.json
    return [(step["kind"], step["status"]) for step in response.json["items"]]  # type: ignore[index]


def paid_orders(client: FlaskClient, auth: dict[str, str]) -> list[dict[str, Any]]:
    response = client.get("/api/orders?status=paid", headers=auth)
    assert response.status_code == 200, response.json
    items: list[dict[str, Any]] = response.json["items"]  # type: ignore[index]
    return items


def one_order_completed(
    sandbox: Sandbox, client: FlaskClient, auth: dict[str, str], sid: str
) -> None:
    """The invariant every fault keeps: one paid order, one order.completed, for the session."""
    assert [o["checkoutSessionId"] for o in paid_orders(client, auth)] == [sid]
    assert len(events(sandbox, "order.completed", sid)) == 1


def org_of(sandbox: Sandbox) -> str:
    return next(o.id for o in sandbox.orgs.all() if o.environment.value == "sandbox")


# --- the default: the notice arrives at once (today's behaviour) ------------------------------


def test_without_a_fault_the_notice_arrives_with_the_decision(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    sid = push_checkout(svc_http, auth, PAYS)["sessionId"]
    assert len(events(svc_sandbox, "order.completed", sid)) == 1  # before anyone polls
    assert timeline(svc_http, sid) == [
        ("prompt", "sent"),
        ("decision", "recorded"),
        ("notification", "sent"),
    ]
    assert status_of(svc_http, sid)["status"] == "completed"
    one_order_completed(svc_sandbox, svc_http, auth, sid)


# --- late ---------------------------------------------------------------------------------


def test_a_late_notice_resolves_by_itself_when_nobody_polls(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    notice_fault(svc_http, kind="late", delaySeconds=60, orgId=org_of(svc_sandbox))
    sid = push_checkout(svc_http, auth, PAYS)["sessionId"]
    assert events(svc_sandbox, "order.completed", sid) == []
    assert paid_orders(svc_http, auth) == []
    svc_sandbox.advance(timedelta(seconds=59))
    assert events(svc_sandbox, "order.completed", sid) == []
    svc_sandbox.advance(timedelta(seconds=1))
    assert [e.created for e in events(svc_sandbox, "order.completed", sid)] == [svc_sandbox.now()]
    assert timeline(svc_http, sid)[-2:] == [
        ("notification", "delayed"),
        ("notification", "delivered"),
    ]
    one_order_completed(svc_sandbox, svc_http, auth, sid)


def test_a_poll_resolves_a_late_notice_and_the_notice_then_changes_nothing(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    notice_fault(svc_http, kind="late", delaySeconds=60, orgId=org_of(svc_sandbox))
    sid = push_checkout(svc_http, auth, PAYS)["sessionId"]
    svc_sandbox.advance(timedelta(seconds=3))
    polled = status_of(svc_http, sid)
    assert polled["status"] == "completed" and polled["orderId"] is not None
    svc_sandbox.advance(timedelta(seconds=60))  # the late notice arrives
    assert status_of(svc_http, sid) == polled
    assert timeline(svc_http, sid)[2:] == [
        ("notification", "delayed"),
        ("check", "found"),
        ("notification", "ignored"),
    ]
    one_order_completed(svc_sandbox, svc_http, auth, sid)


def test_polls_check_the_provider_at_most_once_per_interval_per_session(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    interval = svc_sandbox.settings.provider_check_interval_seconds
    notice_fault(svc_http, kind="lost", orgId=org_of(svc_sandbox))
    sid = push_checkout(svc_http, auth, WAITS)["sessionId"]
    assert status_of(svc_http, sid)["status"] == "open"  # checks: nothing decided yet
    svc_http.post(f"/_sandbox/checkout/sessions/{sid}/approve", json={})
    svc_sandbox.advance(timedelta(seconds=interval - 1))
    assert status_of(svc_http, sid)["status"] == "open"  # throttled: the provider not asked
    svc_sandbox.advance(timedelta(seconds=1))
    assert status_of(svc_http, sid)["status"] == "completed"
    checks = [s for s in timeline(svc_http, sid) if s[0] == "check"]
    assert checks == [("check", "pending"), ("check", "found")]
    one_order_completed(svc_sandbox, svc_http, auth, sid)


def test_the_throttle_is_a_setting() -> None:
    sandbox = Sandbox(clock_mode="frozen", provider_check_interval_seconds=0)
    assert sandbox.settings.provider_check_interval_seconds == 0
    with pytest.raises(ValueError, match="provider_check_interval_seconds"):
        Sandbox(clock_mode="frozen", provider_check_interval_seconds=-1)


# --- lost ---------------------------------------------------------------------------------


def test_a_lost_notice_is_found_only_by_a_poll(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    notice_fault(svc_http, kind="lost", orgId=org_of(svc_sandbox))
    sid = push_checkout(svc_http, auth, PAYS)["sessionId"]
    svc_sandbox.advance(timedelta(minutes=10))
    assert events(svc_sandbox, "order.completed", sid) == []  # nothing ever arrives
    assert status_of(svc_http, sid)["status"] == "completed"
    assert ("notification", "lost") in timeline(svc_http, sid)
    one_order_completed(svc_sandbox, svc_http, auth, sid)


def test_a_lost_success_is_found_at_expiry_instead_of_expiring_a_paid_session(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    notice_fault(svc_http, kind="lost", orgId=org_of(svc_sandbox))
    sid = push_checkout(svc_http, auth, PAYS)["sessionId"]
    svc_sandbox.advance(timedelta(minutes=30))
    assert events(svc_sandbox, "checkout.session.expired", sid) == []
    assert status_of(svc_http, sid)["status"] == "completed"
    assert timeline(svc_http, sid)[-1] == ("check", "found")
    one_order_completed(svc_sandbox, svc_http, auth, sid)


def test_a_lost_failure_on_a_push_ends_the_session_when_a_poll_finds_it(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    notice_fault(svc_http, kind="lost", orgId=org_of(svc_sandbox))
    sid = push_checkout(svc_http, auth, FAILS)["sessionId"]
    assert events(svc_sandbox, "checkout.session.expired", sid) == []
    status = status_of(svc_http, sid)
    assert status["status"] == "expired" and status["failure"]["code"] == "payment_failed"
    assert len(events(svc_sandbox, "checkout.session.expired", sid)) == 1


# --- duplicated ---------------------------------------------------------------------------


def test_a_duplicated_notice_changes_nothing(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    notice_fault(svc_http, kind="duplicate", delaySeconds=10, orgId=org_of(svc_sandbox))
    sid = push_checkout(svc_http, auth, PAYS)["sessionId"]
    before = status_of(svc_http, sid)
    assert before["status"] == "completed"
    svc_sandbox.advance(timedelta(seconds=10))
    assert status_of(svc_http, sid) == before
    assert timeline(svc_http, sid)[2:] == [
        ("notification", "sent"),
        ("notification", "duplicated"),
        ("notification", "ignored"),
    ]
    one_order_completed(svc_sandbox, svc_http, auth, sid)


# --- out of order -------------------------------------------------------------------------


def _link(client: FlaskClient, auth: dict[str, str]) -> str:
    return str(checkout(client, auth, productId=published(client, auth)["_id"])["sessionId"])


def _pay(client: FlaskClient, sid: str, phone: str) -> dict[str, Any]:
    body = {"gateway": "mpesa", "phone": phone, "email": "buyer@example.com"}
    response = client.post(f"/pay/cs_{sid}", json=body)
    assert response.status_code == 200, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result


def test_a_failure_notice_arriving_after_the_retry_succeeded_is_ignored(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    sid = _link(svc_http, auth)
    notice_fault(svc_http, kind="out_of_order", sessionId=sid, count=1)
    first = _pay(svc_http, sid, "0900000002")
    assert first["attempt"]["inFlight"] is True  # the failure notice is held back
    retried = _pay(svc_http, sid, "0900000001")  # the attempt asks the provider first
    assert retried["status"] == "completed"
    assert retried["attempt"]["lastFailure"]["code"] == "payment_failed"
    steps = timeline(svc_http, sid)
    assert steps[steps.index(("notification", "held")) :] == [
        ("notification", "held"),
        ("check", "found"),
        ("prompt", "sent"),
        ("decision", "recorded"),
        ("notification", "sent"),
        ("notification", "ignored"),  # the first attempt's failure, after the success
    ]
    assert status_of(svc_http, sid)["status"] == "completed"
    one_order_completed(svc_sandbox, svc_http, auth, sid)


# --- scope: a session's rule, an organization's, a count -----------------------------------


def test_a_session_rule_applies_to_that_session_only_and_a_count_runs_out(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    waiting = push_checkout(svc_http, auth, WAITS)["sessionId"]
    notice_fault(svc_http, kind="lost", sessionId=waiting, count=1)
    other = push_checkout(svc_http, auth, PAYS)["sessionId"]
    assert ("notification", "sent") in timeline(svc_http, other)
    svc_http.post(f"/_sandbox/checkout/sessions/{waiting}/approve", json={})
    assert ("notification", "lost") in timeline(svc_http, waiting)
    assert svc_http.get("/_sandbox/faults/notifications").json == {"items": []}


def test_a_decided_prompt_cannot_be_decided_again_while_its_notice_is_out(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    notice_fault(svc_http, kind="lost", orgId=org_of(svc_sandbox))
    sid = push_checkout(svc_http, auth, WAITS)["sessionId"]
    svc_http.post(f"/_sandbox/checkout/sessions/{sid}/fail", json={"code": "payment_canceled"})
    response = svc_http.post(f"/_sandbox/checkout/sessions/{sid}/approve", json={})
    assert response.status_code == 409
    assert "already decided" in response.json["error"]
    assert status_of(svc_http, sid)["failure"]["code"] == "payment_canceled"
