"""What the wallet tests share: real access tokens from the identity provider, obtained as an
integrator's app does (authlib's OAuth2 client, PKCE S256, resource = {resource_url}), with the
user's approval given through the control plane's scripted authorize step."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Any

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.helpers import token_of

READ = "openid wallet:read"
SEND = "openid wallet:read wallet:send"
WALLET = "/wallet"


@dataclass(frozen=True)
class App:
    client_id: str
    secret: str | None
    redirect_uri: str


def seeded_app(sandbox: Sandbox, client_type: str = "confidential") -> App:
    """The seeded confidential app (wallet:send approved) or the seeded public app."""
    found = next(a for a in sandbox.info()["identity"]["apps"] if a["clientType"] == client_type)
    return App(found["clientId"], found["clientSecret"], found["redirectUris"][0])


def user_id(sandbox: Sandbox, handle: str) -> str:
    user = sandbox.users.by_handle(handle)
    assert user is not None
    return user.id


def access_token(
    origin: str,
    sandbox: Sandbox,
    handle: str = "abebe",
    scope: str = SEND,
    app: App | None = None,
    resource: bool = True,
) -> str:
    """The code flow over HTTP against the served sandbox at ``origin``: the access token."""
    app = app or seeded_app(sandbox)
    meta = requests.get(origin + "/auth/.well-known/openid-configuration", timeout=10).json()
    client = OAuth2Session(
        app.client_id,
        app.secret,
        scope=scope,
        redirect_uri=app.redirect_uri,
        code_challenge_method="S256",
        token_endpoint_auth_method="client_secret_basic" if app.secret else "none",
    )
    verifier = generate_token(64)
    url, _ = client.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier)
    decision = requests.post(
        origin + "/_sandbox/identity/authorize",
        json={"userId": user_id(sandbox, handle), "url": url, "decision": "approve"},
        timeout=10,
    )
    assert decision.status_code == 200, decision.text
    extra = {"resource": sandbox.settings.root("resource_url")} if resource else {}
    token = client.fetch_token(
        meta["token_endpoint"],
        authorization_response=decision.json()["redirectUrl"],
        code_verifier=verifier,
        **extra,
    )
    return str(token["access_token"])


def headers(token: str | None, key: str | None) -> dict[str, str]:
    found = {}
    if token is not None:
        found["Authorization"] = f"Bearer {token}"
    if key is not None:
        found["X-Svc-Key"] = key
    return found


def owner_key(sandbox: Sandbox) -> str:
    """An API token of the organization that owns the seeded apps (the sandbox organization)."""
    return token_of(sandbox, "sandbox")


def send_body(
    recipient: str = "tigist", amount: int = 5000, key: str = "key-00001"
) -> dict[str, Any]:
    return {"recipientHandle": recipient, "amountMinor": amount, "idempotencyKey": key}


def wallets_state(sandbox: Sandbox) -> dict[str, Any]:
    """The wallet part of the state export (entries, transfers, keys)."""
    state: dict[str, Any] = sandbox.export()["services"]["wallets"]
    return state


def balance(http: FlaskClient, handle: str) -> int:
    found = http.get(f"/_sandbox/wallets/{handle}").json
    assert found is not None
    return int(found["availableMinor"])


IN_PROCESS_VERIFIER = "in-process-verifier-" + "v" * 30


def token_in_process(http: FlaskClient, sandbox: Sandbox, handle: str) -> str:
    """The code flow through the Flask client, without authlib (for in-process runs: the
    contract test and determinism, where every run has the same origin and issuer)."""
    app = seeded_app(sandbox)
    digest = hashlib.sha256(IN_PROCESS_VERIFIER.encode()).digest()
    params = {
        "response_type": "code",
        "client_id": app.client_id,
        "redirect_uri": app.redirect_uri,
        "scope": "openid wallet:read wallet:send",
        "state": "state-1",
        "code_challenge": base64.urlsafe_b64encode(digest).rstrip(b"=").decode(),
        "code_challenge_method": "S256",
    }
    body = {"userId": user_id(sandbox, handle), "params": params, "decision": "approve"}
    code = http.post("/_sandbox/identity/authorize", json=body).json["code"]  # type: ignore[index]
    answer = http.post(
        "/auth/oauth2/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": app.redirect_uri,
            "code_verifier": IN_PROCESS_VERIFIER,
            "client_id": app.client_id,
            "client_secret": app.secret,
            "resource": sandbox.settings.root("resource_url"),
        },
    )
    assert answer.status_code == 200, answer.json
    return str(answer.json["access_token"])  # type: ignore[index]
