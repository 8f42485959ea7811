"""The identity client against the emulator over real HTTP, as an app uses it: discovery read at
run time, the authorization URL (PKCE S256), the user's decision played by the control plane,
the callback, tokens, userinfo, introspection, revocation, and ID tokens validated by the client
(pyjwt) and checked here independently with joserfc.

``IdentityClient`` and ``AsyncIdentityClient`` are held to one set of expectations: each test
runs once per form (tests/client/twins.py)."""

from __future__ import annotations

import base64
import hashlib
import inspect
import json
import re
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import flask
import httpx
import pytest
from flask import Flask, redirect, session
from joserfc import jwt
from joserfc.errors import BadSignatureError
from joserfc.jwk import KeySet
from werkzeug.wrappers import Response

from svc_sandbox.client import (
    AsyncIdentityClient,
    AuthorizationRequest,
    IdentityClient,
    SvcAuthenticationError,
    SvcClientError,
    SvcError,
    SvcIdTokenError,
    SvcTransportError,
)
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.testing.identity import scripted_callback
from tests.client.twins import (
    FORMS,
    Identity,
    close,
    identity_client,
    run,
    run_with,
    settle,
    sign_in,
)

SCOPES = ["openid", "profile", "email", "offline_access", "wallet:read"]


@dataclass(frozen=True)
class Apps:
    server: RunningServer
    redirect_uri: str
    confidential: tuple[str, str]
    public: str
    abebe: str

    def client(self, form: str, kind: str = "confidential", **options: Any) -> Identity:
        """``kind``: ``confidential`` (secret in the form), ``basic`` (secret by HTTP Basic),
        ``public`` (no secret: PKCE alone)."""
        client_id, secret = self.confidential
        if kind == "basic":
            options["auth_method"] = "client_secret_basic"
        if kind == "public":
            client_id, secret = self.public, None
        issuer = self.server.sandbox.settings.issuer
        return identity_client(
            form, client_id, secret, redirect_uri=self.redirect_uri, auth_url=issuer, **options
        )


@pytest.fixture
def apps(svc_server: RunningServer) -> Apps:
    sandbox = svc_server.sandbox
    sandbox.settings.rate_limits = False
    identity = sandbox.info()["identity"]
    app = next(a for a in identity["apps"] if a["clientType"] == "confidential")
    public = next(a for a in identity["apps"] if a["clientType"] == "public")
    user = sandbox.users.by_handle("abebe")
    assert user is not None
    return Apps(
        svc_server,
        app["redirectUris"][0],
        (app["clientId"], app["clientSecret"]),
        public["clientId"],
        user.id,
    )


def test_the_async_client_has_every_method_of_the_sync_one_as_a_coroutine() -> None:
    from svc_sandbox.client import IdentityClient

    methods = [n for n in vars(IdentityClient) if not n.startswith("_")]
    assert len(methods) == 10
    for name in methods:
        twin = getattr(AsyncIdentityClient, name)
        assert twin.__name__ == name and twin.__doc__ == getattr(IdentityClient, name).__doc__
        assert inspect.iscoroutinefunction(twin)
        assert not inspect.iscoroutinefunction(getattr(IdentityClient, name))
        assert inspect.signature(twin) == inspect.signature(getattr(IdentityClient, name))
    refresh = inspect.signature(AsyncIdentityClient.refresh)
    assert list(refresh.parameters) == ["self", "refresh_token", "resource"]
    assert refresh.return_annotation == "TokenSet"


