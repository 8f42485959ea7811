"""Strict mode: every commerce response is validated; a violation fails loudly with the
schema path (a 500 naming it, an error in the log, a response violation in the report)."""

from __future__ import annotations

import logging

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.helpers import create_product

TITLE_MAX = "#/components/schemas/ProductFields/properties/title/maxLength"


def break_title(sandbox: Sandbox, product_id: str) -> None:
    """Puts a title the API could never accept (121 characters) straight into the state."""
    sandbox.products.products[product_id].title = "x" * 121


def test_a_response_that_breaks_the_contract_becomes_a_500_naming_the_schema_path(
    svc_http: FlaskClient,
    svc_sandbox: Sandbox,
    auth: dict[str, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert svc_sandbox.settings.strict  # the pytest plugin runs every test in strict mode
    product_id = create_product(svc_http, auth)["product"]["_id"]
    break_title(svc_sandbox, product_id)

    with caplog.at_level(logging.ERROR, logger="svc_sandbox.contract"):
        response = svc_http.get(f"/api/products/{product_id}", headers=auth)

    assert response.status_code == 500
    body = response.json
    assert body is not None
    assert TITLE_MAX in body["error"]
    assert body["violations"] == [
        {
            "kind": "response",
            "location": "body.product.title",
            # The value cut as every message shows one (core.validation.shown).
            "message": "'" + "x" * 78 + "… is too long",
            "schemaPath": TITLE_MAX,
        }
    ]
    assert response.headers["X-Request-Id"]
    assert TITLE_MAX in caplog.text and response.headers["X-Request-Id"] in caplog.text
    recorded = svc_sandbox.conformance.report()["violations"]
    assert [(v["kind"], v["schemaPath"]) for v in recorded] == [("response", TITLE_MAX)]


def test_a_huge_value_is_named_cut_in_the_500_and_the_log(
    svc_http: FlaskClient,
    svc_sandbox: Sandbox,
    auth: dict[str, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    product_id = create_product(svc_http, auth)["product"]["_id"]
    svc_sandbox.products.products[product_id].title = "x" * 1_000_000

    with caplog.at_level(logging.ERROR, logger="svc_sandbox.contract"):
        response = svc_http.get(f"/api/products/{product_id}", headers=auth)

    assert response.status_code == 500
    body = response.json
    assert body is not None
    assert [(v["location"], v["message"], v["schemaPath"]) for v in body["violations"]] == [
        ("body.product.title", "'" + "x" * 78 + "… is too long", TITLE_MAX)
    ]
    assert len(response.data) < 2_000 and len(caplog.text) < 2_000  # not a megabyte each


def test_an_undeclared_status_is_a_violation_too(
    svc_http: FlaskClient, svc_sandbox: Sandbox, auth: dict[str, str]
) -> None:
    # 405 is not declared for any operation; an unknown method on a known path gets it.
    response = svc_http.put("/api/products", headers=auth)
    assert response.status_code == 405  # no operation matched: nothing to validate against
    assert svc_sandbox.conformance.report()["unmatched"][0]["method"] == "PUT"


def test_without_strict_mode_the_response_goes_out_unchanged(auth: dict[str, str]) -> None:
    sandbox = Sandbox(clock_mode="frozen", seed=1, strict=False)
    client = create_app(sandbox).test_client()
    product_id = create_product(client, auth)["product"]["_id"]
    break_title(sandbox, product_id)
    response = client.get(f"/api/products/{product_id}", headers=auth)
    assert response.status_code == 200
    assert sandbox.conformance.report()["violations"] == []
