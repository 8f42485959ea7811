"""The wallet control plane (docs/control-plane.md "Wallets"): fund, set a balance, list
transfers and ledger entries; bad input is a 400 naming the field and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox


def wallets(sandbox: Sandbox) -> Any:
    return sandbox.export()["services"]["wallets"]


def test_fund_and_set_by_handle_or_id(svc_http: FlaskClient, svc_sandbox: Sandbox) -> None:
    funded = svc_http.post(
        "/_sandbox/wallets/abebe/fund", json={"amountMinor": 500, "note": "gift"}
    )
    assert funded.status_code == 200
    assert funded.json == {
        "userId": svc_sandbox.users.by_handle("abebe").id,  # type: ignore[union-attr]
        "handle": "abebe",
        "currency": "ETB",
        "availableMinor": 1000500,
        "totalMinor": 1000500,
    }
    user_id = funded.json["userId"]  # type: ignore[index]
    cut = svc_http.put(f"/_sandbox/wallets/{user_id}/balance", json={"availableMinor": 20})
    assert cut.json["availableMinor"] == 20  # type: ignore[index]
    assert cut.json["totalMinor"] == 1000500  # type: ignore[index]
    raised = svc_http.put("/_sandbox/wallets/abebe/balance", json={"availableMinor": 120})
    assert raised.json["totalMinor"] == 1000600  # type: ignore[index]
    entries = svc_http.get("/_sandbox/wallets/abebe/ledger").json["items"]  # type: ignore[index]
    assert [(e["kind"], e["amountMinor"], e["note"]) for e in entries] == [
        ("funding", 1000000, "seeded"),
        ("funding", 500, "gift"),
        ("adjustment", -1000480, None),
        ("adjustment", 100, None),
    ]


def test_setting_the_same_balance_writes_no_entry(svc_http: FlaskClient) -> None:
    svc_http.put("/_sandbox/wallets/abebe/balance", json={"availableMinor": 1000000})
    assert len(svc_http.get("/_sandbox/wallets/abebe/ledger").json["items"]) == 1  # type: ignore[index]


@pytest.mark.parametrize("path", ["", "/ledger", "/transfers"])
def test_an_unknown_user_is_404(svc_http: FlaskClient, path: str) -> None:
    response = svc_http.get(f"/_sandbox/wallets/nobody{path}")
    assert response.status_code == 404
    assert response.json["error"] == "User not found"  # type: ignore[index]


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("fund", {"amountMinor": 0}, "amountMinor"),
        ("fund", {"amountMinor": -5}, "amountMinor"),
        ("fund", {"amountMinor": 1.5}, "amountMinor"),
        ("fund", {"amountMinor": "100"}, "amountMinor"),
        ("fund", {"amountMinor": 10**14}, "amountMinor"),
        ("fund", {}, "amountMinor"),
        ("fund", {"amountMinor": 5, "extra": 1}, "extra"),
        ("fund", {"amountMinor": 5, "note": ""}, "note"),
        ("balance", {"availableMinor": -1}, "availableMinor"),
        ("balance", {"availableMinor": None}, "availableMinor"),
        ("balance", {"availableMinor": True}, "availableMinor"),
        ("fund", {"amountMinor": 5, "note": None}, "note must not be null"),
        ("balance", {"availableMinor": 5, "note": None}, "note must not be null"),
    ],
)
def test_bad_bodies_are_400_naming_the_field(
    svc_http: FlaskClient, svc_sandbox: Sandbox, route: str, body: dict[str, Any], field: str
) -> None:
    before = wallets(svc_sandbox)
    method = svc_http.post if route == "fund" else svc_http.put
    response = method(f"/_sandbox/wallets/abebe/{route}", json=body)
    assert response.status_code == 400
    assert field in response.json["error"]  # type: ignore[index]
    assert wallets(svc_sandbox) == before


def test_a_malformed_body_is_400(svc_http: FlaskClient, svc_sandbox: Sandbox) -> None:
    before = wallets(svc_sandbox)
    response = svc_http.post(
        "/_sandbox/wallets/abebe/fund", data=b"\xff{", content_type="application/json"
    )
    assert response.status_code == 400
    assert wallets(svc_sandbox) == before


def test_a_fund_that_would_pass_the_control_plane_cap_is_400_and_changes_nothing(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    # abebe holds the seeded 1000000: the cap (10^13) leaves room for 10^13 - 1000000 more.
    room = 10**13 - 1000000
    assert (
        svc_http.post("/_sandbox/wallets/abebe/fund", json={"amountMinor": room}).json[  # type: ignore[index]
            "availableMinor"
        ]
        == 10**13
    )
    before = svc_http.get("/_sandbox/state").data
    refused = svc_http.post("/_sandbox/wallets/abebe/fund", json={"amountMinor": 1})
    assert refused.status_code == 400
    assert refused.json == {
        "error": "amountMinor takes availableMinor to 10000000000001, past 10000000000000, the "
        "largest balance the control plane may fund (this wallet holds 10000000000000)",
        "code": "validation_failed",
    }
    assert svc_http.get("/_sandbox/state").data == before
    # Many funds below the per-call cap cannot add up past it either.
    for _ in range(3):
        assert svc_http.post(
            "/_sandbox/wallets/tigist/fund", json={"amountMinor": 10**13 // 2}
        ).status_code in (200, 400)
    tigist = svc_http.get("/_sandbox/wallets/tigist").json
    assert tigist is not None and tigist["availableMinor"] <= 10**13


def test_set_balance_cannot_push_the_lifetime_total_past_2_to_the_53(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    # Raising and cutting again adds to totalMinor each time; it must stay a number JSON
    # clients reading doubles get exactly.
    values = [10**13, 0] * 905  # 905 raises of 10^13 pass 2^53 (about 9.007 * 10^15)
    answers = (
        svc_http.put("/_sandbox/wallets/dawit/balance", json={"availableMinor": v}) for v in values
    )
    refused = next(answer for answer in answers if answer.status_code != 200)
    assert refused.status_code == 400
    assert refused.json["error"].startswith("availableMinor takes totalMinor to ")  # type: ignore[index]
    dawit = svc_http.get("/_sandbox/wallets/dawit").json
    assert dawit is not None and dawit["totalMinor"] <= 2**53 - 1
