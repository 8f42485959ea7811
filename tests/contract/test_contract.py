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


@pytest.mark.parametrize(
    ("url", "root", "placeholder"),
    [
        ("/api/openapi.json", "/api", "{base_url}"),
        ("/auth/openapi.json", "/auth", "{auth_url}"),
        ("/wallet/openapi.json", "/wallet", "{wallet_base_url}"),
    ],
)
def test_each_served_document_names_its_root(
    svc_http: FlaskClient, url: str, root: str, placeholder: str
) -> None:
    """Its one server is the emulator's root, described by the spec's placeholder (§1)."""
    (server,) = svc_http.get(url).json["servers"]  # type: ignore[index]
    assert server["url"] == "http://127.0.0.1:8700" + root
    assert server["description"] == f"{placeholder} of this emulator"


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


#: What a schema of an OpenAPI 3.1 document may say: the JSON Schema 2020-12 vocabularies and
#: OpenAPI's own additions (``x-`` extensions aside).
SCHEMA_KEYWORDS = frozenset(
    {
        *("$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$defs"),
        *("$comment", "$vocabulary", "allOf", "anyOf", "oneOf", "not", "if", "then", "else"),
        *("dependentSchemas", "prefixItems", "items", "contains", "properties"),
        *("patternProperties", "additionalProperties", "propertyNames", "unevaluatedItems"),
        *("unevaluatedProperties", "type", "enum", "const", "multipleOf", "maximum"),
        *("exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength"),
        *("pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains"),
        *("maxProperties", "minProperties", "required", "dependentRequired", "format"),
        *("contentEncoding", "contentMediaType", "contentSchema", "title", "description"),
        *("default", "deprecated", "readOnly", "writeOnly", "examples"),
        *("discriminator", "xml", "externalDocs", "example"),  # OpenAPI's own
    }
)
SUBSCHEMA = {"items", "not", "if", "then", "else", "contains", "additionalProperties"} | {
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
}
SUBSCHEMA_LISTS = {"allOf", "anyOf", "oneOf", "prefixItems"}
SUBSCHEMA_MAPS = {"properties", "patternProperties", "$defs", "dependentSchemas"}


def unknown_keywords(schema: object, where: str) -> list[str]:
    if not isinstance(schema, dict):  # true / false schemas
        return []
    found = [f"{where}/{k}" for k in schema if k not in SCHEMA_KEYWORDS and not k.startswith("x-")]
    for key, value in schema.items():
        if key in SUBSCHEMA:
            found += unknown_keywords(value, f"{where}/{key}")
        elif key in SUBSCHEMA_LISTS:
            for i, item in enumerate(value):
                found += unknown_keywords(item, f"{where}/{key}/{i}")
        elif key in SUBSCHEMA_MAPS:
            for name, item in value.items():
                found += unknown_keywords(item, f"{where}/{key}/{name}")
    return found


def schemas_of(node: object, where: str = "#") -> list[tuple[object, str]]:
    """Every schema of a document: ``components/schemas`` and each ``schema`` member."""
    if isinstance(node, list):
        return [s for i, item in enumerate(node) for s in schemas_of(item, f"{where}/{i}")]
    if not isinstance(node, dict):
        return []
    found: list[tuple[object, str]] = []
    for key, value in node.items():
        if key == "schema" or where == "#/components/schemas":
            found.append((value, f"{where}/{key}"))
        else:
            found += schemas_of(value, f"{where}/{key}")
    return found


@pytest.mark.parametrize("name", CONTRACTS)
def test_every_schema_says_only_what_json_schema_knows(name: str) -> None:
    """A keyword no validator knows is silently ignored: a YAML flow mapping cut at a comma
    (``{description: Spendable now, santim.}``) once published ``"santim.": null``."""
    document = load_contract(name)
    schemas = schemas_of(document)
    assert len(schemas) > 10
    assert [p for schema, where in schemas for p in unknown_keywords(schema, where)] == []
