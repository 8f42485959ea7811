"""Forged and tampered access tokens (issue 12: at least 12) are all 401 ``invalid_token``.

The real token is checked with joserfc against the served JWKS (pyjwt signs on the provider's
side); forgeries are built with joserfc, or by hand where the forgery is the point (``none``,
HS256 keyed with the public key). "Provider-signed" forgeries use the provider's own private
key to prove the claim checks hold even when the signature is good."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any

import pytest
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from cryptography.hazmat.primitives import serialization
from flask.testing import FlaskClient
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from svc_sandbox.sandbox import Sandbox
from tests.wallet.conftest import Connect
from tests.wallet.helpers import WALLET, FlaskAdapter, headers, seeded_app, user_id

ATTACKER = RSAKey.generate_key(2048)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64json(value: dict[str, Any]) -> str:
    return b64(json.dumps(value, separators=(",", ":")).encode())


def unb64(part: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return found


class Real:
    """The genuine token, its header and claims (checked with joserfc), and the provider key."""

    def __init__(self, sandbox: Sandbox, http: FlaskClient, token: str) -> None:
        self.token = token
        jwks = KeySet.import_key_set(http.get("/auth/jwks").json)  # type: ignore[arg-type]
        decoded = jwt.decode(token, jwks, algorithms=["RS256"])
        self.header: dict[str, Any] = dict(decoded.header)
        self.claims: dict[str, Any] = dict(decoded.claims)
        assert self.header["typ"] == "at+jwt"
        assert self.claims["aud"] == sandbox.settings.root("resource_url")
        pem = sandbox.signing_keys.active().private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        self.provider = RSAKey.import_key(pem)
        self.public_pem = (
            sandbox.signing_keys.active()
            .private_key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )

    def signed(self, key: RSAKey, header: dict[str, Any] | None = None, **claims: Any) -> str:
        """A token with the real claims changed by ``claims`` (None removes one)."""
        body = {**self.claims, **claims}
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode({**self.header, **(header or {})}, body, key, algorithms=["RS256"])


def none_alg(real: Real) -> str:
    return f"{b64json({**real.header, 'alg': 'none'})}.{b64json(real.claims)}."


def hs256_with_public_key(real: Real) -> str:
    signing_input = f"{b64json({**real.header, 'alg': 'HS256'})}.{b64json(real.claims)}"
    mac = hmac.new(real.public_pem, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(mac)}"


def flipped_signature(real: Real) -> str:
    head, body, signature = real.token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)))
    raw[10] ^= 0x01
    return f"{head}.{body}.{b64(bytes(raw))}"


def widened_scope(real: Real) -> str:
    head, _, signature = real.token.split(".")
    claims = {**real.claims, "scope": real.claims["scope"] + " wallet:admin", "sub": "0" * 24}
    return f"{head}.{b64json(claims)}.{signature}"


def later_exp_same_signature(real: Real) -> str:
    head, _, signature = real.token.split(".")
    return f"{head}.{b64json({**real.claims, 'exp': real.claims['exp'] + 86400})}.{signature}"


FORGERIES: dict[str, Callable[[Real], str]] = {
    "alg none": none_alg,
    "HS256 keyed with the public key": hs256_with_public_key,
    "attacker key, real kid": lambda r: r.signed(ATTACKER),
    "attacker key, unknown kid": lambda r: r.signed(ATTACKER, {"kid": "attacker-kid"}),
    "no kid": lambda r: jwt.encode(
        {"alg": "RS256", "typ": "at+jwt"}, r.claims, r.provider, algorithms=["RS256"]
    ),
    "signature bit flipped": flipped_signature,
    "scope and sub widened, old signature": widened_scope,
    "exp extended, old signature": later_exp_same_signature,
    "provider-signed, wrong iss": lambda r: r.signed(r.provider, iss="https://evil.example"),
    "provider-signed, wrong aud": lambda r: r.signed(r.provider, aud="https://other.example/api"),
    "provider-signed, aud is the client": lambda r: r.signed(r.provider, aud=r.claims["client_id"]),
    "provider-signed, expired": lambda r: r.signed(r.provider, exp=r.claims["iat"] - 1),
    "provider-signed, iat in the future": lambda r: r.signed(r.provider, iat=r.claims["iat"] + 600),
    "provider-signed, no exp": lambda r: r.signed(r.provider, exp=None),
    "provider-signed, no iat": lambda r: r.signed(r.provider, iat=None),
    "provider-signed, typ JWT": lambda r: r.signed(r.provider, {"typ": "JWT"}),
    "provider-signed, unknown jti": lambda r: r.signed(r.provider, jti="f" * 32),
    "provider-signed, real jti, more scope": lambda r: r.signed(
        r.provider, scope="openid wallet:read wallet:send"
    ),
    "two segments": lambda r: ".".join(r.token.split(".")[:2]),
    "five segments (JWE shape)": lambda r: r.token + ".AAAA.BBBB",
    "garbage": lambda r: "eyJ!!!.###.$$$",
    "header not JSON": lambda r: b64(b"not json") + "." + r.token.split(".", 1)[1],
}


@pytest.mark.parametrize("forge", FORGERIES.values(), ids=FORGERIES.keys())
def test_a_forged_or_tampered_token_is_invalid_token(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    connect: Connect,
    key: str,
    forge: Callable[[Real], str],
) -> None:
    real = Real(svc_sandbox, http, connect("abebe", scope="openid wallet:read"))
    assert http.get(WALLET, headers=headers(real.token, key)).status_code == 200
    forged = forge(real)
    assert forged != real.token
    for response in (
        http.get(WALLET, headers=headers(forged, key)),
        http.post(
            WALLET + "/send",
            json={"recipientHandle": "tigist", "amountMinor": 100, "idempotencyKey": "forged-01"},
            headers=headers(forged, key),
        ),
    ):
        assert response.status_code == 401, (forged, response.json)
        assert response.json["error"] == "invalid_token"  # type: ignore[index]
        assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]
    assert svc_sandbox.wallets.transfers == {}


def test_the_count_of_forgeries() -> None:
    assert len(FORGERIES) >= 12


def test_an_id_token_or_a_refresh_token_is_not_an_access_token(
    http: FlaskClient, svc_sandbox: Sandbox, key: str
) -> None:
    app = seeded_app(svc_sandbox)
    client = OAuth2Session(
        app.client_id,
        app.secret,
        scope="openid offline_access wallet:read",
        redirect_uri=app.redirect_uri,
        code_challenge_method="S256",
    )
    client.mount("http://", FlaskAdapter(http))
    origin = svc_sandbox.settings.origin
    discovery = origin + "/auth/.well-known/openid-configuration"
    meta = client.get(discovery, withhold_token=True).json()
    verifier = generate_token(64)
    url, _ = client.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier)
    decision = {"userId": user_id(svc_sandbox, "abebe"), "url": url, "decision": "approve"}
    redirect = http.post("/_sandbox/identity/authorize", json=decision).json["redirectUrl"]  # type: ignore[index]
    tokens = client.fetch_token(
        meta["token_endpoint"],
        authorization_response=redirect,
        code_verifier=verifier,
        resource=svc_sandbox.settings.root("resource_url"),
    )
    assert http.get(WALLET, headers=headers(tokens["access_token"], key)).status_code == 200
    for other in (tokens["id_token"], tokens["refresh_token"]):
        response = http.get(WALLET, headers=headers(other, key))
        assert response.status_code == 401
        assert response.json["error"] == "invalid_token"  # type: ignore[index]
