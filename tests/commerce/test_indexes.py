"""Derived indexes (the prompt in flight per session, a product by its ``p_`` token) answer like
the scans they replace, also after an export -> reset -> import round trip (rebuilt on import)."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from tests.commerce.checkout_helpers import checkout, published, status_of

JSON = {"Content-Type": "application/json"}


def _pay(client: FlaskClient, session_id: str, status: int) -> Any:
    body = {"gateway": "mpesa", "phone": "0911223344", "email": "buyer@example.com"}
    response = client.post(f"/pay/cs_{session_id}", json=body)
    assert response.status_code == status, response.json
    return response.json


def _round_trip(client: FlaskClient) -> None:
    state = client.get("/_sandbox/state").json
    assert client.post("/_sandbox/reset", json={}).status_code == 200
    response = client.put("/_sandbox/state", json=state, headers=JSON)
    assert response.status_code == 200, response.json


def test_the_prompt_in_flight_is_found_after_import(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    product = published(svc_http, auth)
    out = checkout(svc_http, auth, productId=product["_id"])["sessionId"]
    idle = checkout(svc_http, auth, productId=product["_id"])["sessionId"]
    _pay(svc_http, out, 200)
    _round_trip(svc_http)
    assert status_of(svc_http, out)["attempt"]["inFlight"] is True
    assert status_of(svc_http, idle)["attempt"]["inFlight"] is False
    conflict = _pay(svc_http, out, 409)
    assert conflict["error"].startswith("A payment prompt is already out")
    _pay(svc_http, idle, 200)  # the index takes new attempts after the import too
    assert status_of(svc_http, idle)["attempt"]["inFlight"] is True


def test_a_product_is_found_by_its_token_after_import(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    first = published(svc_http, auth, title="First")
    _round_trip(svc_http)
    second = published(svc_http, auth, title="Second")
    for product in (first, second):
        found = svc_http.get(f"/api/products/{product['checkoutToken']}", headers=auth)
        assert found.status_code == 200, found.json
        assert found.json["product"]["_id"] == product["_id"]
    assert svc_http.get("/api/products/p_doesNotExist", headers=auth).status_code == 404


def test_a_reset_forgets_what_the_indexes_knew(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    product = published(svc_http, auth)
    assert svc_http.post("/_sandbox/reset", json={}).status_code == 200
    gone = svc_http.get(f"/api/products/{product['checkoutToken']}", headers=auth)
    assert gone.status_code == 404
