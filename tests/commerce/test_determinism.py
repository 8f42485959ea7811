"""Same seed + same requests => same ids, bodies and event log (DESIGN principle 4)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

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
