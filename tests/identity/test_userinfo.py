"""GET/POST {auth_url}/oauth2/userinfo (issue 11 item 6) and the resource-server check:
claims by scope, RFC 6750 401s, and malformed or tampered JWTs, forged with joserfc."""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from flask.testing import FlaskClient
from joserfc import jwt
from joserfc.jwk import RSAKey

from svc_sandbox.identity.errors import InvalidToken
from svc_sandbox.sandbox import Sandbox
from tests.commerce.test_auth import STRAY_BYTES
from tests.identity.helpers import AUTH, Client, tokens_for, user_id


def userinfo(http: FlaskClient, token: str | None, method: str = "GET") -> Any:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return http.open(f"{AUTH}/oauth2/userinfo", method=method, headers=headers)


@pytest.mark.parametrize(
    ("scope", "claims"),
    [
        ("openid", {"sub"}),
        ("openid email", {"sub", "email", "email_verified"}),
        ("openid profile", {"sub", "name", "picture", "given_name", "family_name", "HANDLE"}),
        ("openid wallet:read", {"sub"}),
    ],
)
def test_claims_follow_the_granted_scopes(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, scope: str, claims: set[str]
) -> None:
    handle = f"{svc_sandbox.settings.claims_prefix}/handle"
    expected = {c.replace("HANDLE", handle) for c in claims}
    tokens = tokens_for(http, svc_sandbox, confidential, scope=scope, resource=False)
    for method in ("GET", "POST"):
        response = userinfo(http, tokens["access_token"], method)
        assert response.status_code == 200
        assert set(response.json) == expected
        assert response.json["sub"] == user_id(svc_sandbox)


def test_missing_token_is_401_with_a_bare_bearer_challenge(http: FlaskClient) -> None:
    response = userinfo(http, None)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == 'Bearer realm="svc-sandbox"'


#: Authorization headers without a usable bearer token, and whether a challenge names the error
#: (RFC 6750 §3.1: none for a request without authentication or with another method).
NO_USABLE_BEARER = {
    "basic": ("Basic Zm9vOmJhcg==", False),
    "dpop": ("DPoP abc", False),
    "empty bearer": ("Bearer ", True),
    "bare scheme": ("Bearer", True),
}


@pytest.mark.parametrize(
    ("header", "names_error"), NO_USABLE_BEARER.values(), ids=list(NO_USABLE_BEARER)
)
def test_a_header_without_a_usable_bearer_token_is_401_with_a_challenge(
    http: FlaskClient, header: str, names_error: bool
) -> None:
    """As userinfo's other errors and the wallet's (docs/spec-gaps.md "Error body format"); it
    was 400 invalid_request without a challenge."""
    response = http.get(f"{AUTH}/oauth2/userinfo", headers={"Authorization": header})
    assert response.status_code == 401
    assert response.json["error"] == "invalid_token"
    assert "Authorization: Bearer <access token>" in response.json["error_description"]
    assert response.headers["Cache-Control"] == "no-store"
    challenge = response.headers["WWW-Authenticate"]
    assert challenge.startswith('Bearer realm="svc-sandbox"')
    assert ('error="invalid_token"' in challenge) is names_error


@pytest.mark.parametrize("resource", [True, False], ids=["jwt", "opaque"])
def test_expired_and_revoked_tokens_are_401(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, resource: bool
) -> None:
    first = tokens_for(http, svc_sandbox, confidential, resource=resource)
    second = tokens_for(http, svc_sandbox, confidential, resource=resource)
    http.post(
        f"{AUTH}/oauth2/revoke",
        data={
            "token": second["access_token"],
            "client_id": confidential.client_id,
            "client_secret": confidential.secret,
        },
    )
    revoked = userinfo(http, second["access_token"])
    assert revoked.status_code == 401
    assert 'error="invalid_token"' in revoked.headers["WWW-Authenticate"]
    svc_sandbox.advance(timedelta(minutes=59, seconds=59))
    assert userinfo(http, first["access_token"]).status_code == 200
    svc_sandbox.advance(timedelta(seconds=1))
    expired = userinfo(http, first["access_token"])
    assert expired.status_code == 401 and "expired" in expired.json["error_description"]


# --- malformed and tampered JWT access tokens ---------------------------------------------------


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def segments(token: str) -> list[str]:
    return token.split(".")


def unsigned(header: dict[str, Any], claims: dict[str, Any], signature: str = "") -> str:
    encoded = [b64(json.dumps(part).encode()) for part in (header, claims)]
    return ".".join([*encoded, signature])


@functools.lru_cache(maxsize=1)
def foreign_key() -> RSAKey:
    """An RSA key that is not the sandbox's (made once: generating one takes a moment)."""
    foreign = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = foreign.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return RSAKey.import_key(pem)


