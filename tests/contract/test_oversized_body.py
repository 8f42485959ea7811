"""A body over 1 MiB answers a JSON 413 that the contract declares (so strict mode lets it by)."""

from __future__ import annotations

from flask.testing import FlaskClient


def test_oversized_body_is_a_declared_413(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    body = '{"title": "' + "x" * (1024 * 1024) + '", "pricingModel": "free"}'
    response = svc_http.post(
        "/api/products", data=body, headers={**auth, "Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert response.is_json
    assert set(response.json) == {"error"}  # type: ignore[arg-type]
    assert svc_http.get("/api/products", headers=auth).json["total"] == 0  # type: ignore[index]
