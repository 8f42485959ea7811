"""The recorder turns the request journal into a scenario that replays green."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from flask.testing import FlaskClient

from svc_sandbox.scenarios.loader import load_file
from svc_sandbox.scenarios.results import PASSED
from svc_sandbox.scenarios.runner import Runner
from svc_sandbox.scenarios.targets import InProcessTarget


def recorded(client: FlaskClient) -> dict[str, Any]:
    answer = client.get("/_sandbox/scenario?name=by%20hand")
    assert answer.status_code == 200
    assert answer.mimetype == "application/yaml"
    document: dict[str, Any] = yaml.safe_load(answer.get_data(as_text=True))
    return document


def test_a_clicked_flow_becomes_steps_that_replay(
    svc_http: FlaskClient, auth: dict[str, str], tmp_path: Path
) -> None:
    svc_http.get("/api/products", headers=auth)  # before the reset: left out
    svc_http.post("/_sandbox/reset", json={})
    product = svc_http.post(
        "/api/products",
        json={"title": "Pen", "pricingModel": "fixed", "price": {"amount": 500}},
        headers=auth,
    ).json
    svc_http.patch(
        f"/api/products/{product['product']['_id']}",  # type: ignore[index]
        json={"status": "published"},
        headers=auth,
    )
    created = svc_http.post(
        "/api/checkout",
        json={"productId": product["product"]["_id"]},
        headers=auth,  # type: ignore[index]
    ).json
    link = "/pay/" + created["checkoutUrl"].rsplit("/", 1)[1]  # type: ignore[index]
    page = svc_http.get(link).get_data(as_text=True)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf is not None
    form = {"csrf": csrf.group(1), "gateway": "telebirr", "phone": "0911223344", "email": "a@b.co"}
    assert svc_http.post(link, data=form).status_code == 303
    svc_http.get("/_sandbox/clock")  # a control-plane read: left out
    svc_http.post("/_sandbox/clock/advance", json={"duration": "150s"})
    svc_http.get(f"/api/checkout/{created['sessionId']}")  # type: ignore[index]

    document = recorded(svc_http)
    kinds = [
        (s["request"]["method"], s["request"]["path"])
        if "request" in s
        else ("control", s["control"]["action"])
        for s in document["steps"]
    ]
    assert (
        kinds
        == [
            ("POST", "/products"),
            ("PATCH", f"/products/{product['product']['_id']}"),  # type: ignore[index]
            ("POST", "/checkout"),
            ("GET", link[len("/pay") :]),
            ("GET", link[len("/pay") :]),  # the page again, for its CSRF token
            ("POST", link[len("/pay") :]),
            ("control", "advance"),
            ("GET", f"/checkout/{created['sessionId']}"),  # type: ignore[index]
        ]
    )
    assert document["steps"][0]["request"]["auth"] == "token"
    assert document["steps"][5]["request"]["form"]["csrf"] == "${csrf}"
    assert document["steps"][5]["expect"] == {"status": 303}
    assert document["seed"] == 1
    file = tmp_path / "by_hand.yaml"
    file.write_text(yaml.safe_dump(document, sort_keys=False))
    result = Runner(InProcessTarget()).run(load_file(file)[0])
    assert result.status == PASSED, result.failure


def test_time_between_requests_becomes_advance_steps(svc_http: FlaskClient) -> None:
    from datetime import timedelta

    from svc_sandbox.web import sandbox_of

    svc_http.post("/_sandbox/reset", json={})
    svc_http.get("/api/checkout/000000000000000000000000")
    sandbox_of(svc_http.application).advance(timedelta(minutes=3))
    svc_http.get("/api/checkout/000000000000000000000000")
    steps = recorded(svc_http)["steps"]
    assert steps[1] == {"control": {"action": "advance", "seconds": 180.0}}
    assert steps[2]["expect"] == {"status": 404}
