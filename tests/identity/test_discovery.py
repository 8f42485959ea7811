"""Discovery (issue 11 item 3): the same metadata at both well-known paths."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import AUTH


@pytest.mark.parametrize("path", ["openid-configuration", "oauth-authorization-server"])
def test_metadata(http: FlaskClient, svc_sandbox: Sandbox, path: str) -> None:
    meta = http.get(f"{AUTH}/.well-known/{path}").json
    issuer = svc_sandbox.settings.issuer
    assert meta["issuer"] == issuer == "http://127.0.0.1:8700/auth"
    for name, suffix in [
        ("authorization_endpoint", "/oauth2/authorize"),
        ("token_endpoint", "/oauth2/token"),
        ("userinfo_endpoint", "/oauth2/userinfo"),
        ("introspection_endpoint", "/oauth2/introspect"),
        ("revocation_endpoint", "/oauth2/revoke"),
        ("jwks_uri", "/jwks"),
    ]:
        assert meta[name] == issuer + suffix
    assert meta["response_types_supported"] == ["code"]
    assert meta["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["token_endpoint_auth_methods_supported"] == [
        "client_secret_basic",
        "client_secret_post",
        "none",
    ]
    assert meta["id_token_signing_alg_values_supported"] == ["RS256"]
    assert meta["authorization_response_iss_parameter_supported"] is True
    assert meta["scopes_supported"] == [
        "openid",
        "profile",
        "email",
        "offline_access",
        "wallet:read",
        "wallet:send",
    ]
    assert f"{svc_sandbox.settings.claims_prefix}/handle" in meta["claims_supported"]
    assert {"sub", "email", "email_verified", "name", "picture"} <= set(meta["claims_supported"])


def test_issuer_follows_the_auth_url_setting(svc_sandbox: Sandbox) -> None:
    from svc_sandbox.app import create_app

    sandbox = Sandbox(clock_mode="frozen", auth_url="https://id.example.test/oidc")
    meta = create_app(sandbox).test_client().get("/oidc/.well-known/openid-configuration").json
    assert meta["issuer"] == "https://id.example.test/oidc"
    assert meta["claims_supported"][5] == "https://id.example.test/oidc/claims/handle"
