"""Signing keys (issue 11 item 7): seeded RSA keys, the JWKS, rotation."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest
from flask.testing import FlaskClient
from joserfc import jwt
from joserfc.jwk import KeySet

from svc_sandbox.app import create_app
from svc_sandbox.identity.keys import _odd_primes_below
from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import AUTH, Client, keyset, tokens_for


def test_jwks_serves_rs256_signing_keys(http: FlaskClient) -> None:
    response = http.get(f"{AUTH}/jwks")
    assert response.status_code == 200
    (key,) = response.json["keys"]
    assert key["kty"] == "RSA" and key["use"] == "sig" and key["alg"] == "RS256"
    assert key["kid"] and key["e"] == "AQAB"
    assert "d" not in key and "p" not in key  # public parts only
    assert "key_ops" not in key  # RFC 7517 §4.3: not together with "use"
    assert len(base64.urlsafe_b64decode(key["n"] + "==")) == 2048 // 8
    assert KeySet.import_key_set(response.json).keys[0].kid == key["kid"]


def test_same_seed_same_keys_other_seed_other_keys() -> None:
    def jwks(seed: int) -> object:
        app = create_app(Sandbox(clock_mode="frozen", seed=seed))
        return app.test_client().get(f"{AUTH}/jwks").json

    assert jwks(7) == jwks(7)
    assert jwks(7) != jwks(8)


def test_rotation_keeps_the_old_key_until_its_tokens_expire(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    old = tokens_for(http, svc_sandbox, confidential)
    old_kid = jwt.decode(old["id_token"], keyset(http)).header["kid"]
    rotated = http.post("/_sandbox/identity/keys/rotate", json={}).json
    assert rotated["active"] != old_kid  # type: ignore[index]
    new = tokens_for(http, svc_sandbox, confidential)
    both = keyset(http)
    assert jwt.decode(new["id_token"], both).header["kid"] == rotated["active"]  # type: ignore[index]
    assert jwt.decode(old["id_token"], both).header["kid"] == old_kid
    svc_sandbox.advance(timedelta(minutes=30))
    ok = http.get(
        f"{AUTH}/oauth2/userinfo", headers={"Authorization": f"Bearer {old['access_token']}"}
    )
    assert ok.status_code == 200  # signed by the retired key, still published
    svc_sandbox.advance(timedelta(hours=9, minutes=30))
    kids = [k["kid"] for k in http.get(f"{AUTH}/jwks").json["keys"]]  # type: ignore[index]
    assert kids == [rotated["active"]]  # type: ignore[index]


def test_a_key_retired_after_the_clock_went_back_stays_until_its_tokens_expire(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    """Tokens signed at T live to T+1 h (access) and T+10 h (ID). Set back to T-11 h and
    rotated, the key was published only to T-1 h: at T+30 min introspection called the access
    token active while userinfo refused its kid, and the ID token no longer verified."""
    issued = tokens_for(http, svc_sandbox, confidential, resource=True)
    id_token = jwt.decode(issued["id_token"], keyset(http))
    back = svc_sandbox.now() - timedelta(hours=11)
    assert http.post("/_sandbox/clock/set", json={"now": back.isoformat()}).status_code == 200
    http.post("/_sandbox/identity/keys/rotate", json={})
    svc_sandbox.advance(timedelta(hours=11, minutes=30))  # T+30 min
    bearer = {"Authorization": f"Bearer {issued['access_token']}"}
    assert http.get(f"{AUTH}/oauth2/userinfo", headers=bearer).status_code == 200
    assert jwt.decode(issued["id_token"], keyset(http)).claims == id_token.claims
    svc_sandbox.advance(timedelta(hours=9, minutes=31))  # T+10h01: all it signed has expired
    kids = [k["kid"] for k in http.get(f"{AUTH}/jwks").json["keys"]]  # type: ignore[index]
    assert id_token.header["kid"] not in kids


@pytest.mark.parametrize("limit", [3, 4, 10, 50, 5000])
def test_the_sieve_finds_the_odd_primes_trial_division_finds(limit: int) -> None:
    """The primality pre-check of the seeded key search divides by these: a prime missing or
    extra would change every seeded key."""
    by_trial_division = [
        n for n in range(3, limit) if n % 2 and all(n % d for d in range(2, int(n**0.5) + 1))
    ]
    assert _odd_primes_below(limit) == by_trial_division
