"""The authorization code flow (spec §4, §5): the authorize request and its checks, consent
(remembered per user and app), codes, client authentication and the token endpoint's grants.

Errors that must not redirect (unknown or disabled client, redirect URI mismatch) raise an
``OAuthError``; every other authorize error raises ``RedirectError``, which carries the URL
to send the browser to (with ``error``, ``error_description``, ``state`` and ``iss``).
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from svc_sandbox.core.authorize import REQUEST_PARAMS
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.digests import constant_time_equal
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.expiry import ExpiryQueue
from svc_sandbox.core.ids import Digested
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, to_json
from svc_sandbox.core.validation import SHOWN_CHARACTERS, cut
from svc_sandbox.identity.apps import App, AppService
from svc_sandbox.identity.errors import (
    AccessDenied,
    ConsentRequired,
    InvalidClient,
    InvalidGrant,
    InvalidRequest,
    InvalidScope,
    InvalidTarget,
    LoginRequired,
    OAuthError,
    RedirectUriMismatch,
    RequestNotSupported,
    RequestUriNotSupported,
    UnauthorizedClient,
    UnsupportedGrantType,
    UnsupportedResponseType,
    description,
)
from svc_sandbox.identity.lifetime import Lapses, ended, not_yet
from svc_sandbox.identity.params import Params, check_all, optional, problem, required
from svc_sandbox.identity.scopes import OPENID, SCOPES, ordered, parse_scope
from svc_sandbox.identity.tokens import TokenService, digest, issuable, kept_after_expiry
from svc_sandbox.identity.users import UserService

CODE_TTL = timedelta(minutes=10)
CHALLENGE_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")
VERIFIER_SHAPE = re.compile(r"[A-Za-z0-9._~-]{43,128}")
MAX_AGE_SHAPE = re.compile(r"[0-9]+")
#: The parameters of an authorize request that travel through the sign-in and consent forms.
AUTHORIZE_PARAMS = (*REQUEST_PARAMS, "prompt", "max_age", "login_hint")
#: The fields of a token request the token endpoint reads (spec §4 "Token request", and
#: RFC 6749 §6's ``scope`` of a refresh): each is checked before anything is looked up; any
#: other field is ignored. ``resource`` is read too, and checked as a target (``_resource``).
TOKEN_PARAMS = (
    "grant_type",
    "code",
    "redirect_uri",
    "code_verifier",
    "refresh_token",
    "scope",
    "client_id",
    "client_secret",
)
#: Spec §4 lists ``state`` among the authorize parameters (only ``nonce`` is optional), the
#: callback carries it, and §5.3 has a client make a fresh one per attempt.
STATE_MISSING = (
    "state is missing: send a fresh random state with each authorization request (the "
    "callback carries it back)"
)
#: OpenID Connect Core §6: the request passed as a request object, by value or by reference,
#: which this provider does not support (discovery says so); the values are never read.
UNSUPPORTED_PARAMS: tuple[tuple[str, type[OAuthError]], ...] = (
    ("request", RequestNotSupported),
    ("request_uri", RequestUriNotSupported),
)
#: OpenID Connect Core §3.1.2.1 ``prompt`` values (discovery's ``prompt_values_supported``).
#: ``select_account`` shows the sign-in page, where any user can sign in (docs/spec-gaps.md).
NONE, LOGIN, CONSENT, SELECT_ACCOUNT = "none", "login", "consent", "select_account"
PROMPT_VALUES = (NONE, LOGIN, CONSENT, SELECT_ACCOUNT)
#: What the browser of an authorization request sees next.
SIGN_IN_PAGE, CONSENT_PAGE, BACK_TO_APP = "sign_in", "consent", "back_to_app"


def s256(verifier: str) -> str:
    """RFC 7636 §4.2: BASE64URL(SHA256(ASCII(code_verifier))) without padding."""
    raw = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def with_query(uri: str, params: dict[str, str]) -> str:
    return uri + ("&" if "?" in uri else "?") + urlencode(params)


def check_registered(app: App, redirect_uri: str) -> None:
    """Spec §5.2: an exact match of a registered URI, else ``redirect_uri_mismatch`` (at
    authorize and at the token endpoint alike)."""
    if not any(constant_time_equal(redirect_uri, u) for u in app.redirect_uris):
        raise RedirectUriMismatch("redirect_uri is not an exact match of a registered URI")


@dataclass(frozen=True)
class AuthorizationRequest:
    client_id: str
    redirect_uri: str
    scopes: tuple[str, ...]
    state: str | None
    code_challenge: str
    nonce: str | None
    #: OpenID Connect Core §3.1.2.1: ``prompt`` values, ``max_age`` seconds, ``login_hint``.
    prompt: tuple[str, ...] = ()
    max_age: int | None = None
    login_hint: str | None = None

    def after_sign_in(self) -> AuthorizationRequest:
        """The request once the user has just signed in: ``prompt=login`` (and
        ``select_account``) and ``max_age`` are met, so the next authorize does not ask again."""
        kept = tuple(p for p in self.prompt if p not in (LOGIN, SELECT_ACCOUNT))
        return replace(self, prompt=kept, max_age=None)

    def params(self) -> dict[str, str]:
        """The request as query parameters again (hidden fields of the pages' forms)."""
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "scope": " ".join(self.scopes),
            "code_challenge": self.code_challenge,
            "code_challenge_method": "S256",
        }
        if self.state is not None:
            params["state"] = self.state
        if self.nonce is not None:
            params["nonce"] = self.nonce
        if self.prompt:
            params["prompt"] = " ".join(self.prompt)
        if self.max_age is not None:
            params["max_age"] = str(self.max_age)
        if self.login_hint is not None:
            params["login_hint"] = self.login_hint
        return params


