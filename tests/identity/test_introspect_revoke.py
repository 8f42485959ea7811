"""Introspection (RFC 7662) and revocation (RFC 7009), issue 11 item 6."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import AUTH, Client, basic, token_request, tokens_for, user_id


def introspect(http: FlaskClient, client: Client, token: str) -> dict[str, Any]:
    response = http.post(f"{AUTH}/oauth2/introspect", data={"token": token}, headers=basic(client))
    assert response.status_code == 200, response.json
    assert response.headers["Cache-Control"] == "no-store"
    body: dict[str, Any] = response.json  # type: ignore[assignment]
    return body


def revoke(http: FlaskClient, client: Client, token: str) -> Any:
    return http.post(f"{AUTH}/oauth2/revoke", data={"token": token}, headers=basic(client))


@pytest.mark.parametrize("resource", [True, False], ids=["jwt", "opaque"])
def test_active_access_token(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, resource: bool
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential, resource=resource)
    body = introspect(http, confidential, tokens["access_token"])
    assert body["active"] is True
    assert body["scope"] == tokens["scope"]
    assert body["client_id"] == confidential.client_id
    assert body["sub"] == user_id(svc_sandbox)
    assert body["exp"] - body["iat"] == 3600
    assert body["token_type"] == "Bearer"
    expected_aud = svc_sandbox.settings.root("resource_url") if resource else confidential.client_id
    assert body["aud"] == expected_aud


def test_active_refresh_token(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential)
    body = introspect(http, confidential, tokens["refresh_token"])
    assert body["active"] is True and body["token_type"] == "refresh_token"
    assert body["exp"] - body["iat"] == 30 * 86400


def test_inactive_for_revoked_expired_unknown_and_foreign_tokens(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, public: Client
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential)
    public_response = http.post(
        f"{AUTH}/oauth2/introspect",
        data={"token": tokens["access_token"], "client_id": public.client_id},
    )
    assert public_response.json == {"active": False}
    assert introspect(http, confidential, "at_unknown") == {"active": False}
    assert revoke(http, confidential, tokens["access_token"]).status_code == 200
    assert introspect(http, confidential, tokens["access_token"]) == {"active": False}
    other = tokens_for(http, svc_sandbox, confidential)
    svc_sandbox.advance(timedelta(hours=1))
    assert introspect(http, confidential, other["access_token"]) == {"active": False}


def test_revoke_answers_200_for_any_token(http: FlaskClient, confidential: Client) -> None:
    for token in ("at_never_issued", "x" * 100, "a.b.c"):
        response = revoke(http, confidential, token)
        assert response.status_code == 200 and response.data == b""


def test_revoking_a_refresh_token_revokes_its_family(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential)
    assert revoke(http, confidential, tokens["refresh_token"]).status_code == 200
    assert introspect(http, confidential, tokens["access_token"]) == {"active": False}
    response = token_request(
        http,
        confidential,
        {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
    )
    assert response.json["error"] == "invalid_grant"


def test_another_clients_token_is_not_revoked(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, public: Client
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential)
    response = http.post(
        f"{AUTH}/oauth2/revoke",
        data={"token": tokens["access_token"], "client_id": public.client_id},
    )
    assert response.status_code == 200
    assert introspect(http, confidential, tokens["access_token"])["active"] is True


@pytest.mark.parametrize("endpoint", ["introspect", "revoke"])
def test_client_must_authenticate(http: FlaskClient, confidential: Client, endpoint: str) -> None:
    response = http.post(
        f"{AUTH}/oauth2/{endpoint}", data={"token": "x", "client_id": confidential.client_id}
    )
    assert response.status_code == 401 and response.json["error"] == "invalid_client"
    missing = http.post(
        f"{AUTH}/oauth2/{endpoint}",
        data={"token_type_hint": "access_token"},
        headers=basic(confidential),
    )
    assert missing.status_code == 400 and missing.json["error_description"] == "token is missing"


def test_a_public_client_introspects_only_its_own_tokens_by_its_id(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, public: Client
) -> None:
    """docs/spec-gaps.md "Public clients at introspection": the id alone authenticates a
    public client (it has no secret); it sees its own tokens, never another client's."""
    own = tokens_for(http, svc_sandbox, public, resource=False)
    other = tokens_for(http, svc_sandbox, confidential)
    for token in (own["access_token"], own["refresh_token"]):
        answer = http.post(
            f"{AUTH}/oauth2/introspect", data={"token": token, "client_id": public.client_id}
        )
        assert answer.status_code == 200 and answer.json["active"] is True
        assert answer.json["client_id"] == public.client_id
    foreign = http.post(
        f"{AUTH}/oauth2/introspect",
        data={"token": other["refresh_token"], "client_id": public.client_id},
    )
    assert foreign.json == {"active": False}
    with_secret = http.post(
        f"{AUTH}/oauth2/introspect",
        data={"token": own["access_token"], "client_id": public.client_id, "client_secret": "x"},
    )
    assert with_secret.status_code == 401 and with_secret.json["error"] == "invalid_client"
