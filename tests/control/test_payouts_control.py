"""Control plane of withdrawals: review decisions, the owner-wallet switch, listing."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.commerce.earnings import earn
from tests.commerce.payout_helpers import decide, org_id_of, withdraw


def test_lists_every_organizations_withdrawals(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    created = svc_http.post("/_sandbox/orgs", json={"name": "B", "environment": "production"})
    other = {"Authorization": f"Bearer {created.json['tokens'][0]['token']}"}  # type: ignore[index]
    earn(svc_http, live_auth, 2_000_000)
    earn(svc_http, other, 50000)
    mine = withdraw(svc_http, live_auth, 1_500_000)
    theirs = withdraw(svc_http, other, 10000)
    everything = svc_http.get("/_sandbox/withdrawals").json
    assert everything["total"] == 2  # type: ignore[index]
    org_id = org_id_of(svc_sandbox, live_auth)
    only_mine = svc_http.get(f"/_sandbox/withdrawals?org={org_id}").json
    assert [w["_id"] for w in only_mine["items"]] == [mine["_id"]]  # type: ignore[index]
    assert only_mine["items"][0]["organizationId"] == org_id  # type: ignore[index]
    in_review = svc_http.get("/_sandbox/withdrawals?status=reviewing").json
    assert [w["_id"] for w in in_review["items"]] == [mine["_id"]]  # type: ignore[index]
    one = svc_http.get(f"/_sandbox/withdrawals/{theirs['_id']}").json
    assert one["status"] == "pending"  # type: ignore[index]


@pytest.mark.parametrize("name", ["orgId", "org"])
def test_the_organization_filter_is_orgId_as_on_every_control_route_or_org(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str], name: str
) -> None:
    """`orgId` listed every organization's withdrawals (it was ignored); it is the name the
    other control routes use, and `org` (documented first) stays the same filter."""
    created = svc_http.post("/_sandbox/orgs", json={"name": "B", "environment": "production"})
    other = {"Authorization": f"Bearer {created.json['tokens'][0]['token']}"}  # type: ignore[index]
    earn(svc_http, live_auth, 50000)
    earn(svc_http, other, 50000)
    mine = withdraw(svc_http, live_auth, 10000)
    withdraw(svc_http, other, 10000)
    org_id = org_id_of(svc_sandbox, live_auth)
    listed = svc_http.get(f"/_sandbox/withdrawals?{name}={org_id}")
    assert listed.status_code == 200
    assert [w["_id"] for w in listed.json["items"]] == [mine["_id"]]  # type: ignore[index]
    both = svc_http.get(f"/_sandbox/withdrawals?orgId={org_id}&org={org_id}")
    assert both.json["total"] == 1  # type: ignore[index]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("statuss=reviewing", "statuss is not a known field"),
        ("orgid=x", "orgid is not a known field"),
        ("organizationId=x", "organizationId is not a known field"),
        ("orgId=a&org=b", "orgId and org are the same filter: send one"),
        ("status=done", "status must be one of pending, reviewing, approved, rejected"),
    ],
)
def test_an_unknown_or_contradictory_filter_is_a_400_naming_it(
    svc_http: FlaskClient, live_auth: dict[str, str], query: str, message: str
) -> None:
    """As GET /_sandbox/events and /_sandbox/webhooks/attempts refuse theirs: a misspelt
    filter used to be ignored, listing every withdrawal."""
    earn(svc_http, live_auth, 50000)
    withdraw(svc_http, live_auth, 10000)
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.get(f"/_sandbox/withdrawals?{query}")
    assert response.status_code == 400
    assert response.json["code"] == "validation_failed"  # type: ignore[index]
    assert response.json["error"].startswith(message)  # type: ignore[index]
    assert svc_http.get("/_sandbox/state").data == before


@pytest.mark.parametrize(
    "route", ["/_sandbox/withdrawals?orgId=nope", "/_sandbox/events?orgId=nope"]
)
def test_an_organization_that_does_not_exist_has_nothing_as_in_the_event_log(
    svc_http: FlaskClient, live_auth: dict[str, str], route: str
) -> None:
    earn(svc_http, live_auth, 50000)
    withdraw(svc_http, live_auth, 10000)
    response = svc_http.get(route)
    assert response.status_code == 200
    assert response.json["items"] == [] and response.json["total"] == 0  # type: ignore[index]


def test_lifecycle_table_is_published(svc_http: FlaskClient) -> None:
    table = svc_http.get("/_sandbox/withdrawals/lifecycle").json
    moves = {(t["from"], t["to"]) for t in table["transitions"]}  # type: ignore[index]
    assert moves == {
        ("none", "pending"),
        ("none", "reviewing"),
        ("pending", "processing"),
        ("reviewing", "approved"),
        ("reviewing", "rejected"),
        ("approved", "processing"),
        ("processing", "completed"),
    }


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_only_a_withdrawal_in_review_can_be_decided(
    svc_http: FlaskClient, live_auth: dict[str, str], decision: str
) -> None:
    earn(svc_http, live_auth, 50000)
    wid = withdraw(svc_http, live_auth, 10000)["_id"]
    response = svc_http.post(f"/_sandbox/withdrawals/{wid}/{decision}", json={})
    assert response.status_code == 409
    target = "approved" if decision == "approve" else "rejected"
    assert response.json == {
        "error": f"withdrawal cannot move from pending to {target}",
        "code": "illegal_transition",
    }


def test_a_decision_is_final(svc_http: FlaskClient, live_auth: dict[str, str]) -> None:
    earn(svc_http, live_auth, 2_000_000)
    wid = withdraw(svc_http, live_auth, 2_000_000)["_id"]
    decide(svc_http, wid, "reject")
    assert svc_http.post(f"/_sandbox/withdrawals/{wid}/approve", json={}).status_code == 409


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/_sandbox/withdrawals/" + "0" * 24 + "/approve", 404, "Withdrawal not found"),
        ("/_sandbox/withdrawals/nope/reject", 400, "id must be 24 lowercase hex"),
        ("/_sandbox/withdrawals/" + "0" * 24, 404, "Withdrawal not found"),
        ("/_sandbox/withdrawals?status=x", 400, "status must be one of"),
    ],
)
def test_control_errors(svc_http: FlaskClient, path: str, status: int, message: str) -> None:
    if path.endswith(("approve", "reject")):
        response = svc_http.post(path, json={})
    else:
        response = svc_http.get(path)
    assert response.status_code == status
    assert message in response.json["error"]  # type: ignore[index]


def test_review_note_is_validated(svc_http: FlaskClient, live_auth: dict[str, str]) -> None:
    earn(svc_http, live_auth, 2_000_000)
    wid = withdraw(svc_http, live_auth, 2_000_000)["_id"]
    response = svc_http.post(f"/_sandbox/withdrawals/{wid}/approve", json={"note": 5})
    assert response.status_code == 400 and response.json["error"] == "note must be a string"  # type: ignore[index]
    assert svc_http.get(f"/_sandbox/withdrawals/{wid}").json["status"] == "reviewing"  # type: ignore[index]


def test_owner_wallet_switch(
    svc_sandbox: Sandbox, svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    org_id = org_id_of(svc_sandbox, live_auth)
    path = f"/_sandbox/orgs/{org_id}/owner-wallet"
    assert svc_http.get(path).json == {"organizationId": org_id, "canCover": True}
    assert svc_http.put(path, json={"canCover": False}).status_code == 200
    assert svc_http.get(path).json == {"organizationId": org_id, "canCover": False}
    bad = svc_http.put(path, json={"canCover": "no"})
    assert bad.status_code == 400 and "canCover" in bad.json["error"]  # type: ignore[index]
    missing = svc_http.put("/_sandbox/orgs/" + "0" * 24 + "/owner-wallet", json={"canCover": 1})
    assert missing.status_code == 400
    unknown = svc_http.put("/_sandbox/orgs/" + "0" * 24 + "/owner-wallet", json={"canCover": True})
    assert unknown.status_code == 404