@pytest.mark.parametrize("form", FORMS)
def test_the_authorization_url_asks_for_a_code_with_a_fresh_s256_challenge(
    apps: Apps, form: str
) -> None:
    async def scenario(idp: Identity) -> None:
        first = await settle(idp.authorization_url(SCOPES))
        second = await settle(idp.authorization_url(SCOPES))
        query = {k: v[0] for k, v in parse_qs(urlsplit(first.url).query).items()}
        digest = hashlib.sha256(first.code_verifier.encode()).digest()
        assert query == {
            "response_type": "code",
            "client_id": apps.confidential[0],
            "redirect_uri": apps.redirect_uri,
            "scope": " ".join(SCOPES),
            "state": first.state,
            "code_challenge": base64.urlsafe_b64encode(digest).rstrip(b"=").decode(),
            "code_challenge_method": "S256",
            "nonce": first.nonce,
        }
        assert 43 <= len(first.code_verifier) <= 128
        assert first.state != second.state and first.code_verifier != second.code_verifier
        with pytest.raises(ValueError, match="openid"):
            await settle(idp.authorization_url(["profile"]))
        with pytest.raises(ValueError, match="^scopes must be a list of scope names"):
            await settle(idp.authorization_url("openid profile"))  # a str is a Sequence[str]
        with pytest.raises(ValueError, match="^scopes: 'openid profile' is not one scope name"):
            await settle(idp.authorization_url(["openid profile"]))

    run_with(apps.client(form), scenario)


@pytest.mark.parametrize("kind", ["confidential", "basic", "public"])
@pytest.mark.parametrize("form", FORMS)
def test_the_code_flow_tokens_userinfo_refresh_introspect_revoke(
    apps: Apps, form: str, kind: str
) -> None:
    sandbox = apps.server.sandbox
    resource = sandbox.settings.root("resource_url")
    client_id = apps.public if kind == "public" else apps.confidential[0]

    async def scenario(idp: Identity) -> None:
        request, tokens = await sign_in(apps.server.url, idp, apps.abebe, SCOPES, resource=resource)
        assert tokens.token_type == "Bearer" and tokens.expires_in == 3600
        assert tokens.scopes == SCOPES and tokens.refresh_token and tokens.id_token

        claims = await settle(
            idp.validate_id_token(tokens.id_token, nonce=request.nonce, now=sandbox.now())
        )
        assert claims["sub"] == apps.abebe and claims["aud"] == client_id

        # The same token, checked independently of pyjwt.
        metadata = await settle(idp.discovery())
        jwks = KeySet.import_key_set(httpx.get(metadata.jwks_uri).json())
        decoded = jwt.decode(tokens.id_token, jwks, algorithms=["RS256"])
        jwt.JWTClaimsRegistry(
            now=int(sandbox.now().timestamp()),
            iss={"essential": True, "value": sandbox.settings.issuer},
            aud={"essential": True, "value": client_id},
            nonce={"essential": True, "value": request.nonce},
        ).validate(decoded.claims)
        assert decoded.claims == claims

        info = await settle(idp.userinfo(tokens.access_token))
        assert info.sub == apps.abebe and info.model_extra is not None
        assert info.model_extra["email"] and info.model_extra["name"]

        assert (await settle(idp.introspect(tokens.access_token))).active is True
        refreshed = await settle(idp.refresh(tokens.refresh_token, resource=resource))
        assert refreshed.refresh_token not in (None, tokens.refresh_token)  # rotated
        with pytest.raises(SvcClientError) as reused:
            await settle(idp.refresh(tokens.refresh_token, resource=resource))
        assert (reused.value.status, reused.value.code) == (400, "invalid_grant")
        assert reused.value.request_id

        await settle(idp.revoke(refreshed.access_token))
        assert (await settle(idp.introspect(refreshed.access_token))).active is False
        assert (await settle(idp.introspect("never-issued"))).active is False

    run_with(apps.client(form, kind), scenario)


