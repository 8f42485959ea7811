"""Scopes the app is no longer allowed (spec §5 "wallet:send ... granted on approval only",
§5.5 edits): tokens issued from then on, by refresh or by a code redeemed late, carry only the
granted scopes the app still has, and the response's ``scope`` says so (§4 "may be fewer than
requested"). Access tokens issued before stay as they were until they expire (§5.5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import (
    AUTH,
    WALLET_SCOPES,
    Client,
    authorize_as,
    basic,
    decode_jwt,
    exchange,
    token_request,
    tokens_for,
    user_id,
    userinfo,
)
from tests.wallet.helpers import balance, headers, owner_key, send_body


@dataclass(frozen=True)
class AppChange:
    """A change the control plane makes to the seeded confidential app (granted
    WALLET_SCOPES): the route under /_sandbox/apps/{id} ("" is PATCH), its body, and the
    scopes a token issued afterwards carries."""

    path: str
    body: dict[str, Any]
    remaining: str


APP_CHANGES = [
    pytest.param(
        AppChange(
            "/approve-wallet-send",
            {"approved": False},
            "openid profile email offline_access wallet:read",
        ),
        id="wallet-send-approval-withdrawn",
    ),
    pytest.param(
        AppChange(
            "",
            {"scopes": ["openid", "email", "offline_access", "wallet:read", "wallet:send"]},
            "openid email offline_access wallet:read wallet:send",
        ),
        id="profile-removed-by-edit",
    ),
    pytest.param(
        AppChange("", {"scopes": ["openid", "offline_access"]}, "openid offline_access"),
        id="edited-down-to-openid-offline-access",
    ),
]


@pytest.fixture(params=APP_CHANGES)
def app_change(request: pytest.FixtureRequest) -> AppChange:
    change: AppChange = request.param
    return change


def change_app(http: FlaskClient, client: Client, path: str, body: dict[str, Any]) -> None:
    url = f"/_sandbox/apps/{client.client_id}{path}"
    response = http.post(url, json=body) if path else http.patch(url, json=body)
    assert response.status_code == 200, response.json


def withdraw_wallet_send(http: FlaskClient, client: Client) -> None:
    change_app(http, client, "/approve-wallet-send", {"approved": False})


def refresh(http: FlaskClient, sandbox: Sandbox, client: Client, token: str, **extra: str) -> Any:
    form = {
        "grant_type": "refresh_token",
        "refresh_token": token,
        "resource": sandbox.settings.root("resource_url"),
        **extra,
    }
    return token_request(http, client, form)


def introspect(http: FlaskClient, client: Client, token: str) -> dict[str, Any]:
    response = http.post(f"{AUTH}/oauth2/introspect", data={"token": token}, headers=basic(client))
    assert response.status_code == 200, response.json
    body: dict[str, Any] = response.json  # type: ignore[assignment]
    return body


def test_refresh_issues_only_the_scopes_the_app_still_has(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, app_change: AppChange
) -> None:
    first = tokens_for(http, svc_sandbox, confidential)
    assert first["scope"] == WALLET_SCOPES
    change_app(http, confidential, app_change.path, app_change.body)
    remaining = app_change.remaining

    response = refresh(http, svc_sandbox, confidential, first["refresh_token"])
    assert response.status_code == 200, response.json
    second = response.json
    assert second["scope"] == remaining
    assert decode_jwt(http, second["access_token"]).claims["scope"] == remaining
    id_claims = decode_jwt(http, second["id_token"]).claims
    assert ("name" in id_claims) == ("profile" in remaining)
    assert ("email" in id_claims) == ("email" in remaining)
    assert introspect(http, confidential, second["access_token"])["scope"] == remaining
    assert introspect(http, confidential, second["refresh_token"])["scope"] == remaining
    # The access token issued before the change keeps its scopes until it expires.
    before = introspect(http, confidential, first["access_token"])
    assert before["active"] is True and before["scope"] == WALLET_SCOPES
    assert decode_jwt(http, first["access_token"]).claims["scope"] == WALLET_SCOPES


def test_after_withdrawal_a_refreshed_token_cannot_send(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    key = owner_key(svc_sandbox)
    first = tokens_for(http, svc_sandbox, confidential)
    withdraw_wallet_send(http, confidential)
    second = refresh(http, svc_sandbox, confidential, first["refresh_token"]).json
    token = second["access_token"]  # type: ignore[index]
    assert "wallet:send" not in decode_jwt(http, token).claims["scope"].split()

    money = (balance(http, "abebe"), balance(http, "tigist"))
    refused = http.post("/wallet/send", json=send_body(), headers=headers(token, key))
    assert refused.status_code == 403, refused.json
    assert refused.json["error"] == "insufficient_scope"  # type: ignore[index]
    challenge = refused.headers["WWW-Authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="wallet:send"' in challenge
    assert (balance(http, "abebe"), balance(http, "tigist")) == money
    assert http.get("/wallet", headers=headers(token, key)).status_code == 200

    # Issued before the withdrawal: still sends until it expires (§5.5, as for disabling).
    earlier = headers(first["access_token"], key)
    kept = http.post("/wallet/send", json=send_body(key="key-before"), headers=earlier)
    assert kept.status_code == 201, kept.json


def test_the_grant_is_kept_so_approval_again_restores_wallet_send(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    first = tokens_for(http, svc_sandbox, confidential)
    withdraw_wallet_send(http, confidential)
    second = refresh(http, svc_sandbox, confidential, first["refresh_token"]).json
    assert "wallet:send" not in second["scope"].split()  # type: ignore[index]
    change_app(http, confidential, "/approve-wallet-send", {"approved": True})
    third = refresh(http, svc_sandbox, confidential, second["refresh_token"]).json  # type: ignore[index]
    assert third["scope"] == WALLET_SCOPES  # type: ignore[index]


def test_asking_for_a_withdrawn_scope_on_refresh(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    first = tokens_for(http, svc_sandbox, confidential)
    withdraw_wallet_send(http, confidential)

    # Nothing the app may still have: invalid_scope, and the refresh token is not used up.
    before = svc_sandbox.export()
    nothing = refresh(http, svc_sandbox, confidential, first["refresh_token"], scope="wallet:send")
    assert nothing.status_code == 400, nothing.json
    assert nothing.json["error"] == "invalid_scope"  # type: ignore[index]
    assert "wallet:send" in nothing.json["error_description"]  # type: ignore[index]
    assert svc_sandbox.export() == before

    # Only openid left: a token with openid alone (sub, nothing else).
    only = refresh(
        http, svc_sandbox, confidential, first["refresh_token"], scope="openid wallet:send"
    )
    assert only.status_code == 200, only.json
    assert only.json["scope"] == "openid"  # type: ignore[index]
    info = userinfo(http, only.json["access_token"]).json  # type: ignore[index]
    assert set(info) == {"sub"}


def test_a_code_redeemed_after_the_change_gets_what_remains(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, app_change: AppChange
) -> None:
    code = authorize_as(http, confidential, user_id(svc_sandbox))["code"]
    change_app(http, confidential, app_change.path, app_change.body)
    response = exchange(http, confidential, code, svc_sandbox.settings.root("resource_url"))
    assert response.status_code == 200, response.json
    assert response.json["scope"] == app_change.remaining
    claims = decode_jwt(http, response.json["access_token"]).claims
    assert claims["scope"] == app_change.remaining


def test_no_refresh_token_once_offline_access_is_removed(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    code = authorize_as(http, confidential, user_id(svc_sandbox))["code"]
    change_app(http, confidential, "", {"scopes": ["openid", "profile", "wallet:read"]})
    response = exchange(http, confidential, code, svc_sandbox.settings.root("resource_url"))
    assert response.status_code == 200, response.json
    assert response.json["scope"] == "openid profile wallet:read"
    assert "refresh_token" not in response.json
