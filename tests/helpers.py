"""Helpers the tests share: seeded tokens and common requests."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox


def token_of(sandbox: Sandbox, environment: str = "sandbox") -> str:
    """The seeded API token of the default organization of ``environment``."""
    for org in sandbox.info()["organizations"]:
        if org["environment"] == environment:
            return str(org["tokens"][0]["token"])
    raise LookupError(environment)


def create_product(client: FlaskClient, auth: dict[str, str], **fields: Any) -> dict[str, Any]:
    body = {"title": "Book", "pricingModel": "fixed", "price": {"amount": 5000}}
    body.update(fields)
    response = client.post("/api/products", json=body, headers=auth)
    assert response.status_code == 201, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result


def assert_unharmed(client: FlaskClient, before: bytes) -> None:
    """After a refused request: the server still answers, the state export is byte for byte
    what it was, and reset still works."""
    assert client.get("/_sandbox").status_code == 200
    assert client.get("/_sandbox/state").data == before
    assert client.post("/_sandbox/reset", json={}).status_code == 200
    assert client.get("/_sandbox/state").status_code == 200


#: Every commerce operation served under {base_url}: the contract's operations but payAttempt,
#: which is served under {pay_url} (docs/contract.md). The Python client has a method for each.
BASE_URL_OPERATIONS = (
    "createProduct",
    "listProducts",
    "getProduct",
    "updateProduct",
    "archiveProduct",
    "createCheckout",
    "getCheckout",
    "listOrders",
    "getBalance",
    "createWithdrawal",
    "listWithdrawals",
    "getWithdrawal",
)
