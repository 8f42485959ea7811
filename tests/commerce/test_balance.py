"""GET /balance (spec §2 Balance, §4): paid production earnings not yet withdrawn."""

from __future__ import annotations

from datetime import timedelta

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.commerce.earnings import earn
from tests.commerce.payout_helpers import balance, balance_body, decide, org_id_of, withdraw


def test_production_balance_is_paid_earnings(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    assert balance_body(svc_http, live_auth) == {
        "success": True,
        "eligible": True,
        "balanceMinor": 0,
        "currency": "ETB",
    }
    earn(svc_http, live_auth, 30000)
    earn(svc_http, live_auth, 12345)
    assert balance(svc_http, live_auth) == 42345


def test_sandbox_organization_is_not_eligible(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    earn(svc_http, auth, 50000)  # a sandbox "earning" is never withdrawable
    assert balance_body(svc_http, auth) == {
        "success": True,
        "eligible": False,
        "balanceMinor": 0,
        "currency": "ETB",
    }


def test_only_production_orders_count_after_going_live(
    svc_sandbox: Sandbox, svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    earn(svc_http, auth, 50000)
    org_id = org_id_of(svc_sandbox, auth)
    svc_http.patch(f"/_sandbox/orgs/{org_id}", json={"environment": "production"})
    token = svc_http.post(f"/_sandbox/orgs/{org_id}/tokens", json={}).json["token"]  # type: ignore[index]
    live = {"Authorization": f"Bearer {token}"}
    assert balance(svc_http, live) == 0
    earn(svc_http, live, 20000)
    assert balance(svc_http, live) == 20000


@pytest.mark.parametrize(
    "change", [{"developerMode": False}, {"kyc": "pending"}, {"kyc": "rejected"}]
)
def test_production_org_that_cannot_withdraw_shows_earnings_but_not_eligible(
    svc_sandbox: Sandbox,
    svc_http: FlaskClient,
    live_auth: dict[str, str],
    change: dict[str, object],
) -> None:
    earn(svc_http, live_auth, 30000)
    svc_http.patch(f"/_sandbox/orgs/{org_id_of(svc_sandbox, live_auth)}", json=change)
    assert balance_body(svc_http, live_auth) == {
        "success": True,
        "eligible": False,
        "balanceMinor": 30000,
        "currency": "ETB",
    }


def test_withdrawals_debit_and_rejection_returns(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 3_000_000)
    withdraw(svc_http, live_auth, 100_000)
    assert balance(svc_http, live_auth) == 2_900_000
    big = withdraw(svc_http, live_auth, 1_500_000)
    assert big["status"] == "reviewing"
    assert balance(svc_http, live_auth) == 1_400_000
    assert decide(svc_http, big["_id"], "reject")["status"] == "rejected"
    assert balance(svc_http, live_auth) == 2_900_000


def test_completed_withdrawal_stays_debited(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    earn(svc_http, live_auth, 50000)
    withdraw(svc_http, live_auth, 20000)
    svc_sandbox.advance(timedelta(hours=1))
    assert balance(svc_http, live_auth) == 30000


@pytest.mark.parametrize(
    ("headers", "status", "key"),
    [
        ({}, 403, "error"),
        ({"Authorization": "Bearer svc_live_nope"}, 401, "message"),
        ({"Authorization": "Basic abc"}, 401, "message"),
    ],
)
def test_balance_needs_a_token(
    svc_http: FlaskClient, headers: dict[str, str], status: int, key: str
) -> None:
    response = svc_http.get("/api/balance", headers=headers)
    assert response.status_code == status
    assert list(response.json) == [key]  # type: ignore[arg-type]
