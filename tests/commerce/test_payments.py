"""Payments and the session lifecycle (spec §3, §7, §8): trigger phones, the simulator and
control-plane decisions with every failure code, production pushes, the 150 s guard on
payment links, expiry at 30 minutes (also with nobody polling), provider faults, and one
order per session when approve, poll and expiry race."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient
from pydantic import ValidationError

from svc_sandbox.commerce.payments import FAILURE_MESSAGES, PROVIDER_FAILURE_CODES
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.settings import Settings
from tests.commerce.checkout_helpers import (
    checkout,
    events,
    published,
    push_checkout,
    status_of,
)

TRIGGERS = [("251900000001", "completed", None), ("251900000002", "expired", "payment_failed")]


def _push(client: FlaskClient, auth: dict[str, str], phone: str = "0911223344") -> str:
    return str(push_checkout(client, auth, phone)["sessionId"])


def _link(client: FlaskClient, auth: dict[str, str]) -> str:
    product = published(client, auth)
    return str(checkout(client, auth, productId=product["_id"])["sessionId"])


def _attempt(
    client: FlaskClient, session_id: str, phone: str, status: int = 200, **extra: Any
) -> Any:
    body = {"gateway": "mpesa", "phone": phone, "email": "buyer@example.com", **extra}
    response = client.post(f"/pay/cs_{session_id}", json=body)
    assert response.status_code == status, response.json
    return response


@pytest.mark.parametrize(
    ("waited", "says"), [(0, "150 seconds"), (148, "2 seconds"), (149, "1 second")]
)
def test_the_guard_says_the_wait_left_in_words(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, waited: int, says: str
) -> None:
    session_id = _link(svc_http, auth)
    _attempt(svc_http, session_id, "0911223344")
    svc_sandbox.advance(timedelta(seconds=waited))
    refused = _attempt(svc_http, session_id, "0922334455", 409)
    assert refused.json["error"].endswith(f"try again in {says}")
    assert refused.headers["Retry-After"] == says.split()[0]


# --- sandbox trigger phones (§8) ------------------------------------------------------------


@pytest.mark.parametrize(("phone", "state", "code"), TRIGGERS)
def test_trigger_phones_on_a_sandbox_push(
    svc_http: FlaskClient, auth: dict[str, str], phone: str, state: str, code: str | None
) -> None:
    status = status_of(svc_http, _push(svc_http, auth, phone))
    assert status["status"] == state
    assert (status["failure"] or {}).get("code") == code
    assert (status["orderId"] is not None) == (state == "completed")


@pytest.mark.parametrize(
    ("phone", "state", "code"),
    [("0900000001", "completed", None), ("0900000002", "open", "payment_failed")]
    + [("251900000001", "completed", None), ("251900000002", "open", "payment_failed")],
)
def test_trigger_phones_on_a_payment_link(
    svc_http: FlaskClient, auth: dict[str, str], phone: str, state: str, code: str | None
) -> None:
    session_id = _link(svc_http, auth)
    _attempt(svc_http, session_id, phone)
    status = status_of(svc_http, session_id)
    assert status["status"] == state
    assert status["attempt"]["inFlight"] is False
    assert (status["attempt"]["lastFailure"] or {}).get("code") == code
    assert status["failure"] is None


def _order_customer(client: FlaskClient, auth: dict[str, str], session_id: str) -> Any:
    orders = client.get("/api/orders", headers=auth).json["items"]  # type: ignore[index]
    status = status_of(client, session_id)
    found = next(o["customerId"] for o in orders if o["_id"] == status["orderId"])
    return {"email": found["email"], "name": found["name"]}


@pytest.mark.parametrize("named", [True, False])
def test_a_payment_link_order_is_the_first_customer_known(
    svc_http: FlaskClient, auth: dict[str, str], named: bool
) -> None:
    """docs/spec-gaps.md, "customerId of a payment-link order": the checkout's customer, else
    the one entered with the first attempt; a later email is ignored."""
    product = published(svc_http, auth)
    customer = {"email": "merchant.named@example.com", "name": "Named"}
    extra = {"customer": customer} if named else {}
    session_id = checkout(svc_http, auth, productId=product["_id"], **extra)["sessionId"]
    _attempt(svc_http, session_id, "0900000002", email="first@example.com", name="First")
    _attempt(svc_http, session_id, "0900000001", email="retry@example.com", name="Retry")
    expected = customer if named else {"email": "first@example.com", "name": "First"}
    assert _order_customer(svc_http, auth, session_id) == expected


def test_any_other_phone_waits_for_the_simulator(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    session_id = _push(svc_http, auth)
    svc_sandbox.advance(timedelta(minutes=29))
    status = status_of(svc_http, session_id)
    assert status["status"] == "open" and status["orderStatus"] == "pending"


# --- decisions with every failure code --------------------------------------------------------


@pytest.mark.parametrize("code", PROVIDER_FAILURE_CODES)
def test_a_failed_direct_push_ends_the_session(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, code: str
) -> None:
    session_id = _push(svc_http, auth)
    response = svc_http.post(f"/_sandbox/checkout/sessions/{session_id}/fail", json={"code": code})
    assert response.status_code == 200, response.json
    status = status_of(svc_http, session_id)
    assert status["status"] == "expired"
    assert status["failure"] == {"code": code, "message": FAILURE_MESSAGES[code]}
    assert status["orderId"] is None and status["orderStatus"] == "failed"
    expired = events(svc_sandbox, "checkout.session.expired")
    assert [e.data for e in expired] == [{"sessionId": session_id, "failure": status["failure"]}]


@pytest.mark.parametrize("code", PROVIDER_FAILURE_CODES)
def test_a_failed_link_attempt_leaves_the_session_open_for_a_retry(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, code: str
) -> None:
    session_id = _link(svc_http, auth)
    _attempt(svc_http, session_id, "0911223344")
    assert status_of(svc_http, session_id)["attempt"]["inFlight"] is True
    svc_http.post(
        f"/_sandbox/checkout/sessions/{session_id}/fail", json={"code": code, "message": "Declined"}
    )
    status = status_of(svc_http, session_id)
    assert status["status"] == "open"
    assert status["attempt"] == {
        "inFlight": False,
        "lastFailure": {"code": code, "message": "Declined"},
    }
    assert events(svc_sandbox, "checkout.session.expired") == []
    _attempt(svc_http, session_id, "0900000001")
    assert status_of(svc_http, session_id)["status"] == "completed"


@pytest.mark.parametrize("code", ["nope", "approved", "Payment_x", "x__y", "a_" + "b" * 63])
def test_a_code_of_another_shape_is_400(
    svc_http: FlaskClient, auth: dict[str, str], code: str
) -> None:
    session_id = _push(svc_http, auth)
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post(f"/_sandbox/checkout/sessions/{session_id}/fail", json={"code": code})
    assert response.status_code == 400
    assert response.json["error"].startswith("code must be one of payment_rejected")
    assert svc_http.get("/_sandbox/state").data == before
    assert status_of(svc_http, session_id)["status"] == "open"


def test_a_failure_code_section_7_may_add_goes_end_to_end(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """§7 "New codes may be added; clients treat unknown codes like payment_failed": a test
    can fail a payment with one (DESIGN: "with any failure code") and see its client cope.
    Without a message of its own it says payment_failed's."""
    push = _push(svc_http, auth)
    failed = svc_http.post(
        f"/_sandbox/checkout/sessions/{push}/fail", json={"code": "payment_blocked_by_bank"}
    )
    assert failed.status_code == 200, failed.json
    status = status_of(svc_http, push)
    assert status["status"] == "expired"  # a failed direct push ends its session (§3)
    assert status["failure"] == {
        "code": "payment_blocked_by_bank",
        "message": FAILURE_MESSAGES["payment_failed"],
    }
    [expired] = events(svc_sandbox, "checkout.session.expired", push)
    assert expired.data["failure"]["code"] == "payment_blocked_by_bank"

    link = _link(svc_http, auth)
    _attempt(svc_http, link, "0911223344")
    told = {"code": "bank_offline", "message": "The bank is offline."}
    assert svc_http.post(f"/_sandbox/checkout/sessions/{link}/fail", json=told).status_code == 200
    assert status_of(svc_http, link)["attempt"]["lastFailure"] == told
    report = svc_http.get("/_sandbox/conformance").json
    assert report["violations"] == [], report["violations"]

    outcome = {"productionPushOutcome": "bank_offline"}
    assert svc_http.patch("/_sandbox/payments/provider", json=outcome).status_code == 200
    trigger = {"phone": "0911000444", "outcome": "fail", "failureCode": "bank_offline"}
    assert svc_http.post("/_sandbox/triggers", json=trigger).status_code == 201


