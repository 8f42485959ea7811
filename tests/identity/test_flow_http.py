"""The whole code flow over real HTTP, as an integrator's app and a user's browser do it:
authlib's OAuth2 client (PKCE S256) against a served sandbox, the sign-in and consent pages
submitted as forms, every JWT checked with joserfc."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.jwk import KeySet

from svc_sandbox.pytest_plugin import RunningServer
from tests.identity.helpers import query_of, wallet_app


class Forms(HTMLParser):
    """The forms of a page: action and fields (hidden inputs, checked boxes, the buttons)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action"), "fields": [], "buttons": []})
        elif tag == "input" and self.forms:
            if a.get("type") == "checkbox" and ("checked" not in a or "disabled" in a):
                return
            self.forms[-1]["fields"].append((a.get("name"), a.get("value") or ""))
        elif tag == "button" and self.forms:
            self.forms[-1]["buttons"].append((a.get("name"), a.get("value")))


def form_of(html: str) -> dict[str, Any]:
    parser = Forms()
    parser.feed(html)
    assert len(parser.forms) == 1, html
    return parser.forms[0]


@pytest.fixture
def server(svc_server: RunningServer) -> RunningServer:
    svc_server.sandbox.settings.rate_limits = False
    return svc_server


def discovered(server: RunningServer) -> dict[str, Any]:
    url = server.url + "/auth/.well-known/openid-configuration"
    document: dict[str, Any] = requests.get(url, timeout=5).json()
    return document


def test_code_flow_with_pages_tokens_userinfo_and_refresh(server: RunningServer) -> None:
    sandbox = server.sandbox
    meta = discovered(server)
    issuer = sandbox.settings.issuer
    assert meta["issuer"] == issuer
    app = wallet_app(sandbox)
    resource = sandbox.settings.root("resource_url")
    client = OAuth2Session(
        app.client_id,
        app.secret,
        scope="openid profile email offline_access wallet:read",
        redirect_uri=app.redirect_uri,
        code_challenge_method="S256",
        token_endpoint_auth_method="client_secret_basic",
    )
    verifier = generate_token(64)
    nonce = generate_token(20)
    url, state = client.create_authorization_url(
        meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce
    )

    browser = requests.Session()
    sign_in = browser.get(url, timeout=5)
    assert sign_in.status_code == 200 and "Sign in" in sign_in.text
    form = form_of(sign_in.text)
    fields = dict(form["fields"])
    fields.update(login="abebe", password="abebe-sandbox-pass")
    consent = browser.post(urljoin(url, form["action"]), data=fields, timeout=5)
    assert consent.status_code == 200 and "Sandbox Wallet App" in consent.text
    for scope in ("profile", "email", "offline_access", "wallet:read"):
        assert f"<code>{scope}</code>" in consent.text
    form = form_of(consent.text)
    decided = browser.post(
        urljoin(url, form["action"]),
        data=[*form["fields"], ("decision", "approve")],
        allow_redirects=False,
        timeout=5,
    )
    assert decided.status_code == 303
    callback = decided.headers["Location"]
    assert callback.startswith(app.redirect_uri + "?")
    answer = query_of(callback)
    assert answer["state"] == state
    assert answer["iss"] == issuer

    token = client.fetch_token(
        meta["token_endpoint"],
        authorization_response=callback,
        code_verifier=verifier,
        resource=resource,
    )
    assert token["token_type"] == "Bearer" and token["expires_in"] == 3600
    assert token["scope"] == "openid profile email offline_access wallet:read"

    keys = KeySet.import_key_set(requests.get(meta["jwks_uri"], timeout=5).json())
    now = int(sandbox.now().timestamp())
    id_token = jwt.decode(token["id_token"], keys, algorithms=["RS256"])
    jwt.JWTClaimsRegistry(
        now=now,
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "value": app.client_id},
        nonce={"essential": True, "value": nonce},
        exp={"essential": True},
        sub={"essential": True, "value": sandbox.users.by_handle("abebe").id},  # type: ignore[union-attr]
    ).validate(id_token.claims)
    assert id_token.header["kid"] in {k["kid"] for k in keys.as_dict()["keys"]}
    assert id_token.claims["exp"] - id_token.claims["iat"] == 10 * 3600
    assert id_token.claims["email"] == "abebe@users.sandbox.test"

    access = jwt.decode(token["access_token"], keys, algorithms=["RS256"])
    assert access.header["typ"] == "at+jwt"
    assert access.claims["aud"] == resource and access.claims["client_id"] == app.client_id
    assert access.claims["exp"] - access.claims["iat"] == 3600

    info = client.get(meta["userinfo_endpoint"], timeout=5)
    assert info.status_code == 200
    namespace = sandbox.settings.claims_prefix
    assert info.json()[f"{namespace}/handle"] == "abebe"
    assert info.headers["Cache-Control"] == "no-store"

    refreshed = client.refresh_token(meta["token_endpoint"], resource=resource)
    assert refreshed["refresh_token"] != token["refresh_token"]
    assert client.get(meta["userinfo_endpoint"], timeout=5).status_code == 200

    # Remembered consent: the same browser goes straight back to the app.
    url2, state2 = client.create_authorization_url(
        meta["authorization_endpoint"], code_verifier=generate_token(64)
    )
    again = browser.get(url2, allow_redirects=False, timeout=5)
    assert again.status_code == 302
    assert query_of(again.headers["Location"])["state"] == state2


def test_declined_consent_redirects_with_access_denied(server: RunningServer) -> None:
    sandbox = server.sandbox
    meta = discovered(server)
    app = wallet_app(sandbox)
    client = OAuth2Session(
        app.client_id,
        app.secret,
        scope="openid profile",
        redirect_uri=app.redirect_uri,
        code_challenge_method="S256",
    )
    url, state = client.create_authorization_url(
        meta["authorization_endpoint"], code_verifier=generate_token(64)
    )
    browser = requests.Session()
    session = browser.post(
        server.url + f"/_sandbox/users/{sandbox.users.by_handle('tigist').id}/session",  # type: ignore[union-attr]
        json={},
        timeout=5,
    )
    assert session.status_code == 201
    consent = browser.get(url, timeout=5)
    form = form_of(consent.text)
    denied = browser.post(
        urljoin(url, form["action"]),
        data=[*form["fields"], ("decision", "deny")],
        allow_redirects=False,
        timeout=5,
    )
    answer = query_of(denied.headers["Location"])
    assert answer == {
        "error": "access_denied",
        "error_description": "The user declined to authorize this app",
        "state": state,
        "iss": sandbox.settings.issuer,
    }
