"""``IdentityClient`` and ``AsyncIdentityClient``: an app's side of the identity provider (spec
§4, §5): discovery read at run time, the authorization URL (PKCE S256, ``state``, ``nonce``), the
callback, code exchange, refresh, userinfo, introspection, revocation and ID-token validation
against the JWKS.

    idp = IdentityClient(client_id, client_secret, redirect_uri="https://app.example/callback")
    request = idp.authorization_url(["openid", "profile", "wallet:read"])
    # ... the browser goes to request.url and comes back to the callback ...
    tokens = idp.exchange_callback(callback_url, request, resource=WALLET_RESOURCE)
    claims = idp.validate_id_token(tokens.id_token, nonce=request.nonce)

The async twin has the same constructor (``http=`` an ``httpx.AsyncClient``) and the same
methods, awaited; ``authorization_url`` is awaited too, as it reads the discovery document on
first use. Both run the same flows (``flows.py``): every rule below is written once.

Signatures are checked by pyjwt against the provider's published keys; nothing here does
cryptography by hand. Errors are ``SvcError``s whose ``code`` is the OAuth ``error``.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Literal, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import jwt
from pydantic import BaseModel

from svc_sandbox.client import arguments as check
from svc_sandbox.client.commerce import AsyncHttp, H, HttpPool, SyncHttp
from svc_sandbox.client.errors import SvcClientError, SvcError
from svc_sandbox.client.flows import Ask, Flow, awaiting, blocking
from svc_sandbox.client.models import (
    Introspection,
    OAuthDocument,
    ProviderMetadata,
    TokenSet,
    UserInfo,
)
from svc_sandbox.core.authorize import REQUEST_PARAMS
from svc_sandbox.core.clock import wall_now

M = TypeVar("M", bound=BaseModel)

DEFAULT_AUTH_URL = "http://127.0.0.1:8700/auth"
#: Spec §5.3: a code_verifier is 43..128 characters.
VERIFIER_BYTES = 48
#: Seconds of clock difference tolerated when checking ``exp``.
LEEWAY = 60.0

AuthMethod = Literal["client_secret_post", "client_secret_basic"]


class SvcIdTokenError(SvcError):
    """An ID token that does not validate (code ``invalid_id_token``; the message says why)."""


def pkce_pair() -> tuple[str, str]:
    """A fresh ``code_verifier`` and its S256 ``code_challenge`` (RFC 7636)."""
    verifier = secrets.token_urlsafe(VERIFIER_BYTES)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class AuthorizationRequest:
    """One attempt (spec §5.3: a fresh verifier and state per attempt): keep it until the
    callback, which must carry the same ``state``."""

    url: str
    state: str
    code_verifier: str
    nonce: str | None
    redirect_uri: str
    scopes: tuple[str, ...]

    @classmethod
    def from_session(cls, kept: AuthorizationRequest | Mapping[str, Any]) -> AuthorizationRequest:
        """The request as it comes back from where the app kept it until the callback: itself
        (a session that pickles), or the mapping of its fields a session that stores JSON gives
        back (Flask's cookie session: a dict, ``scopes`` a list). A ``ValueError`` names the
        missing, unknown or malformed fields."""
        if isinstance(kept, AuthorizationRequest):
            return kept
        if not isinstance(kept, Mapping):
            raise ValueError(
                "request must be an AuthorizationRequest or a mapping of its fields, "
                f"not {type(kept).__name__}"
            )
        names = [f.name for f in fields(cls)]
        missing = [name for name in names if name not in kept]
        unknown = sorted(str(key) for key in kept if key not in names)
        if missing or unknown:
            problems = [f"missing {', '.join(missing)}"] if missing else []
            problems += [f"unknown {', '.join(unknown)}"] if unknown else []
            raise ValueError(
                f"request must have the fields of an AuthorizationRequest: {'; '.join(problems)}"
            )
        scopes, nonce = kept["scopes"], kept["nonce"]
        if isinstance(scopes, str) or not isinstance(scopes, Sequence):
            raise ValueError(
                f"request.scopes must be a list of strings, not {type(scopes).__name__}"
            )
        return cls(
            url=check.url("request.url", kept["url"]),
            state=check.text("request.state", kept["state"], 1),
            code_verifier=check.text("request.code_verifier", kept["code_verifier"], 1),
            nonce=None if nonce is None else check.text("request.nonce", nonce, 1),
            redirect_uri=check.url("request.redirect_uri", kept["redirect_uri"]),
            scopes=tuple(check.text("request.scopes", scope, 1) for scope in scopes),
        )


class _IdentityRules(HttpPool[H]):
    """What both identity clients are: the settings, the cached discovery document and keys,
    and every operation as a flow (``flows.py``) the sync or the async sender drives."""

    def __init__(
        self,
        client_id: str,
        client_secret: str | None = None,
        *,
        redirect_uri: str,
        auth_url: str | None = None,
        auth_method: AuthMethod = "client_secret_post",
        timeout: float = 30.0,
        http: H | None = None,
    ) -> None:
        self.client_id = check.text("client_id", client_id, 1)
        if client_secret is not None:
            check.text("client_secret", client_secret, 1)
        self.client_secret = client_secret
        self.redirect_uri = check.url("redirect_uri", redirect_uri)
        issuer = auth_url or os.environ.get("SVC_AUTH_URL") or DEFAULT_AUTH_URL
        self.issuer = check.base_url("auth_url", issuer).rstrip("/")
        self.auth_method = check.choice(
            "auth_method", auth_method, ("client_secret_post", "client_secret_basic")
        )
        self.timeout = check.seconds("timeout", timeout)
        self._use_http(http)
        self._metadata: ProviderMetadata | None = None
        self._keys: jwt.PyJWKSet | None = None

    # --- discovery and keys -------------------------------------------------------------

    def _discovery(self, *, refresh: bool = False) -> Flow[ProviderMetadata]:
        """The provider metadata, read at run time (once; ``refresh=True`` reads it again).
        Its ``issuer`` must be ``auth_url`` exactly (OpenID Connect Discovery §4.3)."""
        if self._metadata is None or refresh:
            url = self.issuer + "/.well-known/openid-configuration"
            metadata = yield from Ask("GET", url, ProviderMetadata)
            if metadata.issuer != self.issuer:
                raise SvcError(
                    f"the discovery document names issuer {metadata.issuer!r}, not {self.issuer!r}",
                    code="issuer_mismatch",
                )
            self._metadata = metadata
        return self._metadata

    def _jwks(self, *, refresh: bool = False) -> Flow[jwt.PyJWKSet]:
        """The provider's public signing keys (cached; read again for an unknown ``kid``:
        keys rotate, spec §4)."""
        if self._keys is None or refresh:
            metadata = yield from self._discovery()
            document = yield from Ask("GET", metadata.jwks_uri, OAuthDocument)
            try:
                self._keys = jwt.PyJWKSet.from_dict(document.model_dump())
            except jwt.PyJWTError as exc:
                raise SvcError(f"the JWKS is unusable: {exc}", code="invalid_response") from exc
        return self._keys

    # --- the authorization step -----------------------------------------------------------

    def _authorization_url(
        self,
        scopes: Sequence[str],
        *,
        state: str | None = None,
        nonce: str | None = None,
        extra: Mapping[str, str] | None = None,
    ) -> Flow[AuthorizationRequest]:
        """The URL to send the user's browser to, with a fresh PKCE verifier (S256), a fresh
        ``state`` and, when ``openid`` is asked for, a fresh ``nonce`` (unless given)."""
        if isinstance(scopes, str):
            raise ValueError(
                f"scopes must be a list of scope names such as ['openid', 'profile'], not the "
                f"string {scopes!r}"
            )
        if not isinstance(scopes, Sequence):
            raise ValueError(
                "scopes must be a list of scope names such as ['openid', 'profile'], not "
                f"{type(scopes).__name__}"
            )
        wanted = tuple(check.text("scopes", s, 1) for s in scopes)
        for scope in wanted:
            # RFC 6749 §3.3: a scope token has no space; the request joins them with one.
            if any(c.isspace() for c in scope):
                raise ValueError(f"scopes: {scope!r} is not one scope name (a list item each)")
        if "openid" not in wanted:
            raise ValueError("scopes must include openid (spec §5)")
        added = check.string_map("extra", extra or {})
        # What the request object holds and checks later (state, PKCE, nonce) is the client's:
        # an ``extra`` state made a URL that its own callback check then refused.
        owned = sorted(set(added) & set(REQUEST_PARAMS))
        if owned:
            raise ValueError(
                f"extra must not set {', '.join(owned)}: the client sets it (pass state= or "
                "nonce= for your own)"
            )
        verifier, challenge = pkce_pair()
        state = state if state is not None else secrets.token_urlsafe(24)
        nonce = nonce if nonce is not None else secrets.token_urlsafe(24)
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "scope": " ".join(wanted),
            "state": check.text("state", state, 1),
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "nonce": check.text("nonce", nonce, 1),
            **added,
        }
        endpoint = (yield from self._discovery()).authorization_endpoint
        url = endpoint + ("&" if "?" in endpoint else "?") + urlencode(query)
        return AuthorizationRequest(url, state, verifier, nonce, self.redirect_uri, wanted)

    def _exchange_callback(
        self,
        callback_url: str,
        request: AuthorizationRequest | Mapping[str, Any],
        *,
        resource: str | None = None,
    ) -> Flow[TokenSet]:
        """Checks the redirect back (``state`` is this attempt's, ``iss`` is the issuer, no
        ``error``) and exchanges its code. A declined consent raises code ``access_denied``.
        ``request`` is the ``AuthorizationRequest``, or the mapping of its fields a web session
        gives back."""
        request = AuthorizationRequest.from_session(request)
        answer = dict(parse_qsl(urlsplit(callback_url).query))
        if answer.get("state") != request.state:
            raise SvcError("the callback's state is not this attempt's", code="state_mismatch")
        # RFC 9207 §2.4: the issuer advertises authorization_response_iss_parameter_supported,
        # so a callback without iss may come from another issuer (mix-up): refused too.
        if answer.get("iss") != self.issuer:
            got = f"iss {answer['iss']!r}" if "iss" in answer else "no iss"
            raise SvcError(
                f"the callback carries {got}, not {self.issuer!r}", code="issuer_mismatch"
            )
        if "error" in answer:
            raise SvcClientError(
                answer.get("error_description") or answer["error"], code=answer["error"]
            )
        if not answer.get("code"):
            raise SvcError("the callback carries no code", code="invalid_response")
        return (
            yield from self._exchange_code(
                answer["code"],
                request.code_verifier,
                redirect_uri=request.redirect_uri,
                resource=resource,
            )
        )

    # --- the token endpoint ---------------------------------------------------------------

    def _exchange_code(
        self,
        code: str,
        code_verifier: str,
        *,
        redirect_uri: str | None = None,
        resource: str | None = None,
    ) -> Flow[TokenSet]:
        """Grant ``authorization_code``. ``resource`` ({resource_url}) is needed for wallet
        tokens; without it the access token is opaque."""
        form = {
            "grant_type": "authorization_code",
            "code": check.text("code", code, 1),
            "redirect_uri": redirect_uri or self.redirect_uri,
            "code_verifier": check.text("code_verifier", code_verifier, 1),
        }
        return (yield from self._token(form, resource))

    def _refresh(self, refresh_token: str, *, resource: str | None = None) -> Flow[TokenSet]:
        """Grant ``refresh_token``; the answer carries the rotated refresh token. Send
        ``resource`` on every refresh to keep the token wallet-bound (spec §4)."""
        form = {
            "grant_type": "refresh_token",
            "refresh_token": check.text("refresh_token", refresh_token, 1),
        }
        return (yield from self._token(form, resource))

    def _token(self, form: dict[str, str], resource: str | None) -> Flow[TokenSet]:
        if resource is not None:
            form["resource"] = check.url("resource", resource)
        endpoint = (yield from self._discovery()).token_endpoint
        return (yield from self._form(endpoint, form, TokenSet))

    # --- userinfo, introspection, revocation -----------------------------------------------

    def _userinfo(self, access_token: str) -> Flow[UserInfo]:
        """The claims of the scopes granted to ``access_token``."""
        headers = {"Authorization": f"Bearer {check.bearer_token('access_token', access_token)}"}
        endpoint = yield from self._endpoint("userinfo_endpoint")
        return (yield from Ask("GET", endpoint, UserInfo, headers=headers))

    def _introspect(self, token: str) -> Flow[Introspection]:
        """``active`` is false for a revoked, expired or unknown token."""
        form = {"token": check.text("token", token, 1)}
        endpoint = yield from self._endpoint("introspection_endpoint")
        return (yield from self._form(endpoint, form, Introspection))

    def _revoke(self, token: str) -> Flow[None]:
        """Revokes ``token`` (RFC 7009: an unknown token is not an error)."""
        form = {"token": check.text("token", token, 1)}
        endpoint = yield from self._endpoint("revocation_endpoint")
        yield from self._form(endpoint, form, OAuthDocument, empty_ok=True)

    # --- ID tokens ------------------------------------------------------------------------

    def _validate_id_token(
        self, id_token: str, *, nonce: str | None = None, now: datetime | None = None
    ) -> Flow[dict[str, Any]]:
        """The claims of a valid ID token (spec §5.7): signature against the JWKS, ``iss`` the
        issuer, ``aud`` this client, ``exp`` after ``now`` (default: this machine's clock; a
        test passes the sandbox's), ``nonce`` the one sent. Else ``SvcIdTokenError``."""
        metadata = yield from self._discovery()
        try:
            kid = jwt.get_unverified_header(check.text("id_token", id_token, 1)).get("kid")
        except jwt.PyJWTError as exc:
            raise _invalid(f"not a JWT: {exc}") from exc
        key = yield from self._signing_key(kid)
        try:
            # pyjwt checks the signature, iss and aud; exp against the caller's clock below.
            claims: dict[str, Any] = jwt.decode(
                id_token,
                key.key,
                algorithms=metadata.id_token_signing_alg_values_supported,
                audience=self.client_id,
                issuer=self.issuer,
                options={
                    "verify_exp": False,
                    "verify_iat": False,
                    "verify_nbf": False,
                    "require": ["iss", "aud", "exp", "iat", "sub"],
                },
            )
        except jwt.PyJWTError as exc:
            raise _invalid(str(exc)) from exc
        instant = (now or wall_now()).timestamp()
        if not isinstance(claims["exp"], int | float) or claims["exp"] + LEEWAY <= instant:
            raise _invalid("the ID token has expired")
        if nonce is not None and claims.get("nonce") != nonce:
            raise _invalid("the ID token's nonce is not the one sent")
        return claims

    def _signing_key(self, kid: Any) -> Flow[jwt.PyJWK]:
        for refresh in (False, True):
            keys = yield from self._jwks(refresh=refresh)
            found = next((k for k in keys.keys if k.key_id == kid), None)
            if found is not None:
                return found
        raise _invalid(f"no published key has kid {kid!r}")

    # --- requests ---------------------------------------------------------------------------

    def _endpoint(self, name: str) -> Flow[str]:
        url = getattr((yield from self._discovery()), name)
        if not url:
            raise SvcError(f"the provider publishes no {name}", code="unsupported")
        return str(url)

    def _form(
        self, url: str, form: dict[str, str], model: type[M], *, empty_ok: bool = False
    ) -> Ask[M]:
        """A form POST with the client's credentials (spec §4: client_id and client_secret in
        the form, or HTTP Basic)."""
        if self.client_secret is not None and self.auth_method == "client_secret_basic":
            basic = (self.client_id, self.client_secret)
            return Ask("POST", url, model, form=form, basic=basic, empty_ok=empty_ok)
        form = {**form, "client_id": self.client_id}
        if self.client_secret is not None:
            form["client_secret"] = self.client_secret
        return Ask("POST", url, model, form=form, empty_ok=empty_ok)


class IdentityClient(SyncHttp, _IdentityRules[httpx.Client]):
    """A registered app (``client_id``; ``client_secret`` for a confidential one, None for a
    public one) of the identity provider at ``auth_url`` (the issuer; default env
    ``SVC_AUTH_URL``, else the local emulator). ``close()`` or ``with`` closes its connections
    (unless ``http`` was given)."""

    discovery = blocking(_IdentityRules._discovery)
    jwks = blocking(_IdentityRules._jwks)
    authorization_url = blocking(_IdentityRules._authorization_url)
    exchange_callback = blocking(_IdentityRules._exchange_callback)
    exchange_code = blocking(_IdentityRules._exchange_code)
    refresh = blocking(_IdentityRules._refresh)
    userinfo = blocking(_IdentityRules._userinfo)
    introspect = blocking(_IdentityRules._introspect)
    revoke = blocking(_IdentityRules._revoke)
    validate_id_token = blocking(_IdentityRules._validate_id_token)


class AsyncIdentityClient(AsyncHttp, _IdentityRules[httpx.AsyncClient]):
    """The async twin of ``IdentityClient``: the same constructor (``http=`` an
    ``httpx.AsyncClient``), the same methods awaited, ``aclose()`` or ``async with``."""

    discovery = awaiting(_IdentityRules._discovery)
    jwks = awaiting(_IdentityRules._jwks)
    authorization_url = awaiting(_IdentityRules._authorization_url)
    exchange_callback = awaiting(_IdentityRules._exchange_callback)
    exchange_code = awaiting(_IdentityRules._exchange_code)
    refresh = awaiting(_IdentityRules._refresh)
    userinfo = awaiting(_IdentityRules._userinfo)
    introspect = awaiting(_IdentityRules._introspect)
    revoke = awaiting(_IdentityRules._revoke)
    validate_id_token = awaiting(_IdentityRules._validate_id_token)


def _invalid(reason: str) -> SvcIdTokenError:
    return SvcIdTokenError(f"invalid ID token: {reason}", code="invalid_id_token")
