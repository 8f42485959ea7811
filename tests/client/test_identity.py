"""The identity client against the emulator over real HTTP, as an app uses it: discovery read at
run time, the authorization URL (PKCE S256), the user's decision played by the control plane,
the callback, tokens, userinfo, introspection, revocation, and ID tokens validated by the client
(pyjwt) and checked here independently with joserfc."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import KeySet

from svc_sandbox.client import (
    IdentityClient,
    SvcAuthenticationError,
    SvcClientError,
    SvcError,
    SvcIdTokenError,
)
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.testing.identity import authorize, scripted_callback

SCOPES = ["openid", "profile", "email", "offline_access", "wallet:read"]


@dataclass(frozen=True)
class Seeded:
    server: RunningServer
    client_id: str
    secret: str
    redirect_uri: str
    public_id: str
    abebe: str

    def client(self, **options: object) -> IdentityClient:
        return IdentityClient(
            self.client_id,
            self.secret,
            redirect_uri=self.redirect_uri,
            auth_url=self.server.sandbox.settings.issuer,
            **options,  # type: ignore[arg-type]
        )


@pytest.fixture
def seeded(svc_server: RunningServer) -> Seeded:
    sandbox = svc_server.sandbox
    sandbox.settings.rate_limits = False
    identity = sandbox.info()["identity"]
    app = next(a for a in identity["apps"] if a["clientType"] == "confidential")
    public = next(a for a in identity["apps"] if a["clientType"] == "public")
    user = sandbox.users.by_handle("abebe")
    assert user is not None
    return Seeded(
        svc_server,
        app["clientId"],
        app["clientSecret"],
        app["redirectUris"][0],
        public["clientId"],
        user.id,
    )


def test_the_authorization_url_asks_for_a_code_with_a_fresh_s256_challenge(seeded: Seeded) -> None:
    with seeded.client() as idp:
        first, second = idp.authorization_url(SCOPES), idp.authorization_url(SCOPES)
        assert idp.discovery().issuer == seeded.server.sandbox.settings.issuer
    query = {k: v[0] for k, v in parse_qs(urlsplit(first.url).query).items()}
    digest = hashlib.sha256(first.code_verifier.encode()).digest()
    assert query == {
        "response_type": "code",
        "client_id": seeded.client_id,
        "redirect_uri": seeded.redirect_uri,
        "scope": " ".join(SCOPES),
        "state": first.state,
        "code_challenge": base64.urlsafe_b64encode(digest).rstrip(b"=").decode(),
        "code_challenge_method": "S256",
        "nonce": first.nonce,
    }
    assert 43 <= len(first.code_verifier) <= 128
    assert first.state != second.state and first.code_verifier != second.code_verifier
    with pytest.raises(ValueError, match="openid"):
        idp.authorization_url(["profile"])


@pytest.mark.parametrize("auth_method", ["client_secret_post", "client_secret_basic"])
def test_sign_in_tokens_userinfo_refresh_introspect_revoke(
    seeded: Seeded, auth_method: str
) -> None:
    sandbox = seeded.server.sandbox
    resource = sandbox.settings.root("resource_url")
    with seeded.client(auth_method=auth_method) as idp:
        request = idp.authorization_url(SCOPES)
        callback = scripted_callback(seeded.server.url, seeded.abebe, request.url)
        tokens = idp.exchange_callback(callback, request, resource=resource)
        assert tokens.token_type == "Bearer" and tokens.expires_in == 3600
        assert tokens.scopes == SCOPES and tokens.refresh_token and tokens.id_token

        claims = idp.validate_id_token(tokens.id_token, nonce=request.nonce, now=sandbox.now())
        assert claims["sub"] == seeded.abebe and claims["aud"] == seeded.client_id

        # The same token, checked independently of pyjwt.
        jwks = KeySet.import_key_set(httpx.get(idp.discovery().jwks_uri).json())
        decoded = jwt.decode(tokens.id_token, jwks, algorithms=["RS256"])
        jwt.JWTClaimsRegistry(
            now=int(sandbox.now().timestamp()),
            iss={"essential": True, "value": sandbox.settings.issuer},
            aud={"essential": True, "value": seeded.client_id},
            nonce={"essential": True, "value": request.nonce},
        ).validate(decoded.claims)
        assert decoded.claims == claims

        info = idp.userinfo(tokens.access_token)
        assert info.sub == seeded.abebe and info.model_extra is not None
        assert info.model_extra["email"] and info.model_extra["name"]

        assert idp.introspect(tokens.access_token).active is True
        refreshed = idp.refresh(tokens.refresh_token, resource=resource)
        assert refreshed.refresh_token not in (None, tokens.refresh_token)  # rotated
        with pytest.raises(SvcClientError) as reused:
            idp.refresh(tokens.refresh_token, resource=resource)
        assert (reused.value.status, reused.value.code) == (400, "invalid_grant")
        assert reused.value.request_id

        idp.revoke(refreshed.access_token)
        assert idp.introspect(refreshed.access_token).active is False
        assert idp.introspect("never-issued").active is False


def test_a_declined_consent_and_a_foreign_callback_are_refused(seeded: Seeded) -> None:
    with seeded.client() as idp:
        request = idp.authorization_url(SCOPES)
        denied = scripted_callback(seeded.server.url, seeded.abebe, request.url, decision="deny")
        with pytest.raises(SvcClientError) as declined:
            idp.exchange_callback(denied, request)
        assert declined.value.code == "access_denied"

        other = idp.authorization_url(SCOPES)
        callback = scripted_callback(seeded.server.url, seeded.abebe, other.url)
        with pytest.raises(SvcError) as mismatch:
            idp.exchange_callback(callback, request)  # another attempt's state
        assert mismatch.value.code == "state_mismatch"


def test_a_wrong_secret_is_invalid_client(seeded: Seeded) -> None:
    sandbox = seeded.server.sandbox
    with (
        IdentityClient(
            seeded.client_id,
            "cs_wrong",
            redirect_uri=seeded.redirect_uri,
            auth_url=sandbox.settings.issuer,
        ) as idp,
        pytest.raises(SvcAuthenticationError) as refused,
    ):
        idp.introspect("anything")
    assert (refused.value.status, refused.value.code) == (401, "invalid_client")
    assert refused.value.request_id


def test_id_token_validation_refuses_what_spec_5_7_forbids(seeded: Seeded) -> None:
    sandbox = seeded.server.sandbox
    with seeded.client() as idp:
        tokens = authorize(seeded.server.url, idp, seeded.abebe, ["openid"])
        assert tokens.id_token is not None
        now = sandbox.now()
        with pytest.raises(SvcIdTokenError, match="nonce"):
            idp.validate_id_token(tokens.id_token, nonce="another", now=now)
        with pytest.raises(SvcIdTokenError, match="expired"):
            idp.validate_id_token(tokens.id_token, now=now + timedelta(hours=11))
        forged = tokens.id_token[:-4] + ("AAAA" if not tokens.id_token.endswith("AAAA") else "BBBB")
        with pytest.raises(SvcIdTokenError, match="invalid ID token"):
            idp.validate_id_token(forged, now=now)
    public = IdentityClient(
        seeded.public_id, redirect_uri=seeded.redirect_uri, auth_url=sandbox.settings.issuer
    )
    with public, pytest.raises(SvcIdTokenError, match="(?i)audience"):
        public.validate_id_token(tokens.id_token, now=now)


def test_keys_rotated_after_the_client_cached_them_are_read_again(seeded: Seeded) -> None:
    sandbox = seeded.server.sandbox
    with seeded.client() as idp:
        before = {k.key_id for k in idp.jwks().keys}
        sandbox.signing_keys.rotate()
        tokens = authorize(seeded.server.url, idp, seeded.abebe, ["openid"])
        assert tokens.id_token is not None
        claims = idp.validate_id_token(tokens.id_token, now=sandbox.now())
        assert claims["sub"] == seeded.abebe
        assert {k.key_id for k in idp.jwks().keys} > before