def parse_prompt(value: str | None) -> tuple[str, ...]:
    """``prompt``: space-separated values of ``PROMPT_VALUES``; ``none`` alone."""
    values = tuple(parse_scope(value or ""))
    unknown = [v for v in values if v not in PROMPT_VALUES]
    if unknown:
        raise InvalidRequest(
            f"prompt value {cut(unknown[0], SHOWN_CHARACTERS)} is not supported: use "
            f"{', '.join(PROMPT_VALUES)}"
        )
    if NONE in values and len(values) > 1:
        raise InvalidRequest("prompt none cannot be combined with other values")
    return values


def parse_max_age(value: str | None) -> int | None:
    if value is None:
        return None
    if not MAX_AGE_SHAPE.fullmatch(value):
        raise InvalidRequest("max_age must be a whole number of seconds, 0 or more")
    return int(value)


class RedirectError(Exception):
    """An authorize error the client learns by redirect (RFC 6749 §4.1.2.1)."""

    def __init__(self, error: OAuthError, location: str) -> None:
        super().__init__(error.message)
        self.error = error
        self.location = location


@dataclass
class AuthCode:
    code_sha256: str
    client_id: str
    user_id: str
    redirect_uri: str
    scopes: list[str]
    code_challenge: str
    auth_time: datetime
    created_at: datetime
    expires_at: datetime
    nonce: str | None = None
    used: bool = False
    #: The grant its tokens belong to, once redeemed (a second use revokes it).
    grant_id: str | None = None
    #: The sandbox clock has reached its end (identity/lifetime.py): a set back keeps it ended.
    lapsed: bool = False


