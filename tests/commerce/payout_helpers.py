"""Requests the balance and withdrawal tests share."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox

DESTINATION = {"gateway": "telebirr", "account": "251911223344"}


def org_id_of(sandbox: Sandbox, auth: dict[str, str]) -> str:
    return sandbox.orgs.authenticate(auth["Authorization"].removeprefix("Bearer ")).org.id


def balance_body(client: FlaskClient, auth: dict[str, str]) -> dict[str, Any]:
    response = client.get("/api/balance", headers=auth)
    assert response.status_code == 200, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result


def balance(client: FlaskClient, auth: dict[str, str]) -> int:
    return int(balance_body(client, auth)["balanceMinor"])


def decide(client: FlaskClient, withdrawal_id: str, decision: str, **body: Any) -> dict[str, Any]:
    """The control plane approves or rejects a withdrawal in review."""
    response = client.post(f"/_sandbox/withdrawals/{withdrawal_id}/{decision}", json=body)
    assert response.status_code == 200, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result


def withdraw(
    client: FlaskClient,
    auth: dict[str, str],
    amount: int,
    key: str | None = None,
    status: int = 201,
    **fields: Any,
) -> dict[str, Any]:
    headers = dict(auth) if key is None else {**auth, "Idempotency-Key": key}
    body = {"amount": amount, **DESTINATION, **fields}
    response = client.post("/api/withdrawals", json=body, headers=headers)
    assert response.status_code == status, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result