def test_the_documented_sign_in_runs_as_flask_views_with_the_cookie_session(apps: Apps) -> None:
    """docs/testing.md's IdentityClient example as a Flask app: the request is kept in Flask's
    cookie session, which gives it back as a dict; the callback takes it as it comes."""
    sandbox = apps.server.sandbox
    wallet_resource = sandbox.settings.root("resource_url")
    idp = apps.client("sync")
    assert isinstance(idp, IdentityClient)
    web = Flask(__name__)
    web.secret_key = "a cookie-session key"

    @web.get("/login")
    def login_view() -> Response:
        request = idp.authorization_url(["openid", "profile", "offline_access", "wallet:read"])
        session["svc_login"] = request  # keep it until the callback: state, verifier, nonce
        return redirect(request.url)

    @web.get("/callback")
    def callback_view() -> dict[str, Any]:
        request_url = flask.request.url
        kept = session.pop("svc_login")
        login = AuthorizationRequest.from_session(kept)
        tokens = idp.exchange_callback(request_url, login, resource=wallet_resource)
        claims = idp.validate_id_token(tokens.id_token or "", nonce=login.nonce, now=sandbox.now())
        kept_as = type(kept).__name__
        return {"claims": claims, "id_token": tokens.id_token, "nonce": login.nonce, "as": kept_as}

    browser = web.test_client()
    sent = browser.get(apps.redirect_uri.replace("/callback", "/login"))
    assert sent.status_code == 302
    callback = scripted_callback(apps.server.url, apps.abebe, sent.headers["Location"])
    answer = browser.get(callback)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    signed_in = answer.get_json()
    assert signed_in["as"] == "dict" and signed_in["claims"]["sub"] == apps.abebe

    # The ID token, checked independently of pyjwt.
    decoded = jwt.decode(
        signed_in["id_token"], KeySet.import_key_set(sandbox_jwks(apps)), algorithms=["RS256"]
    )
    jwt.JWTClaimsRegistry(
        now=int(sandbox.now().timestamp()),
        iss={"essential": True, "value": sandbox.settings.issuer},
        aud={"essential": True, "value": apps.confidential[0]},
        sub={"essential": True, "value": apps.abebe},
        nonce={"essential": True, "value": signed_in["nonce"]},
    ).validate(decoded.claims)
    assert decoded.claims == signed_in["claims"]
    idp.close()


@pytest.mark.parametrize("form", FORMS)
def test_exchange_callback_takes_the_request_as_a_json_session_gives_it_back(
    apps: Apps, form: str
) -> None:
    async def scenario(idp: Identity) -> None:
        request = await settle(idp.authorization_url(["openid", "wallet:read"]))
        kept = json.loads(json.dumps(asdict(request)))  # what a JSON session stores
        assert kept["scopes"] == ["openid", "wallet:read"]
        callback = scripted_callback(apps.server.url, apps.abebe, request.url)
        tokens = await settle(idp.exchange_callback(callback, kept))
        assert tokens.id_token is not None
        now = apps.server.sandbox.now()
        claims = await settle(idp.validate_id_token(tokens.id_token, nonce=kept["nonce"], now=now))
        assert claims["sub"] == apps.abebe
        assert AuthorizationRequest.from_session(kept) == request

    run_with(apps.client(form), scenario)


GOOD_KEPT = {
    "url": "http://127.0.0.1:9/auth/oauth2/authorize?state=s",
    "state": "s",
    "code_verifier": "v" * 43,
    "nonce": None,
    "redirect_uri": "http://127.0.0.1:9/cb",
    "scopes": ["openid"],
}


