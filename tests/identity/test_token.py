"""POST {auth_url}/oauth2/token (issue 11 item 5): codes, client authentication, resource,
refresh rotation and reuse, the ID token (checked with joserfc)."""

from __future__ import annotations

import base64
from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient
from joserfc import jwt

from svc_sandbox.identity.tokens import at_hash
from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import (
    AUTH,
    VERIFIER,
    Client,
    authorize_as,
    decode_jwt,
    epoch,
    exchange,
    token_request,
    tokens_for,
    user_id,
    userinfo,
)


def code_for(http: FlaskClient, sandbox: Sandbox, client: Client, **overrides: str | None) -> str:
    answer = authorize_as(http, client, user_id(sandbox), **overrides)
    code: str = answer["code"]
    return code


def refresh(http: FlaskClient, client: Client, token: str, **extra: str) -> Any:
    return token_request(
        http, client, {"grant_type": "refresh_token", "refresh_token": token, **extra}
    )


def userinfo_status(http: FlaskClient, access_token: str) -> int:
    status: int = userinfo(http, access_token).status_code
    return status


def assert_error(response: Any, status: int, error: str) -> None:
    assert response.status_code == status, response.json
    assert response.json["error"] == error
    assert response.json["error_description"]
    assert response.headers["Cache-Control"] == "no-store"