def test_session_expired_is_no_provider_decision(
    svc_http: FlaskClient, auth: dict[str, str], live_auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """§7: session_expired means "30 minutes passed without payment": the session's own
    ending. No route lets the provider decide a prompt with it (400 naming the field), so a
    session never "expired after 30 minutes" 10 s in, nor a link shows it as lastFailure."""
    link = _link(svc_http, auth)
    _attempt(svc_http, link, "0911223344")
    push = _push(svc_http, live_auth)
    attempt = svc_sandbox.checkout.describe(push)["attempts"][0]["id"]
    before = svc_http.get("/_sandbox/state").data
    expired = {"code": "session_expired"}
    refusals = [
        ("POST", f"/_sandbox/checkout/sessions/{link}/fail", expired, "code"),
        ("POST", f"/_sandbox/payments/attempts/{attempt}/fail", expired, "code"),
        (
            "PATCH",
            "/_sandbox/payments/provider",
            {"productionPushOutcome": "session_expired"},
            "productionPushOutcome",
        ),
        (
            "POST",
            "/_sandbox/triggers",
            {"phone": "0911000444", "outcome": "fail", "failureCode": "session_expired"},
            "failureCode",
        ),
    ]
    for method, url, body, field in refusals:
        answer = svc_http.open(url, method=method, json=body)
        assert answer.status_code == 400, (url, answer.json)
        assert answer.json["error"].startswith(f"{field} must not be session_expired"), answer.json  # type: ignore[index]
    assert svc_http.get("/_sandbox/state").data == before
    svc_sandbox.advance(timedelta(seconds=10))  # the production push's default outcome
    assert status_of(svc_http, push)["status"] == "completed"
    assert status_of(svc_http, link)["attempt"] == {"inFlight": True, "lastFailure": None}


def test_the_push_outcome_setting_refuses_session_expired() -> None:
    with pytest.raises(ValidationError, match="must not be session_expired"):
        Settings.load({"production_push_outcome": "session_expired"})


def test_approving_an_attempt_by_its_id(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    session_id = _push(svc_http, auth)
    attempt = svc_http.get(f"/_sandbox/checkout/sessions/{session_id}").json["attempts"][0]  # type: ignore[index]
    response = svc_http.post(f"/_sandbox/payments/attempts/{attempt['id']}/approve", json={})
    assert response.json["status"] == "succeeded"  # type: ignore[index]
    again = svc_http.post(f"/_sandbox/payments/attempts/{attempt['id']}/approve", json={})
    assert again.status_code == 409


def test_approving_a_link_session_nobody_tried_pays_it(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    session_id = _link(svc_http, auth)
    svc_http.post(f"/_sandbox/checkout/sessions/{session_id}/approve", json={})
    assert status_of(svc_http, session_id)["status"] == "completed"


# --- production direct push -------------------------------------------------------------------


def test_production_push_takes_the_default_outcome_after_the_delay(
    svc_http: FlaskClient, live_auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    session_id = _push(svc_http, live_auth, "251900000002")  # no trigger phones in production
    svc_sandbox.advance(timedelta(seconds=9))
    assert status_of(svc_http, session_id)["status"] == "open"
    svc_sandbox.advance(timedelta(seconds=1))
    assert status_of(svc_http, session_id)["status"] == "completed"


@pytest.mark.parametrize("outcome", ["payment_rejected", "payment_canceled"])
def test_production_push_default_outcome_is_configurable(
    svc_http: FlaskClient, live_auth: dict[str, str], svc_sandbox: Sandbox, outcome: str
) -> None:
    response = svc_http.patch(
        "/_sandbox/payments/provider",
        json={"productionPushOutcome": outcome, "productionPushDelaySeconds": 3},
    )
    assert response.status_code == 200, response.json
    session_id = _push(svc_http, live_auth)
    svc_sandbox.advance(timedelta(seconds=3))
    status = status_of(svc_http, session_id)
    assert (status["status"], status["failure"]["code"]) == ("expired", outcome)


def test_production_push_waits_for_the_control_plane_when_told_to(
    svc_http: FlaskClient, live_auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    svc_http.patch("/_sandbox/payments/provider", json={"productionPushOutcome": "none"})
    session_id = _push(svc_http, live_auth)
    svc_sandbox.advance(timedelta(minutes=10))
    assert status_of(svc_http, session_id)["status"] == "open"
    svc_http.post(f"/_sandbox/checkout/sessions/{session_id}/approve", json={})
    assert status_of(svc_http, session_id)["status"] == "completed"


def test_production_push_settings_come_from_settings() -> None:
    sandbox = Sandbox(
        clock_mode="frozen", production_push_outcome="none", production_push_delay_seconds=5
    )
    assert (sandbox.payments.config.push_outcome, sandbox.payments.config.push_delay_seconds) == (
        "none",
        5,
    )


# --- the 150 s guard on payment links --------------------------------------------------------


def test_a_new_attempt_is_refused_for_150_seconds_while_a_prompt_is_out(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    session_id = _link(svc_http, auth)
    _attempt(svc_http, session_id, "0911223344")
    svc_sandbox.advance(timedelta(seconds=100))
    refused = _attempt(svc_http, session_id, "0922334455", 409)
    assert refused.headers["Retry-After"] == "50"
    svc_sandbox.advance(timedelta(seconds=49))
    _attempt(svc_http, session_id, "0922334455", 409)
    svc_sandbox.advance(timedelta(seconds=1))
    status = status_of(svc_http, session_id)
    assert status["attempt"] == {
        "inFlight": False,
        "lastFailure": {
            "code": "payment_timed_out",
            "message": FAILURE_MESSAGES["payment_timed_out"],
        },
    }
    _attempt(svc_http, session_id, "0922334455")
    assert status_of(svc_http, session_id)["attempt"]["inFlight"] is True


@pytest.mark.parametrize(
    "back", [timedelta(days=1), timedelta(hours=1), timedelta(seconds=100), timedelta(seconds=10)]
)
def test_after_the_clock_is_set_back_the_guard_still_lasts_one_window(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, back: timedelta
) -> None:
    """§3/§8 "a new attempt is refused for 150 seconds": a prompt sent after the time the
    clock is set back to counts as sent then (as a rate-limit hit does), so the refusal
    says at most 150 s and the prompt times out when they have passed."""
    session_id = _link(svc_http, auth)
    _attempt(svc_http, session_id, "0911223344")
    svc_sandbox.advance(timedelta(seconds=20))
    moved = svc_http.post(
        "/_sandbox/clock/set", json={"now": (svc_sandbox.now() - back).isoformat()}
    )
    assert moved.status_code == 200, moved.json
    refused = _attempt(svc_http, session_id, "0922334455", 409)
    sent_before_the_new_time = max(0, 20 - int(back.total_seconds()))  # seconds
    assert refused.headers["Retry-After"] == str(150 - sent_before_the_new_time)
    assert refused.json["error"] == (
        "A payment prompt is already out: answer it on the phone or try again in "
        f"{refused.headers['Retry-After']} seconds"
    )
    svc_sandbox.advance(timedelta(seconds=int(refused.headers["Retry-After"])))
    status = status_of(svc_http, session_id)
    assert (status["status"], status["attempt"]["inFlight"]) == ("open", False)
    assert status["attempt"]["lastFailure"]["code"] == "payment_timed_out"
    _attempt(svc_http, session_id, "0922334455")
    assert status_of(svc_http, session_id)["attempt"]["inFlight"] is True


def test_attempts_on_an_ended_session_are_409(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    session_id = _link(svc_http, auth)
    _attempt(svc_http, session_id, "0900000001")
    assert (
        _attempt(svc_http, session_id, "0900000001", 409).json["error"]
        == "This checkout is already paid"
    )


def test_a_payment_link_attempt_names_bad_fields(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    session_id = _link(svc_http, auth)
    for body, field in [
        ({"gateway": "paypal", "phone": "0911223344", "email": "a@b.co"}, "gateway"),
        ({"gateway": "cbe", "phone": "12", "email": "a@b.co"}, "phone"),
        ({"gateway": "cbe", "phone": "0911223344"}, "email"),
        ({"gateway": "cbe", "phone": "0911223344", "email": "nope"}, "email"),
    ]:
        response = svc_http.post(f"/pay/cs_{session_id}", json=body)
        assert response.status_code == 400
        assert response.json["error"].startswith(field)  # type: ignore[index]
    assert svc_http.post("/pay/cs_" + "0" * 24, json={}).status_code == 404


# --- expiry at 30 minutes -----------------------------------------------------------------------


@pytest.mark.parametrize("poll", [True, False], ids=["polled", "nobody-polls"])
def test_a_session_expires_at_exactly_30_minutes(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, poll: bool
) -> None:
    session_id = _link(svc_http, auth)
    svc_sandbox.advance(timedelta(minutes=29, seconds=59))
    if poll:
        assert status_of(svc_http, session_id)["status"] == "open"
    ran = svc_sandbox.advance(timedelta(minutes=5))
    expired = events(svc_sandbox, "checkout.session.expired")
    assert len(expired) == 1
    assert expired[0].created.isoformat() == "2026-01-01T00:30:00+00:00"
    assert expired[0].data == {
        "sessionId": session_id,
        "failure": {"code": "session_expired", "message": FAILURE_MESSAGES["session_expired"]},
    }
    assert any(r.kind == "checkout.expire" for r in ran)
    assert status_of(svc_http, session_id)["status"] == "expired"


def test_expiry_reports_the_last_attempts_reason(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    session_id = _link(svc_http, auth)
    _attempt(svc_http, session_id, "0900000002")
    _attempt(svc_http, session_id, "0900000002")
    svc_sandbox.advance(timedelta(minutes=30))
    status = status_of(svc_http, session_id)
    assert status["failure"]["code"] == "payment_failed"
    assert status["orderStatus"] == "failed"
    assert len(events(svc_sandbox, "checkout.session.expired")) == 1


def test_a_prompt_still_out_at_expiry_timed_out(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    session_id = _push(svc_http, auth)
    svc_sandbox.advance(timedelta(minutes=30))
    assert status_of(svc_http, session_id)["failure"]["code"] == "payment_timed_out"
    response = svc_http.post(f"/_sandbox/checkout/sessions/{session_id}/approve", json={})
    assert response.status_code == 409


def test_a_poll_finalizes_an_overdue_session_before_the_scheduler_runs(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    session_id = _link(svc_http, auth)
    svc_sandbox.clock.set(svc_sandbox.now() + timedelta(minutes=31))  # clock moved, nothing ran
    assert status_of(svc_http, session_id)["status"] == "expired"
    svc_sandbox.run_due()
    assert len(events(svc_sandbox, "checkout.session.expired")) == 1


@pytest.mark.parametrize("runner", ["scheduler", "poll"])
@pytest.mark.parametrize(
    ("delay", "state", "kinds"),
    [
        (1799, "completed", ["order.created", "order.completed"]),
        (1800, "expired", ["order.created", "checkout.session.expired"]),
    ],
    ids=["due before expiresAt", "due at expiresAt"],
)
def test_a_decision_due_at_the_expiry_instant_ends_the_same_whoever_runs_it(
    svc_http: FlaskClient,
    auth: dict[str, str],
    svc_sandbox: Sandbox,
    runner: str,
    delay: int,
    state: str,
    kinds: list[str],
) -> None:
    """One tie rule: a session takes a payment strictly before expiresAt. The scheduler runs
    the expiry (scheduled when the session opened) before a decision due at the same instant;
    a poll settling the session first follows the same order."""
    trigger = {"phone": "0911000222", "outcome": "approve", "decisionDelaySeconds": delay}
    assert svc_http.post("/_sandbox/triggers", json=trigger).status_code == 201
    session_id = _push(svc_http, auth, "0911000222")
    expiry = svc_sandbox.now() + timedelta(minutes=30)
    if runner == "scheduler":
        svc_sandbox.advance(timedelta(minutes=30))
    else:
        svc_sandbox.clock.set(expiry)  # the clock moved, nothing ran: the poll settles it
    status = status_of(svc_http, session_id)
    assert status["status"] == state
    if state == "expired":
        assert status["failure"]["code"] == "payment_timed_out"
    svc_sandbox.run_due()
    assert [e.type for e in events(svc_sandbox, session_id=session_id)] == kinds


# --- faults ------------------------------------------------------------------------------------


def test_the_provider_refuses_the_next_n_checkouts(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    svc_http.post("/_sandbox/faults", json={"refuseCheckouts": 2, "refuseMessage": "Provider down"})
    product = published(svc_http, auth)
    for _ in range(2):
        assert checkout(svc_http, auth, 502, productId=product["_id"]) == {"error": "Provider down"}
    assert svc_sandbox.checkout.sessions == {}
    checkout(svc_http, auth, productId=product["_id"])


def test_the_next_attempt_fails_with_initiate_failed(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    svc_http.post("/_sandbox/faults", json={"initiateFailed": ["Telebirr is under maintenance"]})
    session_id = _push(svc_http, auth, "0900000001")
    status = status_of(svc_http, session_id)
    assert status["failure"] == {
        "code": "initiate_failed",
        "message": "Telebirr is under maintenance",
    }
    assert svc_http.get("/_sandbox/faults").json["initiateFailures"] == []  # type: ignore[index]


# --- one order per session under races -----------------------------------------------------------


@pytest.mark.parametrize("round_", range(5))
def test_one_order_per_session_when_approve_poll_and_expiry_race(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, round_: int
) -> None:
    session_ids = [_push(svc_http, auth) for _ in range(6)]
    svc_sandbox.clock.set(
        svc_sandbox.now() + timedelta(minutes=29, seconds=59, microseconds=999_000)
    )
    barrier = threading.Barrier(4)

    def approve() -> None:
        barrier.wait()
        for sid in session_ids:
            svc_http.post(f"/_sandbox/checkout/sessions/{sid}/approve", json={})

    def poll() -> None:
        barrier.wait()
        for sid in session_ids * 3:
            svc_http.get(f"/api/checkout/{sid}")

    def expire() -> None:
        barrier.wait()
        svc_sandbox.advance(timedelta(seconds=1))

    threads = [threading.Thread(target=t) for t in (approve, poll, poll, expire)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for sid in session_ids:
        orders = [o for o in svc_sandbox.orders.orders.values() if o.checkout_session_id == sid]
        assert len(orders) == 1
        status = status_of(svc_http, sid)
        assert status["status"] in ("completed", "expired")
        assert (status["status"] == "completed") == (orders[0].status == "paid")
        ends = [e for e in events(svc_sandbox, session_id=sid) if e.type != "order.created"]
        assert len(ends) == 1