class AuthorizationService(Service):
    def __init__(
        self, ctx: ServiceContext, users: UserService, apps: AppService, tokens: TokenService
    ) -> None:
        super().__init__(ctx)
        self.users = users
        self.apps = apps
        self.tokens = tokens
        self.codes: dict[str, AuthCode] = {}
        #: "<user_id> <client_id>" -> the scopes the user approved for the app (kept: only
        #: the user, a disconnect or a deletion takes a consent back).
        self.consents: dict[str, list[str]] = {}
        self._code_expiry = ExpiryQueue()
        self._code_lapses = Lapses(self.codes)
        #: grant id -> the code redeemed into it (it goes with its grant, whatever the
        #: setting was when the code was queued).
        self._code_of_grant: dict[str, str] = {}

    @locked
    def prune(self) -> None:
        """Drops codes past their lifetime by more than the setting: one never redeemed
        then; a redeemed one with the grant it made (tokens.py), so that a second use revokes
        the grant's tokens as long as there are any. The tokens are pruned first."""
        self.tokens.prune()
        for grant_id in self.tokens.take_dropped_grants():
            self.codes.pop(self._code_of_grant.pop(grant_id, ""), None)
        now = self.clock.now()
        self._code_lapses.mark(now)

        def code_until(sha: str) -> datetime | None:
            code = self.codes.get(sha)
            if code is None:
                return None
            if code.grant_id is not None:
                return self.tokens.kept_until(code.grant_id) or now
            return code.expires_at + kept_after_expiry(self.ctx)

        for sha in self._code_expiry.expired(now, code_until):
            code = self.codes.pop(sha)
            self._code_of_grant.pop(code.grant_id or "", None)

    # --- the authorize request ------------------------------------------------------------

    def _redirect(self, error: OAuthError, redirect_uri: str, state: str | None) -> RedirectError:
        params = {"error": error.code, "error_description": description(error.message)}
        if state is not None:
            params["state"] = state
        params["iss"] = self.settings.issuer
        return RedirectError(error, with_query(redirect_uri, params))

    @locked
    def check_request(self, params: Params) -> AuthorizationRequest:
        """Spec §4 "Authorize": the checks, in the order that decides where errors go."""
        for name in ("client_id", "redirect_uri"):
            message = problem(params, name)
            if message:
                raise InvalidRequest(message)
        client_id = required(params, "client_id")
        app = self.apps.find(client_id)
        if app is None or app.deleted:
            raise InvalidClient("client_id is not a registered app")
        if app.disabled:
            raise InvalidClient("this app is disabled")
        redirect_uri = optional(params, "redirect_uri")
        if redirect_uri is None:
            raise InvalidRequest("redirect_uri is missing")
        check_registered(app, redirect_uri)
        state_problem = problem(params, "state")
        state = None if state_problem else optional(params, "state")
        try:
            return self._check_rest(params, app, redirect_uri, state)
        except OAuthError as error:
            raise self._redirect(error, redirect_uri, state) from None

    def _check_rest(
        self, params: Params, app: App, redirect_uri: str, state: str | None
    ) -> AuthorizationRequest:
        # First: a client sending a request object may have put the other parameters in it,
        # so their absence must not be what it is told (§6.1 "MUST return" these errors).
        for name, error in UNSUPPORTED_PARAMS:
            if any(params.get(name, ())):  # an empty value is no value (RFC 6749 §3.1)
                raise error(
                    f"{name} is not supported by this provider ({name}_parameter_supported is "
                    "false): send the authorization request's parameters themselves"
                )
        check_all(params, AUTHORIZE_PARAMS)
        response_type = required(params, "response_type")
        if response_type != "code":
            raise UnsupportedResponseType("response_type must be code")
        if state is None:  # §4 lists it (only nonce is optional); the callback carries it
            raise InvalidRequest(STATE_MISSING)
        challenge = optional(params, "code_challenge")
        if challenge is None:
            raise InvalidRequest("code_challenge is missing: PKCE is required")
        method = optional(params, "code_challenge_method")
        if method != "S256":
            raise InvalidRequest("code_challenge_method must be S256")
        if not CHALLENGE_SHAPE.fullmatch(challenge):
            raise InvalidRequest("code_challenge must be 43 base64url characters")
        scopes = parse_scope(optional(params, "scope") or "")
        if OPENID not in scopes:
            raise InvalidScope("scope must include openid")
        outside = [s for s in scopes if s not in app.allowed_scopes]
        if outside:
            shown = cut(outside[0], SHOWN_CHARACTERS)
            raise InvalidScope(f"scope {shown} is not allowed for this app")
        return AuthorizationRequest(
            client_id=app.client_id,
            redirect_uri=redirect_uri,
            scopes=tuple(ordered(scopes)),
            state=state,
            code_challenge=challenge,
            nonce=optional(params, "nonce"),
            prompt=parse_prompt(optional(params, "prompt")),
            max_age=parse_max_age(optional(params, "max_age")),
            login_hint=optional(params, "login_hint"),
        )

    # --- interaction (OpenID Connect Core §3.1.2.1, §3.1.2.3) --------------------------------

    @locked
    def next_step(
        self, request: AuthorizationRequest, user_id: str | None, auth_time: datetime | None
    ) -> str:
        """What the browser sees next: the sign-in page (no session, ``prompt=login`` or
        ``select_account``, a session older than ``max_age``), the consent page (scopes not
        approved yet, or ``prompt=consent``), or the app with a code. With ``prompt=none`` a
        page is an error redirect instead: ``login_required`` or ``consent_required``."""
        if user_id is None or auth_time is None or self._must_sign_in(request, auth_time):
            step = SIGN_IN_PAGE
        elif CONSENT in request.prompt or self.needs_consent(request, user_id):
            step = CONSENT_PAGE
        else:
            return BACK_TO_APP
        if NONE in request.prompt:
            error: OAuthError = (
                LoginRequired("prompt=none, but the user must sign in first")
                if step == SIGN_IN_PAGE
                else ConsentRequired("prompt=none, but the user has not approved these scopes")
            )
            raise self._redirect(error, request.redirect_uri, request.state)
        return step

    def _must_sign_in(self, request: AuthorizationRequest, auth_time: datetime) -> bool:
        if LOGIN in request.prompt or SELECT_ACCOUNT in request.prompt:
            return True
        if request.max_age is None:
            return False
        # §3.1.2.1: "max_age=0 is equivalent to prompt=login"; else an older sign-in.
        age = (self.clock.now() - auth_time).total_seconds()
        return request.max_age == 0 or age > request.max_age

    # --- consent --------------------------------------------------------------------------

    @staticmethod
    def _consent_key(user_id: str, client_id: str) -> str:
        return f"{user_id} {client_id}"

    @locked
    def needs_consent(self, request: AuthorizationRequest, user_id: str) -> bool:
        """Remembered consent skips the page for the same or fewer scopes."""
        remembered = self.consents.get(self._consent_key(user_id, request.client_id), [])
        return not set(request.scopes) <= set(remembered)

    @locked
    def preset_consent(self, user_id: str, client_id: str, scopes: list[str]) -> list[str]:
        self.users.get(user_id)
        app = self.apps.get(client_id)
        unknown = [s for s in scopes if s not in app.allowed_scopes]
        if unknown:
            raise ValidationFailed(f"scopes: {unknown[0]} is not allowed for this app")
        key = self._consent_key(user_id, client_id)
        self.consents[key] = ordered({OPENID, *scopes})  # a PUT: what it names, no more
        return self.consents[key]

    @locked
    def consents_of(self, user_id: str) -> dict[str, list[str]]:
        """client_id -> approved scopes, for one user."""
        prefix = f"{user_id} "
        return {k[len(prefix) :]: v for k, v in self.consents.items() if k.startswith(prefix)}

    @locked
    def disconnect(self, user_id: str, client_id: str) -> tuple[int, int]:
        """Spec §5.6: forgets the consent; refresh tokens stop at once, access tokens live
        until they expire. The user's codes for the app not yet redeemed are voided too (else
        one redeemed later would bring a new refresh token). Returns how many refresh tokens
        stopped and how many codes were voided. An unknown (or deleted) app is a 404, as for a
        preset consent: a typo must not pass as a disconnect."""
        self.users.get(user_id)
        self.apps.get(client_id)
        self.prune()
        self.consents.pop(self._consent_key(user_id, client_id), None)
        # A used code stays: its second use must still revoke the grant it made.
        voided = [
            key
            for key, code in self.codes.items()
            if code.user_id == user_id and code.client_id == client_id and not code.used
        ]
        for key in voided:
            del self.codes[key]
        return self.tokens.revoke_refresh_of(user_id, client_id), len(voided)

    # --- the decision ---------------------------------------------------------------------

    @locked
    def decide(
        self,
        request: AuthorizationRequest,
        user_id: str,
        approve: bool,
        granted: list[str] | None = None,
        auth_time: datetime | None = None,
    ) -> str:
        """The redirect URL after the user's decision: a code, or ``access_denied``."""
        self.users.get(user_id)
        if not approve:
            error = AccessDenied("The user declined to authorize this app")
            return self._redirect(error, request.redirect_uri, request.state).location
        chosen = request.scopes if granted is None else [*granted, OPENID]
        scopes = [s for s in request.scopes if s in chosen]
        key = self._consent_key(user_id, request.client_id)
        # The user's latest answer for each scope asked stands: what was unticked now is
        # taken back; what this request did not ask about stays consented.
        kept = [s for s in self.consents.get(key, []) if s not in request.scopes]
        self.consents[key] = ordered({*kept, *scopes})
        now = self.clock.now()
        code = self.ids.secret("ac_", 43, Digested(self.codes, digest))
        self.prune()
        self.codes[digest(code)] = AuthCode(
            code_sha256=digest(code),
            client_id=request.client_id,
            user_id=user_id,
            redirect_uri=request.redirect_uri,
            scopes=scopes,
            code_challenge=request.code_challenge,
            auth_time=auth_time or now,
            created_at=now,
            expires_at=now + CODE_TTL,
            nonce=request.nonce,
        )
        self._code_lapses.add(digest(code), self.codes[digest(code)])
        self._code_expiry.add(now + CODE_TTL + kept_after_expiry(self.ctx), digest(code))
        params = {"code": code}
        if request.state is not None:
            params["state"] = request.state
        params["iss"] = self.settings.issuer
        return with_query(request.redirect_uri, params)

    @locked
    def authorize_as(
        self,
        params: Params,
        user_id: str,
        approve: bool,
        granted: list[str] | None = None,
    ) -> str:
        """The whole authorize step as ``user_id`` (control plane, spec issue item 9): the
        redirect URL, error redirects included; non-redirect errors raise."""
        self.users.get(user_id)
        try:
            request = self.check_request(params)
            # The user signs in and decides here, which meets prompt=login, consent and
            # max_age; prompt=none still asks for no page (consent_required if one is due).
            self.next_step(request.after_sign_in(), user_id, self.clock.now())
            return self.decide(request, user_id, approve, granted)
        except RedirectError as redirect:
            return redirect.location

    # --- the token endpoint -----------------------------------------------------------------

    @locked
    def authenticate_client(self, form: Params, basic: tuple[str, str] | None) -> App:
        """``client_secret_basic``, ``client_secret_post``, or ``none`` for public clients."""
        form_id = optional(form, "client_id")
        form_secret = optional(form, "client_secret")
        if basic is not None:
            if form_secret is not None:
                raise InvalidRequest(
                    "client_secret: use one client authentication method, Basic or the form"
                )
            if form_id is not None and form_id != basic[0]:
                raise InvalidRequest("client_id does not match the HTTP Basic credentials")
            client_id: str | None = basic[0]
            # An empty password is no secret, as an empty form field is none (RFC 6749 §3.1):
            # Go's x/oauth2 sends "client_id:" in Basic for a public client.
            secret: str | None = basic[1] or None
        else:
            client_id, secret = form_id, form_secret
        if client_id is None:
            raise InvalidClient("client_id is missing: authenticate the client")
        app = self.apps.find(client_id)
        if app is None or app.deleted:
            raise InvalidClient("client_id is not a registered app")
        if app.disabled:
            raise InvalidClient("this app is disabled")
        if app.client_type == "confidential":
            if secret is None:
                raise InvalidClient("client_secret is required for a confidential client")
            if not self.apps.secret_matches(app, secret):
                raise InvalidClient("client_secret is wrong")
        elif secret is not None:
            raise InvalidClient("a public client has no secret: send client_id only")
        return app

    def _resource(self, form: Params) -> str | None:
        """RFC 8707 §2: the resource the token is for, {resource_url} or none (an opaque
        token). This provider issues a token for that one resource only, so ``resource`` sent
        more than once (§2 allows several), or a value that cannot be it (over 2,000
        characters, control characters), is ``invalid_target`` like any other resource."""
        expected = self.settings.root("resource_url")
        one = f"this provider issues a token for one resource, {expected}"
        if len(form.get("resource", ())) > 1:
            raise InvalidTarget(f"resource is sent more than once: {one}")
        malformed = problem(form, "resource")
        if malformed:
            raise InvalidTarget(f"{malformed}: {one}")
        resource = optional(form, "resource")
        if resource is not None and resource != expected:
            raise InvalidTarget(f"resource must be {expected}")
        return resource

    @locked
    def token(self, form: Params, basic: tuple[str, str] | None) -> dict[str, Any]:
        """POST {auth_url}/oauth2/token: one request, all under the lock (one winner)."""
        self.prune()
        check_all(form, TOKEN_PARAMS)
        grant_type = required(form, "grant_type")
        if grant_type not in ("authorization_code", "refresh_token"):
            raise UnsupportedGrantType("grant_type must be authorization_code or refresh_token")
        app = self.authenticate_client(form, basic)
        resource = self._resource(form)
        if grant_type == "refresh_token":
            value = required(form, "refresh_token")
            scope = optional(form, "scope")
            if "refresh_token" not in app.grant_types:
                raise UnauthorizedClient("this app has no offline_access scope: no refresh")
            return self.tokens.refresh_grant(value, app, scope, resource)
        return self._redeem(form, app, resource)

    def _redeem(self, form: Params, app: App, resource: str | None) -> dict[str, Any]:
        code = required(form, "code")
        redirect_uri = required(form, "redirect_uri")
        verifier = required(form, "code_verifier")
        record = self.codes.get(digest(code))
        if record is None:
            raise InvalidGrant("code is not known to this provider")
        # RFC 6749 §4.1.3 first: another client's code tells it nothing and revokes nothing
        # (any registered client could otherwise end a user's sign-in with a code it saw).
        if record.client_id != app.client_id:
            raise InvalidGrant("code was issued to another client")
        if record.used:
            if record.grant_id is not None:
                self.tokens.revoke_grant(record.grant_id, "authorization code used twice")
            raise InvalidGrant("code was already used; every token issued from it is revoked")
        now = self.clock.now()
        if ended(record, now):
            raise InvalidGrant("code expired (codes live 10 minutes)")
        if not_yet(record.created_at, now):
            raise InvalidGrant(
                "code was issued after the current sandbox time (the clock was set back)"
            )
        check_registered(app, redirect_uri)
        # RFC 6749 §4.1.3: registered, but not the one the code was issued for.
        if record.redirect_uri != redirect_uri:
            raise InvalidGrant("redirect_uri does not match the authorization request")
        if not VERIFIER_SHAPE.fullmatch(verifier):
            raise InvalidRequest("code_verifier must be 43 to 128 characters [A-Za-z0-9-._~]")
        if not constant_time_equal(s256(verifier), record.code_challenge):
            raise InvalidGrant("code_verifier does not match the code_challenge")
        scopes = issuable(app, record.scopes)
        record.used = True
        grant = self.tokens.new_grant(
            record.user_id, app.client_id, record.scopes, record.auth_time, record.nonce
        )
        record.grant_id = grant.id
        self._code_of_grant[grant.id] = record.code_sha256
        return self.tokens.issue(grant, app, scopes, resource, with_nonce=True)

    # --- pages ------------------------------------------------------------------------------

    @locked
    def consent_view(self, request: AuthorizationRequest) -> dict[str, Any]:
        """What the consent page shows: the app and each requested scope with its meaning."""
        app = self.apps.get(request.client_id)
        return {
            "app": {"name": app.name, "logoUrl": app.logo_url, "website": app.website},
            "scopes": [
                {"name": s, "meaning": SCOPES[s].meaning, "required": s == OPENID}
                for s in request.scopes
            ],
        }

    def export(self) -> dict[str, Any]:
        self.prune()  # what is due is gone in the export as in every answer
        return {
            "codes": [to_json(c) for c in self.codes.values()],
            "consents": to_json(self.consents),
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.codes = {c["code_sha256"]: from_json(AuthCode, c) for c in data["codes"]}
        self.consents = {k: list(v) for k, v in data["consents"].items()}
        kept = kept_after_expiry(self.ctx)
        self._code_expiry = ExpiryQueue((c.expires_at + kept, sha) for sha, c in self.codes.items())
        self._code_of_grant = {c.grant_id: sha for sha, c in self.codes.items() if c.grant_id}
        self._code_lapses = Lapses(self.codes)
