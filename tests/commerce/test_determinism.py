"""Same seed + same requests => same ids, bodies and event log (DESIGN principle 4)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import BUYER, published
from tests.helpers import token_of


def _run() -> tuple[list[Any], list[dict[str, Any]]]:
    sandbox = Sandbox(clock_mode="frozen", seed=7)
    client = create_app(sandbox).test_client()
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    product = published(client, auth)
    bodies: list[Any] = []
    for body in (
        {
            "productId": product["_id"],
            "gateway": "telebirr",
            "customer": {**BUYER, "phone": "0900000001"},
        },
        {
            "productId": product["_id"],
            "gateway": "telebirr",
            "customer": {**BUYER, "phone": "0900000002"},
        },
        {"productId": product["_id"]},
        {"amount": 900, "description": "Tip", "metadata": {"k": 1}},
    ):
        bodies.append(client.post("/api/checkout", json=body, headers=auth).json)
    client.post(
        f"/pay/cs_{bodies[2]['sessionId']}",
        json={"gateway": "cbe", "phone": "0911111111", "email": "a@b.co"},
    )
    sandbox.advance(timedelta(minutes=31))
    bodies.append(client.get("/api/orders", headers=auth).json)
    return bodies, [e.envelope() for e in sandbox.events.events]


def test_two_runs_with_the_same_seed_agree() -> None:
    first, second = _run(), _run()
    assert first == second
    assert len(first[1]) >= 6


def test_export_and_restore_round_trip_a_checkout_in_progress() -> None:
    sandbox = Sandbox(clock_mode="frozen")
    client = create_app(sandbox).test_client()
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    session_id = client.post(
        "/api/checkout", json={"amount": 500, "description": "x"}, headers=auth
    ).json["sessionId"]  # type: ignore[index]
    state = sandbox.export()
    sandbox.advance(timedelta(minutes=31))
    sandbox.restore(state)
    assert client.get(f"/api/checkout/{session_id}").json["status"] == "open"  # type: ignore[index]
    sandbox.advance(timedelta(minutes=31))
    assert client.get(f"/api/checkout/{session_id}").json["status"] == "expired"  # type: ignore[index]


PWYW = {"title": "Tip jar", "pricingModel": "pwyw", "status": "published"}

#: Requests the sandbox refuses (each after the requests it needs), and the status.
REFUSALS: dict[str, tuple[list[tuple[str, str, Any]], int]] = {
    "pwyw default below the minimum": (
        [("POST", "/api/products", {**PWYW, "price": {"minimumAmount": 500, "defaultAmount": 1}})],
        400,
    ),
    "custom amount refused by the provider": (
        [
            ("POST", "/_sandbox/faults", {"refuseCheckouts": 1}),
            ("POST", "/api/checkout", {"amount": 900, "description": "Tip"}),
        ],
        502,
    ),
    "custom amount too small": (
        [("POST", "/api/checkout", {"amount": 1, "description": "Tip"})],
        400,
    ),
    "organization without a name": ([("POST", "/_sandbox/orgs", {"name": ""})], 400),
    "webhook endpoint with a bad URL": (
        [("POST", "/_sandbox/webhooks/endpoints", {"url": "ftp://x"})],
        400,
    ),
    "select field without options": (
        [("POST", "/_sandbox/orgs/{org}/checkout-fields", {"label": "Size", "type": "select"})],
        400,
    ),
    "checkout link to an unknown product": (
        [("POST", "/_sandbox/orgs/{org}/checkout-links", {"productIds": ["0" * 24]})],
        400,
    ),
    "withdrawal in the sandbox": (
        [
            (
                "POST",
                "/api/withdrawals",
                {"amount": 10000, "gateway": "cbe", "account": "0911223344"},
            )
        ],
        400,
    ),
}

#: What a client does afterwards; every answer must be the same with or without the refusal.
LATER: list[tuple[str, str, Any]] = [
    ("DELETE", "/_sandbox/faults", {}),  # a fault left unused by the run without the refusal
    ("POST", "/api/products", {**PWYW, "price": {"minimumAmount": 500}}),
    ("POST", "/api/checkout", {"amount": 900, "description": "Tip"}),
    ("POST", "/api/checkout", {"amount": 700, "description": "Tip"}),
    ("POST", "/_sandbox/orgs", {"name": "Shop"}),
    ("POST", "/_sandbox/webhooks/endpoints", {"url": "http://127.0.0.1:9/hooks"}),
    ("POST", "/_sandbox/events/trigger", {"type": "order.created"}),
    ("POST", "/_sandbox/orgs/{org}/checkout-fields", {"label": "Size"}),
]


def _answers(refusal: list[tuple[str, str, Any]], status: int | None) -> list[Any]:
    sandbox = Sandbox(clock_mode="frozen", seed=3)
    client = create_app(sandbox).test_client()
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    org = next(o.id for o in sandbox.orgs.all() if o.environment.value == "sandbox")

    def send(method: str, route: str, body: Any) -> Any:
        return client.open(route.format(org=org), method=method, json=body, headers=auth)

    for i, request in enumerate(refusal):
        response = send(*request)
        if status is not None and i == len(refusal) - 1:
            assert response.status_code == status, response.json
    return [send(*request).json for request in LATER]


@pytest.mark.parametrize("case", REFUSALS)
def test_a_refused_request_does_not_shift_later_ids(case: str) -> None:
    requests, status = REFUSALS[case]
    setup = requests[:-1]  # what the refusal needs (a fault), without the refused request
    assert _answers(requests, status) == _answers(setup, None)