class Forge:
    """Builds variants of a real JWT access token of the sandbox."""

    def __init__(self, sandbox: Sandbox, token: str) -> None:
        self.token = token
        parts = segments(token)
        self.header = json.loads(base64.urlsafe_b64decode(parts[0] + "=="))
        self.claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=="))
        private = sandbox.signing_keys.active().private_key
        pem = private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        self.real_key = RSAKey.import_key(pem)
        self.public_pem = private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        self.foreign_key = foreign_key()
        self.now = int(sandbox.now().timestamp())

    def signed(
        self,
        header: dict[str, Any] | None = None,
        drop: tuple[str, ...] = (),
        key: RSAKey | None = None,
        **claims: Any,
    ) -> str:
        new_claims = {k: v for k, v in {**self.claims, **claims}.items() if k not in drop}
        new_header = {**self.header, **(header or {})}
        alg = new_header["alg"]
        return jwt.encode(new_header, new_claims, key or self.real_key, algorithms=[alg])

    def hs256_with_public_key(self) -> str:
        header = {**self.header, "alg": "HS256"}
        signing_input = unsigned(header, self.claims)[:-1]
        mac = hmac.new(self.public_pem, signing_input.encode(), hashlib.sha256).digest()
        return signing_input + "." + b64(mac)

    def with_payload_of(self, **claims: Any) -> str:
        parts = segments(self.token)
        parts[1] = b64(json.dumps({**self.claims, **claims}).encode())
        return ".".join(parts)

    def flipped_signature(self) -> str:
        parts = segments(self.token)
        raw = bytearray(base64.urlsafe_b64decode(parts[2] + "=="))
        raw[10] ^= 0x01
        parts[2] = b64(bytes(raw))
        return ".".join(parts)


VARIANTS: dict[str, Callable[[Forge], str]] = {
    "alg none": lambda f: unsigned({**f.header, "alg": "none"}, f.claims),
    "HS256 keyed with the public key": lambda f: f.hs256_with_public_key(),
    "RS512 with the real key": lambda f: f.signed({"alg": "RS512"}),
    "unknown kid": lambda f: f.signed({"kid": "not-a-key"}, key=f.foreign_key),
    "no kid": lambda f: unsigned({"alg": "RS256", "typ": "at+jwt"}, f.claims, "c2ln"),
    "foreign key under the real kid": lambda f: f.signed(key=f.foreign_key),
    "payload changed, signature kept": lambda f: f.with_payload_of(sub="0" * 24),
    "scope widened, signature kept": lambda f: f.with_payload_of(scope="openid admin"),
    "signature bit flipped": lambda f: f.flipped_signature(),
    "signature removed": lambda f: ".".join([*segments(f.token)[:2], ""]),
    "typ JWT (an ID token's type)": lambda f: f.signed({"typ": "JWT"}),
    "no typ": lambda f: unsigned({"alg": "RS256", "kid": f.header["kid"]}, f.claims, "c2ln"),
    "wrong issuer": lambda f: f.signed(iss="https://issuer.example"),
    "wrong audience": lambda f: f.signed(aud="https://other-resource.example"),
    "expired": lambda f: f.signed(exp=f.now - 1),
    "no exp": lambda f: f.signed(drop=("exp",)),
    "no iat": lambda f: f.signed(drop=("iat",)),
    "iat in the future": lambda f: f.signed(iat=f.now + 600),
    "exp as a string": lambda f: f.signed(exp=str(f.now + 600)),
    "never issued (unknown jti)": lambda f: f.signed(jti="f" * 24),
    "two segments": lambda f: ".".join(segments(f.token)[:2]),
    "four segments": lambda f: f.token + ".extra",
    "header not base64": lambda f: "%%%." + ".".join(segments(f.token)[1:]),
    "header not JSON": lambda f: b64(b"not json") + "." + ".".join(segments(f.token)[1:]),
    "payload not JSON": lambda f: ".".join(
        [segments(f.token)[0], b64(b"[1,2"), segments(f.token)[2]]
    ),
}


@pytest.fixture
def forge(http: FlaskClient, svc_sandbox: Sandbox, confidential: Client) -> Forge:
    tokens = tokens_for(http, svc_sandbox, confidential)
    assert userinfo(http, tokens["access_token"]).status_code == 200
    return Forge(svc_sandbox, tokens["access_token"])


@pytest.mark.parametrize("variant", list(VARIANTS), ids=list(VARIANTS))
def test_tampered_jwts_are_rejected(
    http: FlaskClient, svc_sandbox: Sandbox, forge: Forge, variant: str
) -> None:
    token = VARIANTS[variant](forge)
    assert token != forge.token
    response = userinfo(http, token)
    assert response.status_code == 401, response.json
    assert response.json["error"] == "invalid_token"
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]
    with pytest.raises(InvalidToken):
        svc_sandbox.access_tokens.verify_resource_token(token)


def test_an_id_token_is_not_an_access_token(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential)
    assert userinfo(http, tokens["id_token"]).status_code == 401
    with pytest.raises(InvalidToken, match="typ"):
        svc_sandbox.access_tokens.verify_resource_token(tokens["id_token"])


def test_resource_check_refuses_opaque_tokens(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential, resource=False)
    with pytest.raises(InvalidToken, match="resource"):
        svc_sandbox.access_tokens.verify_resource_token(tokens["access_token"])


@pytest.mark.parametrize("stray", STRAY_BYTES)
def test_an_access_token_with_a_stray_character_around_it_is_malformed(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, stray: str
) -> None:
    """Only HTTP's space and tab around the token are trimmed (core/authorization.py)."""
    tokens = tokens_for(http, svc_sandbox, confidential, resource=False)
    assert userinfo(http, f" {tokens['access_token']}\t").status_code == 200
    for sent in (f"{stray}{tokens['access_token']}", f"{tokens['access_token']}{stray}"):
        response = userinfo(http, sent)
        assert response.status_code == 401
        assert response.json["error"] == "invalid_token"
