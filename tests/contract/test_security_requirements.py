"""The conformance recorder checks an operation's whole security requirement (OpenAPI:
alternatives, each an AND of schemes): a bearer in Authorization, an API key in its named
header, Basic client authentication; the message says what the scheme is."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from svc_sandbox.contract.validation import (
    Contract,
    commerce_contract,
    identity_contract,
    wallet_contract,
)
from svc_sandbox.sandbox import Sandbox
from tests.wallet.helpers import headers, owner_key, token_in_process

BEARER = {"Authorization": "Bearer x.y.z"}
KEY = {"X-Svc-Key": "svc_test_x"}
BASIC = {"Authorization": "Basic Y2xpZW50OnNlY3JldA=="}


def missing(contract: Contract, operation_id: str, sent: dict[str, str]) -> list[tuple[str, str]]:
    operation = contract.operation(operation_id)
    found = contract.validate_request(operation, {}, {}, sent, None, b"")
    return [(v.location, v.message) for v in found if v.schema_path.endswith("security")]


@pytest.mark.parametrize(
    ("contract", "operation_id", "sent", "locations", "words"),
    [
        (wallet_contract, "getWalletBalance", {**BEARER, **KEY}, [], ""),
        (wallet_contract, "getWalletBalance", BEARER, ["header.X-Svc-Key"], "API token"),
        (wallet_contract, "getWalletBalance", KEY, ["header.Authorization"], "JWT access token"),
        (
            wallet_contract,
            "getWalletBalance",
            {},
            ["header.Authorization", "header.X-Svc-Key"],
            "access token",
        ),
        (commerce_contract, "listProducts", {}, ["header.Authorization"], "API token"),
        (commerce_contract, "listProducts", BASIC, ["header.Authorization"], "API token"),
        (commerce_contract, "createCheckout", {}, [], ""),  # bearer or nothing (payment links)
        (identity_contract, "userinfo", {}, ["header.Authorization"], "access token of this"),
        (identity_contract, "token", {}, [], ""),  # Basic or client_secret_post in the form
        (identity_contract, "token", BASIC, [], ""),
    ],
)
def test_each_scheme_of_the_requirement_is_checked_and_named(
    contract: object,
    operation_id: str,
    sent: dict[str, str],
    locations: list[str],
    words: str,
) -> None:
    found = missing(contract(), operation_id, sent)  # type: ignore[operator]
    assert sorted(location for location, _ in found) == sorted(locations)
    assert words in " ".join(message for _, message in found)
    for location, message in found:
        how = "the X-Svc-Key header" if location == "header.X-Svc-Key" else "Bearer <token>"
        assert message.startswith(f"this operation needs {how}") or how in message


def test_a_wallet_call_without_its_key_is_a_recorded_violation(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    bearer_only = headers(token_in_process(svc_http, svc_sandbox, "abebe"), None)
    key_only = headers(None, owner_key(svc_sandbox))
    assert svc_http.get("/wallet", headers=bearer_only).status_code == 401
    assert svc_http.get("/wallet", headers=key_only).status_code == 401
    report = svc_http.get("/_sandbox/conformance?contract=wallet").json
    assert report is not None
    found = {(v["status"], v["location"]) for v in report["violations"]}
    assert found == {(401, "header.X-Svc-Key"), (401, "header.Authorization")}
    messages = " ".join(v["message"] for v in report["violations"])
    assert "JWT access token" in messages and "API token" in messages


def test_an_api_key_sent_in_the_query_is_read_from_the_query() -> None:
    """The HTTP layer reads the query only for operations that need it (``reads_query``): an
    apiKey scheme sent there makes the operation one that does."""
    document = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "k"}}},
        "security": [{"key": []}],
        "paths": {
            "/x": {"get": {"operationId": "getX", "responses": {"200": {"description": ""}}}}
        },
    }
    contract = Contract(document)
    operation = contract.operation("getX")
    assert operation.reads_query and operation.reads_headers
    assert contract.validate_request(operation, {}, {"k": ["v"]}, {}, None, b"") == []
    [refused] = contract.validate_request(operation, {}, {}, {}, None, b"")
    assert refused.location == "query.k"
