"""The contract document: valid OpenAPI 3.1, shipped in the package, served by the emulator,
and covering every commerce endpoint of spec §4."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from flask.testing import FlaskClient
from openapi_spec_validator import validate

from svc_sandbox.contract.document import (
    CONTRACTS,
    contract_text,
    json_copy,
    json_copy_name,
    load_contract,
)

REPO_COPY = Path(__file__).resolve().parents[2] / "contracts" / "commerce.openapi.yaml"


def test_the_contract_is_valid_openapi_3_1() -> None:
    document = load_contract()
    validate(document)
    assert document["openapi"].startswith("3.1")
    assert document["info"]["version"] == "1.3.0"


def test_the_packaged_copy_is_the_repository_copy() -> None:
    assert contract_text() == REPO_COPY.read_text("utf-8")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/products"),
        ("get", "/products"),
        ("get", "/products/{id}"),
        ("patch", "/products/{id}"),
        ("delete", "/products/{id}"),
        ("post", "/checkout"),
        ("get", "/checkout/{sessionId}"),
        ("post", "/pay/{payToken}"),
        ("get", "/orders"),
        ("get", "/balance"),
        ("post", "/withdrawals"),
        ("get", "/withdrawals"),
        ("get", "/withdrawals/{id}"),
    ],
)
def test_every_commerce_endpoint_of_section_4_is_in_the_contract(method: str, path: str) -> None:
    operation = load_contract()["paths"][path][method]
    assert "X-Request-Id" in str(operation["responses"])


@pytest.mark.parametrize(
    ("path", "security"),
    [
        ("/checkout", [{"bearer": []}, {}]),  # token optional
        ("/checkout/{sessionId}", []),  # no authentication
    ],
)
def test_security_is_optional_or_absent_where_section_5_says(
    path: str, security: list[dict[str, list[str]]]
) -> None:
    document = load_contract()
    operation = next(iter(document["paths"][path].values()))
    assert operation["security"] == security
    assert document["security"] == [{"bearer": []}]


def test_401_answers_message_and_other_errors_answer_error() -> None:
    responses = load_contract()["components"]["responses"]
    assert responses["Unauthorized"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/Message"
    )
    for name in ("BadRequest", "PaymentRequired", "Forbidden", "NotFound", "LockedField"):
        assert responses[name]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")


def test_webhooks_declare_the_three_events_and_the_signature_header() -> None:
    document = load_contract()
    assert set(document["webhooks"]) == {
        "order.created",
        "order.completed",
        "checkout.session.expired",
    }
    signature = document["components"]["parameters"]["Signature"]
    assert (signature["name"], signature["in"], signature["required"]) == (
        "X-Svc-Signature",
        "header",
        True,
    )


@pytest.mark.parametrize("url", ["/api/openapi.json", "/_sandbox/contract"])
def test_the_emulator_serves_the_contract_with_its_base_url(
    svc_http: FlaskClient, url: str
) -> None:
    served = svc_http.get(url).json
    assert served is not None
    assert served["servers"][0]["url"].endswith("/api")
    assert served["paths"] == load_contract()["paths"]


def test_the_control_plane_serves_yaml_too(svc_http: FlaskClient) -> None:
    response = svc_http.get("/_sandbox/contract?format=yaml")
    assert response.mimetype == "application/yaml"
    assert yaml.safe_load(response.data)["info"]["version"] == "1.3.0"


@pytest.mark.parametrize("name", CONTRACTS)
def test_the_shipped_json_copy_is_the_yaml_parsed(name: str) -> None:
    """The pre-parsed copy loaded at start-up is fresh (else: python -m
    svc_sandbox.contract.document) and is exactly what the YAML says."""
    shipped = REPO_COPY.parents[1] / "src/svc_sandbox/contracts" / json_copy_name(name)
    assert shipped.read_text("utf-8") == json_copy(name), (
        "regenerate: python -m svc_sandbox.contract.document"
    )
    assert load_contract(name) == yaml.safe_load(contract_text(name))
