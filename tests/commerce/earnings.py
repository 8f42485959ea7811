"""The one place tests get paid earnings from: a real checkout over HTTP, paid at once.

A custom-amount checkout with a gateway (production: a direct push; sandbox: the simulator),
approved through the control plane the moment it is created, so the sandbox clock does not move.
"""

from __future__ import annotations

from flask.testing import FlaskClient

BUYER = {"email": "payer@example.com", "phone": "0911223344"}


def earn(client: FlaskClient, auth: dict[str, str], amount: int) -> str:
    """Gives the organization of ``auth`` a paid order of ``amount`` santim; its order id."""
    body = {
        "amount": amount,
        "description": "Earnings for payout tests",
        "gateway": "telebirr",
        "customer": BUYER,
    }
    created = client.post("/api/checkout", json=body, headers=auth)
    assert created.status_code == 200, created.json
    session_id = created.json["sessionId"]  # type: ignore[index]
    approved = client.post(f"/_sandbox/checkout/sessions/{session_id}/approve", json={})
    assert approved.status_code == 200, approved.json
    status = client.get(f"/api/checkout/{session_id}").json
    assert status["orderStatus"] == "paid", status  # type: ignore[index]
    return str(status["orderId"])  # type: ignore[index]
