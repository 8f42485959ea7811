"""The identity contract: valid OpenAPI 3.1, shipped in the package, served at
{auth_url}/openapi.json, covering every identity endpoint of spec §4, and recorded by the
conformance report like the commerce contract."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask.testing import FlaskClient
from openapi_spec_validator import validate

from svc_sandbox.contract.document import IDENTITY, contract_text, load_contract
from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import AUTH, tokens_for, wallet_app

REPO_COPY = Path(__file__).resolve().parents[2] / "contracts" / IDENTITY


def test_the_identity_contract_is_valid_openapi_3_1() -> None:
    document = load_contract(IDENTITY)
    validate(document)
    assert document["openapi"].startswith("3.1")
    assert document["info"]["version"] == "1.0.0"  # spec §9: identity provider version 1


def test_the_packaged_copy_is_the_repository_copy() -> None:
    assert contract_text(IDENTITY) == REPO_COPY.read_text("utf-8")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/.well-known/openid-configuration"),
        ("get", "/.well-known/oauth-authorization-server"),
        ("get", "/oauth2/authorize"),
        ("post", "/oauth2/authorize"),
        ("post", "/oauth2/token"),
        ("get", "/oauth2/userinfo"),
        ("post", "/oauth2/userinfo"),
        ("post", "/oauth2/introspect"),
        ("post", "/oauth2/revoke"),
        ("get", "/jwks"),
    ],
)
def test_every_identity_endpoint_of_section_4_is_in_the_contract(method: str, path: str) -> None:
    assert method in load_contract(IDENTITY)["paths"][path]


@pytest.mark.parametrize("path", ["/oauth2/token", "/oauth2/introspect", "/oauth2/revoke"])
def test_token_introspection_and_revocation_are_form_encoded(path: str) -> None:
    content = load_contract(IDENTITY)["paths"][path]["post"]["requestBody"]["content"]
    assert list(content) == ["application/x-www-form-urlencoded"]


def test_served_with_the_issuer_as_server(svc_http: FlaskClient, svc_sandbox: Sandbox) -> None:
    document = svc_http.get(f"{AUTH}/openapi.json").json
    assert document["servers"][0]["url"] == svc_sandbox.settings.issuer  # type: ignore[index]
    same = svc_http.get("/_sandbox/contract?contract=identity").json
    assert same == document


def test_conformance_report_of_the_identity_contract(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    svc_sandbox.settings.rate_limits = False
    tokens_for(svc_http, svc_sandbox, wallet_app(svc_sandbox))
    svc_http.post(f"{AUTH}/oauth2/token", data={"grant_type": "password"})
    svc_http.post(
        f"{AUTH}/oauth2/token",
        data="grant_type=a&grant_type=b",
        content_type="application/x-www-form-urlencoded",
    )
    report = svc_http.get("/_sandbox/conformance?contract=identity").json
    assert report["contract"]["title"] == "Payments service identity provider"  # type: ignore[index]
    token_op = next(o for o in report["operations"] if o["operationId"] == "token")  # type: ignore[index]
    assert token_op["statuses"] == {"200": 1, "400": 2}
    located = {v["location"] for v in report["violations"]}  # type: ignore[index]
    assert "body.grant_type" in located  # the repeated field broke the contract
    assert report["summary"]["responseViolations"] == 0  # type: ignore[index]
    commerce = svc_http.get("/_sandbox/conformance").json
    assert commerce["summary"]["requests"] == 0  # type: ignore[index]
    svc_http.delete("/_sandbox/conformance?contract=identity", json={})
    cleared = svc_http.get("/_sandbox/conformance?contract=identity").json
    assert cleared["summary"]["requests"] == 0  # type: ignore[index]


@pytest.mark.parametrize("endpoint", ["introspect", "revoke"])
def test_any_token_value_fits_the_contract(
    svc_http: FlaskClient, svc_sandbox: Sandbox, endpoint: str
) -> None:
    """A token the provider never issued is answered as unknown (RFC 7662 §2.2, RFC 7009
    §2.2), so the contract takes any value: the report records no violation for one."""
    app = wallet_app(svc_sandbox)
    for token in ("x" * 2500, "at_x\x01y"):
        response = svc_http.post(
            f"{AUTH}/oauth2/{endpoint}",
            data={"token": token, "client_id": app.client_id, "client_secret": app.secret},
        )
        assert response.status_code == 200
    report = svc_http.get("/_sandbox/conformance?contract=identity").json
    assert report["violations"] == []  # type: ignore[index]
