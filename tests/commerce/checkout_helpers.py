"""Requests the checkout tests share."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.helpers import create_product

BUYER = {"email": "buyer@example.com", "phone": "0911223344"}


def published(client: FlaskClient, auth: dict[str, str], **fields: Any) -> dict[str, Any]:
    """A published product (fixed 50.00 ETB unless fields say otherwise)."""
    return create_product(client, auth, **{"status": "published", **fields})["product"]


def checkout(
    client: FlaskClient, auth: dict[str, str] | None, status: int = 200, **body: Any
) -> dict[str, Any]:
    response = client.post("/api/checkout", json=body, headers=auth or {})
    assert response.status_code == status, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result


def push_checkout(
    client: FlaskClient,
    auth: dict[str, str],
    phone: str = "0911223344",
    gateway: str = "telebirr",
    product_id: str | None = None,
) -> dict[str, Any]:
    """A checkout with a gateway (sandbox: the simulator; production: a direct push)."""
    if product_id is None:
        product_id = published(client, auth)["_id"]
    customer = {**BUYER, "phone": phone}
    return checkout(client, auth, productId=product_id, gateway=gateway, customer=customer)


def session_of_mode(client: FlaskClient, merchant: dict[str, str], mode: str) -> str:
    """A new open session of one of the merchant's environment's modes with a prompt:
    ``push`` (gateway set: the simulator, or a direct push in production), ``link`` (token, no
    gateway) or ``hosted`` (no token, no gateway: the provider's page)."""
    product = published(client, merchant)
    if mode == "push":
        result = push_checkout(client, merchant, product_id=product["_id"])
    elif mode == "link":
        result = checkout(client, merchant, productId=product["_id"])
    else:
        result = checkout(client, None, productId=product["checkoutToken"], customer=BUYER)
    return str(result["sessionId"])


#: The modes ``session_of_mode`` makes.
PROMPT_MODES = ("push", "link", "hosted")


def status_of(client: FlaskClient, session_id: str) -> dict[str, Any]:
    response = client.get(f"/api/checkout/{session_id}")
    assert response.status_code == 200, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result


def path(url: str) -> str:
    """The path of an absolute URL the sandbox built, for the test client."""
    return urlsplit(url).path


def events(sandbox: Sandbox, type_: str | None = None, session_id: str | None = None) -> list[Any]:
    return sandbox.events.query(type_=type_, session_id=session_id)


def org_id(sandbox: Sandbox, environment: str = "sandbox") -> str:
    return next(o.id for o in sandbox.orgs.all() if o.environment.value == environment)
