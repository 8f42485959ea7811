"""What the wallet tests share: real access tokens from the identity provider, obtained as an
integrator's app does (authlib's OAuth2 client, PKCE S256, resource = {resource_url}), with the
user's approval given through the control plane's scripted authorize step."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from flask.testing import FlaskClient
from requests.structures import CaseInsensitiveDict

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


class FlaskAdapter(requests.adapters.BaseAdapter):
    """A requests transport that hands each request to a Flask test client: the OAuth client
    (authlib, over requests) talks to the sandbox in process, without a socket."""

    def __init__(self, client: FlaskClient) -> None:
        super().__init__()
        self.client = client

    def send(self, request: requests.PreparedRequest, **_: Any) -> requests.Response:  # type: ignore[override]
        url = urlsplit(request.url or "")
        answer = self.client.open(
            url.path,
            method=request.method or "GET",
            query_string=url.query,
            headers=dict(request.headers),
            data=request.body,
        )
        response = requests.Response()
        response.status_code = answer.status_code
        response.headers = CaseInsensitiveDict(dict(answer.headers))
        response._content = answer.data
        response.encoding = "utf-8"
        response.url = request.url or ""
        response.request = request
        return response

    def close(self) -> None:
        pass


def access_token(
    transport: FlaskClient | str,
    sandbox: Sandbox,
    handle: str = "abebe",
    scope: str = SEND,
    app: App | None = None,
    resource: bool = True,
) -> str:
    """The code flow as an integrator's app runs it, with authlib's OAuth2 client (PKCE S256):
    in process through a Flask client, or over HTTP when ``transport`` is a served origin."""
    app = app or seeded_app(sandbox)
    client = OAuth2Session(
        app.client_id,
        app.secret,
        scope=scope,
        redirect_uri=app.redirect_uri,
        code_challenge_method="S256",
        token_endpoint_auth_method="client_secret_basic" if app.secret else "none",
    )
    origin = sandbox.settings.origin
    if isinstance(transport, str):
        origin = transport
    else:
        client.mount("http://", FlaskAdapter(transport))
    discovery = origin + "/auth/.well-known/openid-configuration"
    meta = client.get(discovery, timeout=10, withhold_token=True).json()
    verifier = generate_token(64)
    url, _ = client.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier)
    decision = client.post(
        origin + "/_sandbox/identity/authorize",
        json={"userId": user_id(sandbox, handle), "url": url, "decision": "approve"},
        timeout=10,
        withhold_token=True,
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


def sender(http: FlaskClient, sandbox: Sandbox, handle: str = "abebe") -> dict[str, str]:
    """Both factors of a send for ``handle`` (a real token through the seeded app), the token
    endpoint's rate limit switched off (tests outside tests/wallet, without its fixtures)."""
    sandbox.settings.rate_limits = False
    return headers(access_token(http, sandbox, handle, scope=SEND), owner_key(sandbox))


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
    return str(token_answer_in_process(http, sandbox, handle)["access_token"])


def token_answer_in_process(
    http: FlaskClient, sandbox: Sandbox, handle: str, scope: str = "openid wallet:read wallet:send"
) -> dict[str, Any]:
    """The token endpoint's whole answer of that code flow (ID token included)."""
    app = seeded_app(sandbox)
    digest = hashlib.sha256(IN_PROCESS_VERIFIER.encode()).digest()
    params = {
        "response_type": "code",
        "client_id": app.client_id,
        "redirect_uri": app.redirect_uri,
        "scope": scope,
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
    return dict(answer.json)  # type: ignore[arg-type]
