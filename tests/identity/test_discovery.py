"""Discovery (issue 11 item 3): the same metadata at both well-known paths."""

from __future__ import annotations

from urllib.parse import urlsplit

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


#: (auth_url, the metadata's path-inserted addresses at the origin, RFC 8414 §3 and §5)
PATH_INSERTED = [
    (
        None,  # the default issuer, http://127.0.0.1:8700/auth
        [
            "/.well-known/oauth-authorization-server/auth",
            "/.well-known/openid-configuration/auth",
        ],
    ),
    (
        "https://id.example.test/tenant/oidc",
        [
            "/.well-known/oauth-authorization-server/tenant/oidc",
            "/.well-known/openid-configuration/tenant/oidc",
        ],
    ),
]


@pytest.mark.parametrize(("auth_url", "paths"), PATH_INSERTED, ids=["default", "nested path"])
def test_the_metadata_of_an_issuer_with_a_path_is_also_at_the_origin(
    auth_url: str | None, paths: list[str]
) -> None:
    """RFC 8414 §3: a client that follows it strictly asks the origin for
    ``/.well-known/oauth-authorization-server`` followed by the issuer's path."""
    from svc_sandbox.app import create_app

    sandbox = Sandbox(clock_mode="frozen", auth_url=auth_url)
    http = create_app(sandbox).test_client()
    issuer = sandbox.settings.issuer
    own = http.get(urlsplit(issuer).path + "/.well-known/openid-configuration")
    for path in paths:
        response = http.get(path)
        assert response.status_code == 200, path
        assert response.json == own.json and response.json["issuer"] == issuer  # type: ignore[index]
        refused = http.get(path, headers={"Host": "attacker.example"})  # the one Host guard
        assert refused.status_code == 400
        assert refused.json["error"] == "host_not_allowed"  # type: ignore[index]
        assert refused.headers["Cache-Control"] == "no-store"  # the identity family's shape
        wrong_method = http.post(path)
        assert wrong_method.status_code == 405
        assert wrong_method.json["error"] == "method_not_allowed"  # type: ignore[index]


def test_an_issuer_at_the_origins_root_has_no_other_address() -> None:
    from svc_sandbox.app import create_app

    sandbox = Sandbox(clock_mode="frozen", auth_url="http://127.0.0.1:8700")
    http = create_app(sandbox).test_client()
    own = http.get("/.well-known/oauth-authorization-server")
    assert own.status_code == 200 and own.json["issuer"] == "http://127.0.0.1:8700"  # type: ignore[index]
    assert http.get("/.well-known/oauth-authorization-server/auth").status_code == 404
