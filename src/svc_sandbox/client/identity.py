"""``IdentityClient``: an app's side of the identity provider (spec §4, §5): discovery read at
run time, the authorization URL (PKCE S256, ``state``, ``nonce``), the callback, code exchange,
refresh, userinfo, introspection, revocation and ID-token validation against the JWKS.

    idp = IdentityClient(client_id, client_secret, redirect_uri="https://app.example/callback")
    request = idp.authorization_url(["openid", "profile", "wallet:read"])
    # ... the browser goes to request.url and comes back to the callback ...
    tokens = idp.exchange_callback(callback_url, request, resource=WALLET_RESOURCE)
    claims = idp.validate_id_token(tokens.id_token, nonce=request.nonce)

Signatures are checked by pyjwt against the provider's published keys; nothing here does
cryptography by hand. Errors are ``SvcError``s whose ``code`` is the OAuth ``error``.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import jwt
from pydantic import BaseModel

from svc_sandbox.client import arguments as check
from svc_sandbox.client.commerce import SyncHttp, exchange
from svc_sandbox.client.errors import SvcClientError, SvcError, from_coded_answer
from svc_sandbox.client.models import (
    Introspection,
    OAuthDocument,
    ProviderMetadata,
    TokenSet,
    UserInfo,
)
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


class IdentityClient(SyncHttp):
    """A registered app (``client_id``; ``client_secret`` for a confidential one, None for a
    public one) of the identity provider at ``auth_url`` (the issuer; default env
    ``SVC_AUTH_URL``, else the local emulator)."""

    def __init__(
        self,
        client_id: str,
        client_secret: str | None = None,
        *,
        redirect_uri: str,
        auth_url: str | None = None,
        auth_method: AuthMethod = "client_secret_post",
        timeout: float = 30.0,
        http: httpx.Client | None = None,
    ) -> None:
        self.client_id = check.text("client_id", client_id, 1)
        if client_secret is not None:
            check.text("client_secret", client_secret, 1)
        self.client_secret = client_secret
        self.redirect_uri = check.url("redirect_uri", redirect_uri)
        issuer = auth_url or os.environ.get("SVC_AUTH_URL") or DEFAULT_AUTH_URL
        self.issuer = check.url("auth_url", issuer).rstrip("/")
        self.auth_method = check.choice(
            "auth_method", auth_method, ("client_secret_post", "client_secret_basic")
        )
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout = float(timeout)
        self._use_http(http)
        self._metadata: ProviderMetadata | None = None
        self._keys: jwt.PyJWKSet | None = None

    # --- discovery and keys -------------------------------------------------------------

    def discovery(self, *, refresh: bool = False) -> ProviderMetadata:
        """The provider metadata, read at run time (once; ``refresh=True`` reads it again).
        Its ``issuer`` must be ``auth_url`` exactly (OpenID Connect Discovery §4.3)."""
        if self._metadata is None or refresh:
            url = self.issuer + "/.well-known/openid-configuration"
            metadata = self._send("GET", url, ProviderMetadata)
            if metadata.issuer != self.issuer:
                raise SvcError(
                    f"the discovery document names issuer {metadata.issuer!r}, not {self.issuer!r}",
                    code="issuer_mismatch",
                )
            self._metadata = metadata
        return self._metadata

    def jwks(self, *, refresh: bool = False) -> jwt.PyJWKSet:
        """The provider's public signing keys (cached; read again for an unknown ``kid``:
        keys rotate, spec §4)."""
        if self._keys is None or refresh:
            document = self._send("GET", self.discovery().jwks_uri, OAuthDocument)
            try:
                self._keys = jwt.PyJWKSet.from_dict(document.model_dump())
            except jwt.PyJWTError as exc:
                raise SvcError(f"the JWKS is unusable: {exc}", code="invalid_response") from exc
        return self._keys

    # --- the authorization step -----------------------------------------------------------

    def authorization_url(
        self,
        scopes: Sequence[str],
        *,
        state: str | None = None,
        nonce: str | None = None,
        extra: Mapping[str, str] | None = None,
    ) -> AuthorizationRequest:
        """The URL to send the user's browser to, with a fresh PKCE verifier (S256), a fresh
        ``state`` and, when ``openid`` is asked for, a fresh ``nonce`` (unless given)."""
        wanted = tuple(check.text("scopes", s, 1) for s in scopes)
        if "openid" not in wanted:
            raise ValueError("scopes must include openid (spec §5)")
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
            **dict(extra or {}),
        }
        endpoint = self.discovery().authorization_endpoint
        url = endpoint + ("&" if "?" in endpoint else "?") + urlencode(query)
        return AuthorizationRequest(url, state, verifier, nonce, self.redirect_uri, wanted)

    def exchange_callback(
        self, callback_url: str, request: AuthorizationRequest, *, resource: str | None = None
    ) -> TokenSet:
        """Checks the redirect back (``state`` is this attempt's, ``iss`` is the issuer, no
        ``error``) and exchanges its code. A declined consent raises code ``access_denied``."""
        answer = dict(parse_qsl(urlsplit(callback_url).query))
        if answer.get("state") != request.state:
            raise SvcError("the callback's state is not this attempt's", code="state_mismatch")
        if "iss" in answer and answer["iss"] != self.issuer:
            raise SvcError(
                f"the callback's iss {answer['iss']!r} is not {self.issuer!r}",
                code="issuer_mismatch",
            )
        if "error" in answer:
            raise SvcClientError(
                answer.get("error_description") or answer["error"], code=answer["error"]
            )
        if not answer.get("code"):
            raise SvcError("the callback carries no code", code="invalid_response")
        return self.exchange_code(
            answer["code"],
            request.code_verifier,
            redirect_uri=request.redirect_uri,
            resource=resource,
        )

    # --- the token endpoint ---------------------------------------------------------------

    def exchange_code(
        self,
        code: str,
        code_verifier: str,
        *,
        redirect_uri: str | None = None,
        resource: str | None = None,
    ) -> TokenSet:
        """Grant ``authorization_code``. ``resource`` ({resource_url}) is needed for wallet
        tokens; without it the access token is opaque."""
        form = {
            "grant_type": "authorization_code",
            "code": check.text("code", code, 1),
            "redirect_uri": redirect_uri or self.redirect_uri,
            "code_verifier": check.text("code_verifier", code_verifier, 1),
        }
        return self._token(form, resource)

    def refresh(self, refresh_token: str, *, resource: str | None = None) -> TokenSet:
        """Grant ``refresh_token``; the answer carries the rotated refresh token. Send
        ``resource`` on every refresh to keep the token wallet-bound (spec §4)."""
        form = {
            "grant_type": "refresh_token",
            "refresh_token": check.text("refresh_token", refresh_token, 1),
        }
        return self._token(form, resource)

    def _token(self, form: dict[str, str], resource: str | None) -> TokenSet:
        if resource is not None:
            form["resource"] = check.url("resource", resource)
        return self._send_form(self.discovery().token_endpoint, form, TokenSet)

    # --- userinfo, introspection, revocation -----------------------------------------------

    def userinfo(self, access_token: str) -> UserInfo:
        endpoint = self._endpoint("userinfo_endpoint")
        headers = {"Authorization": f"Bearer {check.text('access_token', access_token, 1)}"}
        return self._send("GET", endpoint, UserInfo, headers=headers)

    def introspect(self, token: str) -> Introspection:
        """``active`` is false for a revoked, expired or unknown token."""
        form = {"token": check.text("token", token, 1)}
        return self._send_form(self._endpoint("introspection_endpoint"), form, Introspection)

    def revoke(self, token: str) -> None:
        form = {"token": check.text("token", token, 1)}
        self._send_form(self._endpoint("revocation_endpoint"), form, OAuthDocument, empty_ok=True)

    # --- ID tokens ------------------------------------------------------------------------

    def validate_id_token(
        self, id_token: str, *, nonce: str | None = None, now: datetime | None = None
    ) -> dict[str, Any]:
        """The claims of a valid ID token (spec §5.7): signature against the JWKS, ``iss`` the
        issuer, ``aud`` this client, ``exp`` after ``now`` (default: this machine's clock; a
        test passes the sandbox's), ``nonce`` the one sent. Else ``SvcIdTokenError``."""
        metadata = self.discovery()
        try:
            kid = jwt.get_unverified_header(check.text("id_token", id_token, 1)).get("kid")
        except jwt.PyJWTError as exc:
            raise _invalid(f"not a JWT: {exc}") from exc
        key = self._signing_key(kid)
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

    def _signing_key(self, kid: Any) -> jwt.PyJWK:
        for refresh in (False, True):
            keys = self.jwks(refresh=refresh)
            found = next((k for k in keys.keys if k.key_id == kid), None)
            if found is not None:
                return found
        raise _invalid(f"no published key has kid {kid!r}")

    # --- HTTP -----------------------------------------------------------------------------

    def _endpoint(self, name: str) -> str:
        url = getattr(self.discovery(), name)
        if not url:
            raise SvcError(f"the provider publishes no {name}", code="unsupported")
        return str(url)

    def _send_form(
        self, url: str, form: dict[str, str], model: type[M], *, empty_ok: bool = False
    ) -> M:
        """A form POST with the client's credentials (spec §4: client_id and client_secret in
        the form, or HTTP Basic)."""
        basic = self.client_secret is not None and self.auth_method == "client_secret_basic"
        if not basic:
            form = {**form, "client_id": self.client_id}
            if self.client_secret is not None:
                form["client_secret"] = self.client_secret
        request = self._http.build_request(
            "POST", url, data=form, headers={"Accept": "application/json"}
        )
        if basic:
            assert self.client_secret is not None
            request = next(httpx.BasicAuth(self.client_id, self.client_secret).auth_flow(request))
        return exchange(self._http, request, model, self.timeout, from_coded_answer, empty_ok)

    def _send(
        self, method: str, url: str, model: type[M], headers: dict[str, str] | None = None
    ) -> M:
        request = self._http.build_request(
            method, url, headers={"Accept": "application/json", **(headers or {})}
        )
        return exchange(self._http, request, model, self.timeout, from_coded_answer)


def _invalid(reason: str) -> SvcIdTokenError:
    return SvcIdTokenError(f"invalid ID token: {reason}", code="invalid_id_token")