@pytest.mark.parametrize(
    ("kept", "message"),
    [
        (
            {k: v for k, v in GOOD_KEPT.items() if k not in ("state", "nonce")},
            "missing state, nonce",
        ),
        ({**GOOD_KEPT, "extra": 1, "another": 2}, "unknown another, extra$"),
        (
            {"state": "s", "client": "x"},
            "missing url, code_verifier, nonce, redirect_uri, scopes; unknown client",
        ),
        ({**GOOD_KEPT, "scopes": "openid"}, "request.scopes must be a list of strings, not str"),
        ({**GOOD_KEPT, "state": ""}, "request.state must not be blank"),
        ({**GOOD_KEPT, "nonce": 7}, "request.nonce must be a string"),
        ({**GOOD_KEPT, "url": "/relative"}, "request.url must be an absolute http"),
        (["not", "a", "mapping"], "an AuthorizationRequest or a mapping of its fields, not list"),
    ],
)
@pytest.mark.parametrize("form", FORMS)
def test_a_kept_request_missing_extra_or_bad_fields_is_refused_before_any_request(
    form: str, kept: Any, message: str
) -> None:
    async def scenario(idp: Identity) -> None:
        with pytest.raises(ValueError, match=message):
            await settle(idp.exchange_callback("http://127.0.0.1:9/cb?state=s&code=c", kept))

    # Port 9 (discard) has no listener: a request would fail with a transport error.
    nowhere = "http://127.0.0.1:9"
    run_with(
        identity_client(form, "app", redirect_uri=nowhere + "/cb", auth_url=nowhere + "/auth"),
        scenario,
    )


@pytest.mark.parametrize("form", FORMS)
def test_a_tampered_expired_or_foreign_id_token_is_refused(apps: Apps, form: str) -> None:
    sandbox = apps.server.sandbox

    async def scenario(idp: Identity) -> None:
        _, tokens = await sign_in(apps.server.url, idp, apps.abebe, ["openid"])
        assert tokens.id_token is not None
        now = sandbox.now()
        header, _, signature = tokens.id_token.split(".")
        claims = jwt.decode(tokens.id_token, KeySet.import_key_set(sandbox_jwks(apps))).claims
        # Another subject under the original signature: joserfc refuses it too.
        forged_claims = {**claims, "sub": "someone-else"}
        forged = base64.urlsafe_b64encode(json.dumps(forged_claims).encode()).rstrip(b"=")
        tampered = f"{header}.{forged.decode()}.{signature}"
        with pytest.raises(BadSignatureError):
            jwt.decode(tampered, KeySet.import_key_set(sandbox_jwks(apps)))
        with pytest.raises(SvcIdTokenError, match="invalid ID token") as refused:
            await settle(idp.validate_id_token(tampered, now=now))
        assert refused.value.code == "invalid_id_token"
        with pytest.raises(SvcIdTokenError, match="nonce"):
            await settle(idp.validate_id_token(tokens.id_token, nonce="another", now=now))
        with pytest.raises(SvcIdTokenError, match="expired"):
            await settle(idp.validate_id_token(tokens.id_token, now=now + timedelta(hours=11)))
        with pytest.raises(SvcIdTokenError, match="not a JWT"):
            await settle(idp.validate_id_token("not-a-token", now=now))
        public = apps.client(form, "public")
        with pytest.raises(SvcIdTokenError, match="(?i)audience"):
            await settle(public.validate_id_token(tokens.id_token, now=now))
        await close(public)

    run_with(apps.client(form), scenario)


def sandbox_jwks(apps: Apps) -> dict[str, Any]:
    issuer = apps.server.sandbox.settings.issuer
    metadata = httpx.get(issuer + "/.well-known/openid-configuration").json()
    document: dict[str, Any] = httpx.get(metadata["jwks_uri"]).json()
    return document


@pytest.mark.parametrize("form", FORMS)
def test_keys_rotated_after_the_client_cached_them_are_read_again(apps: Apps, form: str) -> None:
    sandbox = apps.server.sandbox

    async def scenario(idp: Identity) -> None:
        before = {k.key_id for k in (await settle(idp.jwks())).keys}
        sandbox.signing_keys.rotate()
        _, tokens = await sign_in(apps.server.url, idp, apps.abebe, ["openid"])
        assert tokens.id_token is not None
        claims = await settle(idp.validate_id_token(tokens.id_token, now=sandbox.now()))
        assert claims["sub"] == apps.abebe
        assert {k.key_id for k in (await settle(idp.jwks())).keys} > before

    run_with(apps.client(form), scenario)


