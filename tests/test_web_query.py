"""web.query_values: a route that reads one value per query parameter refuses a parameter sent
more than once, 400 naming it in the identity provider's words ("<name> is repeated: send it
once"), in its family's error shape, before it acts; the contract check says the same."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from tests.helpers import assert_unharmed

REPEATED = "{} is repeated: send it once"

#: (path, parameter, two values each accepted alone): every commerce route reading the query.
COMMERCE = [
    (path, name, values)
    for path in ("/api/products", "/api/orders", "/api/withdrawals")
    for name, values in (("page", ("1", "0")), ("limit", ("1", "200")), ("status", ("a", "b")))
]

#: (method, path, parameter, values): every control-plane route reading the query.
CONTROL = [
    ("GET", "/_sandbox/clock", "limit", ("1", "2")),
    ("GET", "/_sandbox/requests", "limit", ("1", "2")),
    ("GET", "/_sandbox/scenario", "name", ("a", "b")),
    ("GET", "/_sandbox/scenario", "limit", ("1", "2")),
    ("DELETE", "/_sandbox/triggers/0911000001", "environment", ("sandbox", "production")),
    ("GET", "/_sandbox/contract", "contract", ("commerce", "wallet")),
    ("GET", "/_sandbox/contract", "format", ("json", "yaml")),
    ("GET", "/_sandbox/conformance", "contract", ("commerce", "wallet")),
    ("DELETE", "/_sandbox/conformance", "contract", ("commerce", "wallet")),
    ("GET", "/_sandbox/webhooks/endpoints", "orgId", ("a", "b")),
    ("GET", "/_sandbox/events", "type", ("checkout.completed", "order.paid")),
    ("GET", "/_sandbox/webhooks/deliveries", "status", ("pending", "failed")),
    ("GET", "/_sandbox/webhooks/attempts", "limit", ("1", "2")),
    ("GET", "/_sandbox/withdrawals", "status", ("pending", "approved")),
    ("GET", "/_sandbox/withdrawals", "page", ("1", "2")),
]


@pytest.mark.parametrize(("path", "name", "values"), COMMERCE)
def test_a_commerce_list_refuses_a_repeated_parameter(
    svc_http: FlaskClient, auth: dict[str, str], path: str, name: str, values: tuple[str, str]
) -> None:
    svc_http.delete("/_sandbox/conformance")
    first, second = values
    response = svc_http.get(f"{path}?{name}={first}&{name}={second}", headers=auth)
    assert response.status_code == 400
    assert response.json == {"error": REPEATED.format(name)}
    report = svc_http.get("/_sandbox/conformance").json
    assert report is not None
    assert [(v["location"], v["message"]) for v in report["violations"]] == [
        (f"query.{name}", REPEATED.format(name))
    ]


@pytest.mark.parametrize(("method", "path", "name", "values"), CONTROL)
def test_a_control_route_refuses_a_repeated_parameter_before_it_acts(
    svc_http: FlaskClient, method: str, path: str, name: str, values: tuple[str, str]
) -> None:
    created = svc_http.post(
        "/_sandbox/triggers", json={"phone": "0911000001", "outcome": "approve"}
    )
    assert created.status_code == 201
    svc_http.get("/api/products")  # something in the conformance report
    before = svc_http.get("/_sandbox/state").data
    report = svc_http.get("/_sandbox/conformance").data
    first, second = values
    query = f"{name}={first}&{name}={second}"
    response = svc_http.open(f"{path}?{query}", method=method, content_type="application/json")
    assert response.status_code == 400
    assert response.json == {"error": REPEATED.format(name), "code": "validation_failed"}
    assert svc_http.get("/_sandbox/conformance").data == report
    assert_unharmed(svc_http, before)


def test_one_value_each_and_unread_parameters_are_as_before(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    response = svc_http.get("/api/products?page=1&limit=5&status=draft&x=1&x=2", headers=auth)
    assert response.status_code == 200
    assert response.json == {"items": [], "total": 0, "page": 1, "limit": 5}
