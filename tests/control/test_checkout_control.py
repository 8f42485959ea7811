"""The checkout control plane (docs/control-plane.md): links, fields, provider, faults, events."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import BUYER, checkout, org_id, published, push_checkout


def test_checkout_links_create_list_and_deactivate(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    org = org_id(svc_sandbox)
    product = published(svc_http, auth)
    created = svc_http.post(
        f"/_sandbox/orgs/{org}/checkout-links",
        json={
            "productIds": [product["checkoutToken"]],
            "metadata": {"campaign": "x"},
            "successUrl": "https://a.example/ok",
        },
    )
    assert created.status_code == 201
    link = created.json
    assert link["id"].startswith("cl_") and link["productIds"] == [product["_id"]]  # type: ignore[index]
    assert svc_http.get(f"/_sandbox/orgs/{org}/checkout-links").json["items"] == [link]  # type: ignore[index]
    updated = svc_http.patch(f"/_sandbox/checkout-links/{link['id']}", json={"active": False})  # type: ignore[index]
    assert updated.json["active"] is False  # type: ignore[index]


def test_null_clears_a_links_success_url_and_metadata_and_is_refused_elsewhere(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    """A successUrl set once could never be removed (null was read as "not sent")."""
    org = svc_http.get("/_sandbox").json["organizations"][0]["id"]  # type: ignore[index]
    product = published(svc_http, auth)
    body = {"productIds": [product["_id"]], "successUrl": "https://shop.example/ok"}
    link = svc_http.post(
        f"/_sandbox/orgs/{org}/checkout-links", json={**body, "metadata": {"a": "b"}}
    ).json
    url = f"/_sandbox/checkout-links/{link['id']}"  # type: ignore[index]
    assert svc_http.patch(url, json={"successUrl": None}).json["successUrl"] is None  # type: ignore[index]
    assert svc_http.patch(url, json={"metadata": None}).json["metadata"] == {}  # type: ignore[index]
    for field in ("active", "productIds"):
        refused = svc_http.patch(url, json={field: None})
        assert refused.status_code == 400
        assert refused.json["error"] == f"{field} must not be null"  # type: ignore[index]
    kept = svc_http.patch(url, json={}).json
    assert (kept["successUrl"], kept["metadata"], kept["active"]) == (None, {}, True)  # type: ignore[index]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"productIds": ["f" * 24]}, "productIds[0]"),
        ({"productIds": []}, "productIds"),
        ({"productIds": ["x"], "metadata": {"a": {"b": 1}}}, "metadata.a"),
    ],
)
def test_bad_link_bodies_are_400(
    svc_http: FlaskClient,
    auth: dict[str, str],
    svc_sandbox: Sandbox,
    body: dict[str, object],
    field: str,
) -> None:
    product = published(svc_http, auth)
    body = {k: ([product["_id"]] if v == ["x"] else v) for k, v in body.items()}
    response = svc_http.post(f"/_sandbox/orgs/{org_id(svc_sandbox)}/checkout-links", json=body)
    assert response.status_code == 400
    assert response.json["error"].startswith(field)  # type: ignore[index]


def test_checkout_fields_create_and_list(svc_http: FlaskClient, svc_sandbox: Sandbox) -> None:
    org = org_id(svc_sandbox)
    created = svc_http.post(
        f"/_sandbox/orgs/{org}/checkout-fields",
        json={"label": "Size", "type": "select", "options": ["S"]},
    )
    assert created.status_code == 201 and created.json["id"].startswith("cf_")  # type: ignore[index]
    assert len(svc_http.get(f"/_sandbox/orgs/{org}/checkout-fields").json["items"]) == 1  # type: ignore[index]
    bad = svc_http.post(
        f"/_sandbox/orgs/{org}/checkout-fields", json={"label": "x", "type": "color"}
    )
    assert bad.status_code == 400
    assert svc_http.get("/_sandbox/orgs/nope/checkout-fields").status_code == 404


def test_provider_settings_reject_unknown_outcomes(svc_http: FlaskClient) -> None:
    response = svc_http.patch(
        "/_sandbox/payments/provider", json={"productionPushOutcome": "maybe"}
    )
    assert response.status_code == 400
    assert svc_http.get("/_sandbox/payments/provider").json["productionPushOutcome"] == "approve"  # type: ignore[index]


DEFAULT_REFUSAL = "The payment provider refused to start the payment"
FAULT_FIELDS = ("refuseCheckouts", "refuseMessage", "initiateFailures")


@pytest.mark.parametrize(
    ("posts", "expected"),
    [
        pytest.param([{"refuseCheckouts": 2}], (2, DEFAULT_REFUSAL, []), id="set"),
        pytest.param(
            [{"refuseCheckouts": 2}, {"refuseCheckouts": 3}],
            (3, DEFAULT_REFUSAL, []),
            id="set again",
        ),
        pytest.param(
            [{"refuseCheckouts": 2}, {"refuseCheckouts": 0}],
            (0, DEFAULT_REFUSAL, []),
            id="0 clears",
        ),
        pytest.param(
            [{"initiateFailures": ["a"]}, {"initiateFailures": ["b", "c"]}],
            (0, DEFAULT_REFUSAL, ["b", "c"]),
            id="a list replaces the queue",
        ),
        pytest.param(
            [{"initiateFailures": ["a"]}, {"initiateFailures": []}],
            (0, DEFAULT_REFUSAL, []),
            id="[] clears",
        ),
        pytest.param(
            [{"initiateFailed": ["a"]}, {"initiateFailed": ["b"]}],
            (0, DEFAULT_REFUSAL, ["b"]),
            id="the first name replaces too",
        ),
        pytest.param(
            [{"refuseCheckouts": 2, "refuseMessage": "down", "initiateFailures": ["a"]}, {}],
            (2, "down", ["a"]),
            id="an empty body changes nothing",
        ),
        pytest.param(
            [
                {"refuseCheckouts": 2, "refuseMessage": "down", "initiateFailures": ["a"]},
                {"refuseCheckouts": 1},
            ],
            (1, "down", ["a"]),
            id="unsent fields are kept",
        ),
        pytest.param(
            [{"refuseMessage": "down"}, {"refuseMessage": "still down", "refuseCheckouts": 1}],
            (1, "still down", []),
            id="the message is set",
        ),
    ],
)
def test_posting_faults_sets_the_fields_it_names(
    svc_http: FlaskClient, posts: list[dict[str, object]], expected: tuple[object, ...]
) -> None:
    for body in posts:
        answer = svc_http.post("/_sandbox/faults", json=body)
        assert answer.status_code == 200, answer.json
    faults = svc_http.get("/_sandbox/faults").json
    assert tuple(faults[name] for name in FAULT_FIELDS) == expected  # type: ignore[index]
    assert answer.json == faults


def test_a_refused_fault_post_changes_nothing(svc_http: FlaskClient) -> None:
    svc_http.post("/_sandbox/faults", json={"refuseCheckouts": 2, "initiateFailures": ["a"]})
    before = svc_http.get("/_sandbox/state").data
    refused = svc_http.post(
        "/_sandbox/faults", json={"refuseCheckouts": 0, "initiateFailures": [""]}
    )
    assert refused.status_code == 400 and "initiateFailures" in refused.json["error"]  # type: ignore[index]
    assert svc_http.get("/_sandbox/state").data == before


def test_the_refusal_count_set_is_the_number_refused(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    svc_http.post("/_sandbox/faults", json={"refuseCheckouts": 5})
    svc_http.post("/_sandbox/faults", json={"refuseCheckouts": 1})
    checkout(svc_http, auth, 502, amount=100, description="x")
    checkout(svc_http, auth, amount=100, description="x")


def test_delete_clears_the_faults_and_resets_the_message(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    svc_http.post(
        "/_sandbox/faults",
        json={"refuseCheckouts": 3, "refuseMessage": "custom", "initiateFailures": ["down"]},
    )
    cleared = svc_http.delete("/_sandbox/faults", json={}).json
    assert tuple(cleared[name] for name in FAULT_FIELDS) == (0, DEFAULT_REFUSAL, [])  # type: ignore[index]
    assert svc_http.get("/_sandbox/faults").json == cleared
    checkout(svc_http, auth, amount=100, description="x")


def test_event_log_filters(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth)
    first = push_checkout(svc_http, auth, "0900000001", "cbe", product["_id"])
    push_checkout(svc_http, auth, "0900000002", "cbe", product["_id"])
    every = svc_http.get("/_sandbox/events").json
    assert every["total"] == 4  # type: ignore[index]
    by_session = svc_http.get(f"/_sandbox/events?sessionId={first['sessionId']}").json["items"]  # type: ignore[index]
    assert [e["type"] for e in by_session] == ["order.created", "order.completed"]
    expired = svc_http.get("/_sandbox/events?type=checkout.session.expired").json["items"]  # type: ignore[index]
    assert len(expired) == 1 and expired[0]["id"].startswith("evt_")
    other = svc_http.get(f"/_sandbox/events?orgId={org_id(svc_sandbox, 'production')}").json
    assert other["total"] == 0  # type: ignore[index]


@pytest.mark.parametrize(
    ("query", "error"),
    [
        (
            "type=order.paid",
            "type must be one of order.created, order.completed, checkout.session.expired",
        ),
        ("eventType=order.created", "eventType is not a known field"),
        ("limit=5", "limit is not a known field"),
    ],
)
def test_event_log_refuses_an_unknown_type_or_parameter(
    svc_http: FlaskClient, query: str, error: str
) -> None:
    # As the webhook journal (GET /_sandbox/webhooks/attempts?eventType=...) does.
    response = svc_http.get(f"/_sandbox/events?{query}")
    assert (response.status_code, response.json) == (
        400,
        {"error": error, "code": "validation_failed"},
    )


def test_describe_session_shows_attempts(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    result = checkout(svc_http, auth, amount=100, description="x")
    svc_http.post(
        f"/pay/cs_{result['sessionId']}",
        json={"gateway": "cbe", "phone": "0911111111", "email": "a@b.co"},
    )
    view = svc_http.get(f"/_sandbox/checkout/sessions/{result['sessionId']}").json
    assert view["mode"] == "link" and view["payToken"] == f"cs_{result['sessionId']}"  # type: ignore[index]
    assert [a["status"] for a in view["attempts"]] == ["in_flight"]  # type: ignore[index]
    assert svc_http.get("/_sandbox/checkout/sessions/" + "0" * 24).status_code == 404


def test_links_and_fields_refuse_another_organizations_product(
    svc_http: FlaskClient, auth: dict[str, str], live_auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    org = org_id(svc_sandbox)
    mine = published(svc_http, auth)
    theirs = published(svc_http, live_auth)
    link = svc_http.post(
        f"/_sandbox/orgs/{org}/checkout-links", json={"productIds": [mine["_id"]]}
    ).json
    refused = svc_http.patch(
        f"/_sandbox/checkout-links/{link['id']}",  # type: ignore[index]
        json={"productIds": [mine["_id"], theirs["checkoutToken"]], "active": False},
    )
    assert refused.status_code == 400
    assert refused.json["error"].startswith("productIds[1]")  # type: ignore[index]
    unchanged = svc_http.get(f"/_sandbox/orgs/{org}/checkout-links").json["items"][0]  # type: ignore[index]
    assert (unchanged["productIds"], unchanged["active"]) == ([mine["_id"]], True)

    field = svc_http.post(
        f"/_sandbox/orgs/{org}/checkout-fields",
        json={"label": "Size", "productIds": [theirs["_id"]]},
    )
    assert field.status_code == 400
    assert field.json["error"].startswith("productIds[0]")  # type: ignore[index]
    assert svc_http.get(f"/_sandbox/orgs/{org}/checkout-fields").json["items"] == []  # type: ignore[index]


# --- editing and removing checkout fields ----------------------------------------------------


def test_a_field_change_applies_to_later_checkouts_and_earlier_orders_keep_their_answers(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth)
    size = svc_http.post(
        f"/_sandbox/orgs/{org_id(svc_sandbox)}/checkout-fields",
        json={"label": "Size", "type": "select", "options": ["S", "M"], "required": True},
    ).json["id"]  # type: ignore[index]
    earlier = checkout(
        svc_http, auth, productId=product["_id"], customer=BUYER, collectedFields={size: "S"}
    )
    changed = svc_http.patch(
        f"/_sandbox/checkout-fields/{size}",
        json={"label": "Shirt size", "options": ["M", "L"], "required": False},
    )
    assert changed.status_code == 200
    assert (changed.json["label"], changed.json["options"], changed.json["required"]) == (  # type: ignore[index]
        "Shirt size",
        ["M", "L"],
        False,
    )
    refused = checkout(
        svc_http, auth, 400, productId=product["_id"], customer=BUYER, collectedFields={size: "S"}
    )
    assert refused["error"].startswith(f"collectedFields.{size}")
    checkout(svc_http, auth, productId=product["_id"], customer=BUYER)  # no longer required
    svc_sandbox.payments.approve(earlier["sessionId"])
    orders = svc_http.get("/api/orders", headers=auth).json["items"]  # type: ignore[index]
    assert [o["collectedFields"] for o in orders if o["status"] == "paid"] == [{size: "S"}]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"type": "colour"}, "type must be one of"),
        ({"options": []}, "options is required for a select field"),
        ({"type": "select", "options": []}, "options is required for a select field"),
        ({"productIds": ["f" * 24]}, "productIds[0] is not a product of this organization"),
        ({"label": ""}, "label"),
        ({"required": "yes"}, "required"),
    ],
)
def test_a_refused_field_change_is_a_400_naming_the_field_and_changes_nothing(
    svc_http: FlaskClient, svc_sandbox: Sandbox, body: dict[str, object], message: str
) -> None:
    org = org_id(svc_sandbox)
    size = svc_http.post(
        f"/_sandbox/orgs/{org}/checkout-fields",
        json={"label": "Size", "type": "select", "options": ["S"]},
    ).json
    response = svc_http.patch(
        f"/_sandbox/checkout-fields/{size['id']}",  # type: ignore[index]
        json={**body, "required": True} if "required" not in body else body,
    )
    assert response.status_code == 400
    assert response.json["error"].startswith(message)  # type: ignore[index]
    assert svc_http.get(f"/_sandbox/orgs/{org}/checkout-fields").json["items"] == [size]  # type: ignore[index]


def test_a_removed_field_is_neither_asked_nor_taken(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    org = org_id(svc_sandbox)
    product = published(svc_http, auth)
    size = svc_http.post(
        f"/_sandbox/orgs/{org}/checkout-fields", json={"label": "Size", "required": True}
    ).json
    removed = svc_http.delete(f"/_sandbox/checkout-fields/{size['id']}", json={})  # type: ignore[index]
    assert (removed.status_code, removed.json) == (200, size)
    assert svc_http.get(f"/_sandbox/orgs/{org}/checkout-fields").json["items"] == []  # type: ignore[index]
    checkout(svc_http, auth, productId=product["_id"], customer=BUYER)
    taken = checkout(
        svc_http,
        auth,
        400,
        productId=product["_id"],
        customer=BUYER,
        collectedFields={size["id"]: "M"},  # type: ignore[index]
    )
    assert taken["error"].startswith(f"collectedFields.{size['id']} is not a checkout field")  # type: ignore[index]


@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
def test_an_unknown_field_is_a_404(svc_http: FlaskClient, method: str) -> None:
    response = svc_http.open("/_sandbox/checkout-fields/cf_nope", method=method, json={})
    assert (response.status_code, response.json["error"]) == (  # type: ignore[index]
        404,
        "checkout field cf_nope not found",
    )
