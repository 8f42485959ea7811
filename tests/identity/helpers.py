"""What the identity tests share: the seeded apps, PKCE, the scripted authorize step, token
requests through the Flask test client, and JWT checks with joserfc (not pyjwt, which signs)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from flask.testing import FlaskClient
from joserfc import jwt
from joserfc.jwk import KeySet

from svc_sandbox.sandbox import Sandbox

AUTH = "/auth"
VERIFIER = "verifier-" + "v" * 50
WALLET_SCOPES = "openid profile email offline_access wallet:read wallet:send"


def challenge(verifier: str = VERIFIER) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@dataclass(frozen=True)
class Client:
    client_id: str
    secret: str | None
    redirect_uri: str


def wallet_app(sandbox: Sandbox) -> Client:
    """The seeded confidential app (wallet:send approved) and its secret."""
    info = sandbox.info()["identity"]
    app = next(a for a in info["apps"] if a["clientType"] == "confidential")
    return Client(app["clientId"], app["clientSecret"], app["redirectUris"][0])


def public_app(sandbox: Sandbox) -> Client:
    info = sandbox.info()["identity"]
    app = next(a for a in info["apps"] if a["clientType"] == "public")
    return Client(app["clientId"], None, app["redirectUris"][0])


def user_id(sandbox: Sandbox, handle: str = "abebe") -> str:
    user = sandbox.users.by_handle(handle)
    assert user is not None
    return user.id


def authorize_params(client: Client, **overrides: str | None) -> dict[str, str]:
    params: dict[str, str | None] = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": client.redirect_uri,
        "scope": WALLET_SCOPES if client.secret else "openid profile email offline_access",
        "state": "state-123",
        "code_challenge": challenge(),
        "code_challenge_method": "S256",
        "nonce": "nonce-456",
    }
    params.update(overrides)
    return {k: v for k, v in params.items() if v is not None}


def authorize_as(
    http: FlaskClient,
    client: Client,
    user: str,
    decision: str = "approve",
    scopes: list[str] | None = None,
    **overrides: str | None,
) -> dict[str, Any]:
    """The control plane's scripted authorize step; returns its JSON (redirectUrl, code...)."""
    body: dict[str, Any] = {
        "userId": user,
        "params": authorize_params(client, **overrides),
        "decision": decision,
    }
    if scopes is not None:
        body["scopes"] = scopes
    response = http.post("/_sandbox/identity/authorize", json=body)
    assert response.status_code == 200, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def basic(client: Client) -> dict[str, str]:
    raw = f"{client.client_id}:{client.secret}".encode()
    return {"Authorization": "Basic " + base64.b64encode(raw).decode()}


def token_request(
    http: FlaskClient, client: Client, form: dict[str, str], use_basic: bool = True
) -> Any:
    """POST {auth_url}/oauth2/token, form-encoded, authenticating ``client``."""
    headers: dict[str, str] = {}
    data = dict(form)
    if client.secret is not None and use_basic:
        headers = basic(client)
    else:
        data["client_id"] = client.client_id
        if client.secret is not None:
            data["client_secret"] = client.secret
    return http.post(f"{AUTH}/oauth2/token", data=data, headers=headers)


def exchange(
    http: FlaskClient, client: Client, code: str, resource: str | None = None, **extra: str
) -> Any:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": client.redirect_uri,
        "code_verifier": VERIFIER,
        **extra,
    }
    if resource is not None:
        form["resource"] = resource
    return token_request(http, client, form)


def tokens_for(
    http: FlaskClient,
    sandbox: Sandbox,
    client: Client,
    handle: str = "abebe",
    resource: bool = True,
    **overrides: str | None,
) -> dict[str, Any]:
    """A full authorization for ``handle``: the token response."""
    code = authorize_as(http, client, user_id(sandbox, handle), **overrides)["code"]
    res = sandbox.settings.root("resource_url") if resource else None
    response = exchange(http, client, code, res)
    assert response.status_code == 200, response.json
    result: dict[str, Any] = response.json  # type: ignore[assignment]
    return result


def userinfo(http: FlaskClient, access_token: str) -> Any:
    """GET {auth_url}/oauth2/userinfo with ``access_token`` as the bearer."""
    return http.get(f"{AUTH}/oauth2/userinfo", headers={"Authorization": f"Bearer {access_token}"})


def keyset(http: FlaskClient) -> KeySet:
    return KeySet.import_key_set(http.get(f"{AUTH}/jwks").json)  # type: ignore[arg-type]


def decode_jwt(http: FlaskClient, token: str) -> jwt.Token:
    """Verifies the signature with joserfc against the served JWKS (RS256 only)."""
    return jwt.decode(token, keyset(http), algorithms=["RS256"])


def epoch(sandbox: Sandbox) -> int:
    return int(sandbox.now().timestamp())