def test_code_exchange_answers_the_spec_fields(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    response = exchange(http, confidential, code_for(http, svc_sandbox, confidential))
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    body = response.json
    assert set(body) == {
        "access_token",
        "token_type",
        "expires_in",
        "scope",
        "id_token",
        "refresh_token",
    }
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    assert body["scope"] == "openid profile email offline_access wallet:read wallet:send"
    assert body["access_token"].count(".") != 2  # no resource: opaque


def test_resource_makes_a_jwt_access_token(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    resource = svc_sandbox.settings.root("resource_url")
    tokens = tokens_for(http, svc_sandbox, confidential)
    token = decode_jwt(http, tokens["access_token"])
    assert token.header["typ"] == "at+jwt" and token.header["alg"] == "RS256"
    claims = token.claims
    assert claims["iss"] == svc_sandbox.settings.issuer
    assert claims["aud"] == resource
    assert claims["sub"] == user_id(svc_sandbox)
    assert claims["client_id"] == confidential.client_id
    assert claims["scope"] == tokens["scope"]
    assert claims["exp"] - claims["iat"] == 3600 and claims["jti"]
    grant = svc_sandbox.access_tokens.verify_resource_token(tokens["access_token"])
    assert grant.sub == claims["sub"] and "wallet:send" in grant.scopes


#: ``resource`` values that are not {resource_url}: RFC 8707's ``invalid_target`` (a code
#: outside spec §7's table, kept for OAuth client libraries; see docs/spec-gaps.md).
OTHER_RESOURCES = ["https://elsewhere.example/wallet", "{resource_url}/", "{issuer}"]


def other_resource(sandbox: Sandbox, pattern: str) -> str:
    resource_url = sandbox.settings.root("resource_url")
    other = pattern.format(resource_url=resource_url, issuer=sandbox.settings.issuer)
    assert other != resource_url
    return other


@pytest.mark.parametrize("grant_type", ["authorization_code", "refresh_token"])
@pytest.mark.parametrize("resource", OTHER_RESOURCES)
def test_any_other_resource_is_invalid_target(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, resource: str, grant_type: str
) -> None:
    form = {"grant_type": grant_type}
    if grant_type == "authorization_code":
        form["code"] = code_for(http, svc_sandbox, confidential)
        form["redirect_uri"] = confidential.redirect_uri
        form["code_verifier"] = VERIFIER
    else:
        form["refresh_token"] = tokens_for(http, svc_sandbox, confidential)["refresh_token"]
    before = svc_sandbox.export()
    other = other_resource(svc_sandbox, resource)
    response = token_request(http, confidential, {**form, "resource": other})
    assert_error(response, 400, "invalid_target")
    assert svc_sandbox.settings.root("resource_url") in response.json["error_description"]
    assert svc_sandbox.export() == before
    # Nothing was used up: the same code or refresh token works without the bad resource.
    assert token_request(http, confidential, form).status_code == 200


def test_id_token_claims(http: FlaskClient, svc_sandbox: Sandbox, confidential: Client) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential, scope="openid profile")
    token = decode_jwt(http, tokens["id_token"])
    assert token.header["kid"]
    jwt.JWTClaimsRegistry(
        now=epoch(svc_sandbox),
        iss={"essential": True, "value": svc_sandbox.settings.issuer},
        aud={"essential": True, "value": confidential.client_id},
        nonce={"essential": True, "value": "nonce-456"},
        exp={"essential": True},
        iat={"essential": True},
        auth_time={"essential": True},
    ).validate(token.claims)
    claims = token.claims
    assert claims["exp"] - claims["iat"] == 10 * 3600
    assert claims["at_hash"] == at_hash(tokens["access_token"])
    assert claims["name"] == "Abebe Kebede"
    assert claims[f"{svc_sandbox.settings.claims_prefix}/handle"] == "abebe"
    assert "email" not in claims  # not granted


def test_no_nonce_no_nonce_claim(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential, nonce=None)
    assert "nonce" not in decode_jwt(http, tokens["id_token"]).claims


def test_second_use_of_a_code_fails_and_revokes_its_tokens(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    code = code_for(http, svc_sandbox, confidential)
    first = exchange(http, confidential, code).json
    assert userinfo_status(http, first["access_token"]) == 200  # type: ignore[index]
    assert_error(exchange(http, confidential, code), 400, "invalid_grant")
    assert userinfo_status(http, first["access_token"]) == 401  # type: ignore[index]
    assert_error(refresh(http, confidential, first["refresh_token"]), 400, "invalid_grant")  # type: ignore[index]


@pytest.mark.parametrize(
    ("wait", "ok"), [(timedelta(minutes=9, seconds=59), True), (timedelta(minutes=10), False)]
)
def test_codes_live_ten_minutes(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, wait: timedelta, ok: bool
) -> None:
    code = code_for(http, svc_sandbox, confidential)
    svc_sandbox.advance(wait)
    response = exchange(http, confidential, code)
    if ok:
        assert response.status_code == 200
    else:
        assert_error(response, 400, "invalid_grant")
        assert "expired" in response.json["error_description"]


@pytest.mark.parametrize(
    ("change", "error", "mentions"),
    [
        # Registered, but not the authorization request's: RFC 6749 §4.1.3.
        ({"redirect_uri": "http://localhost:8080/callback"}, "invalid_grant", "redirect_uri"),
        # Not registered at all: spec §5.2 "rejected with redirect_uri_mismatch".
        ({"redirect_uri": "https://evil.example/cb"}, "redirect_uri_mismatch", "registered"),
        (
            {"redirect_uri": "http://127.0.0.1:8080/callback/"},
            "redirect_uri_mismatch",
            "registered",
        ),
        ({"redirect_uri": "http://127.0.0.1:8081/callback"}, "redirect_uri_mismatch", "registered"),
        ({"code_verifier": "w" * 60}, "invalid_grant", "code_verifier"),
        ({"code_verifier": "short"}, "invalid_request", "code_verifier"),
        ({"code": "ac_unknown"}, "invalid_grant", "code"),
        ({"code": None}, "invalid_request", "code"),
        ({"code_verifier": None}, "invalid_request", "code_verifier"),
        ({"redirect_uri": None}, "invalid_request", "redirect_uri"),
        # RFC 6749 §5.2's code for a grant type the provider does not offer (not in §7).
        ({"grant_type": "password"}, "unsupported_grant_type", "grant_type"),
        ({"grant_type": "client_credentials"}, "unsupported_grant_type", "grant_type"),
        ({"grant_type": "implicit"}, "unsupported_grant_type", "grant_type"),
        ({"grant_type": None}, "invalid_request", "grant_type"),
    ],
)
def test_code_is_bound_to_redirect_uri_and_pkce(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    change: dict[str, str | None],
    error: str,
    mentions: str,
) -> None:
    code = code_for(http, svc_sandbox, confidential)
    form: dict[str, str | None] = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": confidential.redirect_uri,
        "code_verifier": "verifier-" + "v" * 50,
        **change,
    }
    before = svc_sandbox.export()
    response = token_request(http, confidential, {k: v for k, v in form.items() if v})
    assert_error(response, 400, error)
    assert mentions in response.json["error_description"]
    assert svc_sandbox.export() == before


def test_a_redirect_uri_removed_from_the_app_is_a_mismatch(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    code = code_for(http, svc_sandbox, confidential)
    others = ["https://app.sandbox.test/callback"]
    edited = http.patch(f"/_sandbox/apps/{confidential.client_id}", json={"redirectUris": others})
    assert edited.status_code == 200, edited.json
    assert_error(exchange(http, confidential, code), 400, "redirect_uri_mismatch")


@pytest.mark.parametrize("redeemed", [False, True], ids=["unused", "already-redeemed"])
def test_code_is_bound_to_its_client(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, public: Client, redeemed: bool
) -> None:
    """RFC 6749 §4.1.3: another client's code is refused as such, checked first: a redeemed
    one presented by another client does not revoke its owner's tokens (any registered
    client could otherwise end a user's sign-in with a code it saw)."""
    code = code_for(http, svc_sandbox, confidential)
    owner = exchange(http, confidential, code).json if redeemed else None
    other = Client(public.client_id, None, confidential.redirect_uri)
    refused = exchange(http, other, code)
    assert_error(refused, 400, "invalid_grant")
    assert refused.json["error_description"] == "code was issued to another client"  # type: ignore[index]
    if owner is not None:
        assert userinfo_status(http, owner["access_token"]) == 200
        assert refresh(http, confidential, owner["refresh_token"]).status_code == 200


@pytest.mark.parametrize(
    "use_basic", [True, False], ids=["client_secret_basic", "client_secret_post"]
)
def test_confidential_client_authentication(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, use_basic: bool
) -> None:
    code = code_for(http, svc_sandbox, confidential)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": confidential.redirect_uri,
        "code_verifier": "verifier-" + "v" * 50,
    }
    wrong = Client(confidential.client_id, "cs_wrong", confidential.redirect_uri)
    response = token_request(http, wrong, form, use_basic)
    assert_error(response, 401, "invalid_client")
    assert response.headers["WWW-Authenticate"].startswith("Basic")
    nothing = Client(confidential.client_id, None, confidential.redirect_uri)
    assert_error(token_request(http, nothing, form), 401, "invalid_client")
    assert token_request(http, confidential, form, use_basic).status_code == 200


def test_public_client_uses_pkce_only(
    http: FlaskClient, svc_sandbox: Sandbox, public: Client
) -> None:
    code = code_for(http, svc_sandbox, public)
    with_secret = Client(public.client_id, "cs_anything", public.redirect_uri)
    assert_error(exchange(http, with_secret, code), 401, "invalid_client")
    assert exchange(http, public, code).status_code == 200


def test_a_public_client_may_send_its_id_in_basic_with_an_empty_password(
    http: FlaskClient, svc_sandbox: Sandbox, public: Client, confidential: Client
) -> None:
    """Go's x/oauth2 sends "client_id:" in Basic (header auth); it was refused 401 while an
    empty client_secret in the form was taken."""
    form = {
        "grant_type": "authorization_code",
        "code": code_for(http, svc_sandbox, public),
        "redirect_uri": public.redirect_uri,
        "code_verifier": "verifier-" + "v" * 50,
    }
    basic = base64.b64encode(f"{public.client_id}:".encode()).decode()
    response = http.post(
        f"{AUTH}/oauth2/token", data=form, headers={"Authorization": f"Basic {basic}"}
    )
    assert response.status_code == 200, response.json
    # A confidential client's empty password is a missing secret, not a wrong one.
    basic = base64.b64encode(f"{confidential.client_id}:".encode()).decode()
    refused = http.post(
        f"{AUTH}/oauth2/token", data=form, headers={"Authorization": f"Basic {basic}"}
    )
    assert_error(refused, 401, "invalid_client")
    assert (
        refused.json["error_description"] == "client_secret is required for a confidential client"
    )


def test_rotated_secret_stops_the_old_one_at_once(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    rotated = http.post(f"/_sandbox/apps/{confidential.client_id}/rotate-secret", json={}).json
    code = code_for(http, svc_sandbox, confidential)
    assert_error(exchange(http, confidential, code), 401, "invalid_client")
    fresh = Client(confidential.client_id, rotated["clientSecret"], confidential.redirect_uri)  # type: ignore[index]
    assert exchange(http, fresh, code).status_code == 200


def test_only_form_encoded_requests(http: FlaskClient, confidential: Client) -> None:
    response = http.post(
        f"{AUTH}/oauth2/token", json={"grant_type": "authorization_code", "code": "x"}
    )
    assert_error(response, 400, "invalid_request")
    assert "Content-Type" in response.json["error_description"]


# --- refresh ----------------------------------------------------------------------------


def test_refresh_rotates_and_reuse_revokes_the_family(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    first = tokens_for(http, svc_sandbox, confidential)
    second = refresh(http, confidential, first["refresh_token"]).json
    assert second["refresh_token"] != first["refresh_token"]  # type: ignore[index]
    assert userinfo_status(http, second["access_token"]) == 200  # type: ignore[index]
    reused = refresh(http, confidential, first["refresh_token"])
    assert_error(reused, 400, "invalid_grant")
    assert userinfo_status(http, second["access_token"]) == 401  # type: ignore[index]
    assert userinfo_status(http, first["access_token"]) == 401
    assert_error(refresh(http, confidential, second["refresh_token"]), 400, "invalid_grant")  # type: ignore[index]


def test_refresh_only_when_offline_access_was_granted(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential, scope="openid profile")
    assert "refresh_token" not in tokens


def test_refresh_can_narrow_but_never_widen(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    first = tokens_for(http, svc_sandbox, confidential, scope="openid profile offline_access")
    wider = refresh(http, confidential, first["refresh_token"], scope="openid wallet:read")
    assert_error(wider, 400, "invalid_scope")
    narrow = refresh(http, confidential, first["refresh_token"], scope="openid").json
    assert narrow["scope"] == "openid"  # type: ignore[index]
    info = userinfo(http, narrow["access_token"]).json  # type: ignore[index]
    assert set(info) == {"sub"}


@pytest.mark.parametrize(
    ("asked", "issued"),
    [
        ("email", "openid email"),
        ("offline_access", "openid offline_access"),
        ("profile email wallet:read", "openid profile email wallet:read"),
    ],
)
def test_a_refresh_narrowed_without_openid_keeps_openid(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, asked: str, issued: str
) -> None:
    """Spec §5: openid is "Required"; the token response still carries an ID token, so its
    scope says openid (as the consent page, which cannot untick it)."""
    first = tokens_for(http, svc_sandbox, confidential)
    response = refresh(http, confidential, first["refresh_token"], scope=asked)
    assert response.status_code == 200
    body = response.json
    assert body["scope"] == issued
    assert decode_jwt(http, body["id_token"]).claims["sub"] == user_id(svc_sandbox)
    assert userinfo(http, body["access_token"]).json["sub"] == user_id(svc_sandbox)
    inspected = http.post(
        f"{AUTH}/oauth2/introspect",
        data={
            "token": body["access_token"],
            "client_id": confidential.client_id,
            "client_secret": confidential.secret,
        },
    )
    assert inspected.json["scope"] == issued


def test_userinfo_needs_the_openid_scope(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    """OpenID Connect Core §5.3: userinfo answers tokens of an OpenID Connect request. The
    provider issues none without openid, so the token is one of an imported state."""
    token = tokens_for(http, svc_sandbox, confidential, resource=False)["access_token"]
    state = http.get("/_sandbox/state").json
    for record in state["services"]["tokens"]["access"]:
        record["scopes"] = [s for s in record["scopes"] if s != "openid"]
    assert http.put("/_sandbox/state", json=state).status_code == 200
    response = userinfo(http, token)
    assert response.status_code == 403
    assert response.json["error"] == "insufficient_scope"
    challenge = response.headers["WWW-Authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="openid"' in challenge


def test_refresh_keeps_the_token_wallet_bound_only_with_resource(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    resource = svc_sandbox.settings.root("resource_url")
    first = tokens_for(http, svc_sandbox, confidential)
    bound = refresh(http, confidential, first["refresh_token"], resource=resource).json
    assert bound["access_token"].count(".") == 2  # type: ignore[index]
    opaque = refresh(http, confidential, bound["refresh_token"]).json  # type: ignore[index]
    assert opaque["access_token"].count(".") != 2  # type: ignore[index]


def test_disabled_app_cannot_refresh_and_access_tokens_live_until_expiry(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential)
    http.post(f"/_sandbox/apps/{confidential.client_id}/disable", json={})
    assert_error(refresh(http, confidential, tokens["refresh_token"]), 401, "invalid_client")
    assert userinfo_status(http, tokens["access_token"]) == 200
    svc_sandbox.advance(timedelta(hours=1))
    assert userinfo_status(http, tokens["access_token"]) == 401


@pytest.mark.parametrize("rotations", [0, 2])
def test_disconnected_user_stops_refresh_at_once(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, rotations: int
) -> None:
    """``refreshTokensStopped`` counts the tokens that still worked: the rotated ones had
    stopped already (each rotation counted as one more)."""
    tokens = tokens_for(http, svc_sandbox, confidential)
    resource = svc_sandbox.settings.root("resource_url")
    for _ in range(rotations):
        tokens = refresh(http, confidential, tokens["refresh_token"], resource=resource).json
    user = user_id(svc_sandbox)
    response = http.post(
        f"/_sandbox/users/{user}/apps/{confidential.client_id}/disconnect", json={}
    )
    assert response.json["refreshTokensStopped"] == 1  # type: ignore[index]
    assert_error(refresh(http, confidential, tokens["refresh_token"]), 400, "invalid_grant")
    assert userinfo_status(http, tokens["access_token"]) == 200
    grant = svc_sandbox.access_tokens.verify_resource_token(tokens["access_token"])
    assert grant.sub == user


def test_a_code_issued_before_a_disconnect_no_longer_redeems(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, public: Client
) -> None:
    """Spec §5.6: after a disconnect the app must not get a refresh token (30 days of access)
    from a code the user approved before; another app's code is untouched."""
    user = user_id(svc_sandbox)
    pending = code_for(http, svc_sandbox, confidential)
    other = code_for(http, svc_sandbox, public)
    response = http.post(
        f"/_sandbox/users/{user}/apps/{confidential.client_id}/disconnect", json={}
    )
    assert response.json == {  # type: ignore[comparison-overlap]
        "userId": user,
        "clientId": confidential.client_id,
        "refreshTokensStopped": 0,
        "codesVoided": 1,
    }
    before = svc_sandbox.export()
    assert_error(exchange(http, confidential, pending), 400, "invalid_grant")
    assert svc_sandbox.export() == before
    assert svc_sandbox.oauth.consents_of(user) == {
        public.client_id: ["openid", "profile", "email", "offline_access"]
    }
    assert exchange(http, public, other).status_code == 200


@pytest.mark.parametrize(("days", "ok"), [(29, True), (30, False)])
def test_refresh_tokens_live_thirty_days(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, days: int, ok: bool
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential)
    svc_sandbox.advance(timedelta(days=days))
    response = refresh(http, confidential, tokens["refresh_token"])
    assert response.status_code == (200 if ok else 400)


def test_removing_offline_access_from_the_app_stops_refresh(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential)
    http.patch(
        f"/_sandbox/apps/{confidential.client_id}",
        json={"scopes": ["openid", "profile", "wallet:read"]},
    )
    assert_error(refresh(http, confidential, tokens["refresh_token"]), 400, "unauthorized_client")