@pytest.mark.parametrize("form", FORMS)
def test_the_same_errors_in_both_forms(apps: Apps, form: str) -> None:
    sandbox = apps.server.sandbox

    async def scenario(idp: Identity) -> None:
        request = await settle(idp.authorization_url(SCOPES))
        denied = scripted_callback(apps.server.url, apps.abebe, request.url, decision="deny")
        with pytest.raises(SvcClientError) as declined:
            await settle(idp.exchange_callback(denied, request))
        assert declined.value.code == "access_denied"

        other = await settle(idp.authorization_url(SCOPES))
        callback = scripted_callback(apps.server.url, apps.abebe, other.url)
        with pytest.raises(SvcError) as mismatch:
            await settle(idp.exchange_callback(callback, request))  # another attempt's state
        assert mismatch.value.code == "state_mismatch"

        # RFC 9207 §2.4: the callback must name this issuer; one naming another, or none
        # (a mix-up with an issuer that sends none), is refused before its code is used.
        mine = scripted_callback(apps.server.url, apps.abebe, request.url)
        assert f"iss={quote(sandbox.settings.issuer, safe='')}" in mine
        for forged, said in (
            (mine.replace("iss=", "iss=x"), "the callback carries iss 'x"),
            (re.sub(r"&?iss=[^&]*", "", mine), "the callback carries no iss"),
        ):
            with pytest.raises(SvcError) as mixed_up:
                await settle(idp.exchange_callback(forged, request))
            assert mixed_up.value.code == "issuer_mismatch" and said in mixed_up.value.message
        await settle(idp.exchange_callback(mine, request))  # the code was never spent

        with pytest.raises(SvcClientError) as bad_code:
            await settle(idp.exchange_code("no-such-code", request.code_verifier))
        assert (bad_code.value.status, bad_code.value.code) == (400, "invalid_grant")

        wrong = identity_client(
            form,
            apps.confidential[0],
            "cs_wrong",
            redirect_uri=apps.redirect_uri,
            auth_url=sandbox.settings.issuer,
        )
        with pytest.raises(SvcAuthenticationError) as refused:
            await settle(wrong.introspect("anything"))
        assert (refused.value.status, refused.value.code) == (401, "invalid_client")
        assert refused.value.request_id
        await close(wrong)

        nowhere = identity_client(
            form, "app", redirect_uri=apps.redirect_uri, auth_url="http://127.0.0.1:9/auth"
        )
        with pytest.raises(SvcTransportError) as unreachable:
            await settle(nowhere.discovery())
        assert unreachable.value.code == "connection_error"
        assert "GET /auth/.well-known/openid-configuration" in unreachable.value.message
        await close(nowhere)

    run_with(apps.client(form), scenario)


@pytest.mark.parametrize("form", FORMS)
def test_bad_arguments_never_leave_the_process(form: str) -> None:
    async def scenario(idp: Identity) -> None:
        with pytest.raises(ValueError, match="refresh_token"):
            await settle(idp.refresh(""))
        with pytest.raises(ValueError, match="token"):
            await settle(idp.introspect(""))

    # Port 9 (discard) has no listener: a request would fail with a transport error.
    nowhere = "http://127.0.0.1:9"
    run_with(
        identity_client(form, "app", redirect_uri=nowhere + "/cb", auth_url=nowhere + "/auth"),
        scenario,
    )
    with pytest.raises(ValueError, match="auth_method"):
        identity_client(form, "app", redirect_uri="http://x.test/cb", auth_method="none")


def test_the_async_client_uses_a_given_pool_and_leaves_it_open(apps: Apps) -> None:
    async def scenario() -> None:
        async with httpx.AsyncClient() as http:
            async with apps.client("async", http=http) as idp:
                metadata = await idp.discovery()
                assert metadata.issuer == apps.server.sandbox.settings.issuer
            assert not http.is_closed
            async with apps.client("async") as own:
                await own.discovery()
                pool = own._client
                assert pool is not None
            assert pool.is_closed and own._client is None

    run(scenario)
