"""The identity provider's HTTP edge (spec §4 "Identity provider endpoints"), at {auth_url}:
discovery, JWKS, authorize with its sign-in and consent pages, token, userinfo,
introspection and revocation. Parses, calls the services, serializes."""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlencode

from flask import Blueprint, Response, redirect, render_template, request
from flask.blueprints import BlueprintSetupState
from werkzeug.exceptions import HTTPException

from svc_sandbox.contract.api import relative_path
from svc_sandbox.core.errors import SandboxError
from svc_sandbox.exposure import content_security_policy
from svc_sandbox.identity import cors
from svc_sandbox.identity.apps import App
from svc_sandbox.identity.bearer import bearer_token
from svc_sandbox.identity.discovery import metadata
from svc_sandbox.identity.errors import InvalidClient, InvalidRequest, description
from svc_sandbox.identity.grants import (
    AUTHORIZE_PARAMS,
    CONSENT_PAGE,
    SIGN_IN_PAGE,
    AuthorizationRequest,
    RedirectError,
)
from svc_sandbox.identity.params import Params, optional, presented, problem, required
from svc_sandbox.identity.sessions import BROWSER_COOKIE, SESSION_COOKIE, BrowserSession
from svc_sandbox.identity.users import User
from svc_sandbox.web import FORM_TYPE, form_body, json_response, sandbox

if TYPE_CHECKING:
    from svc_sandbox.sandbox import Sandbox

blueprint = Blueprint("identity", __name__, template_folder="templates")
#: Routes at the origin's root (registered only when {auth_url} has a path, with the option
#: ``auth_path``): the discovery document where RFC 8414 puts it for such an issuer.
origin = Blueprint("identity_origin", __name__)

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


#: Refusals made for every family before an identity route runs (web.py, app.py's framework
#: answers), by their code: as RFC 6749's for a request the provider cannot take (an OAuth
#: client maps it).
OAUTH_CODES = {
    "unsupported_media_type": "invalid_request",
    "request_entity_too_large": "invalid_request",
}


def oauth_error(code: str, message: str) -> dict[str, str]:
    """RFC 6749 §5.2 ``{error, error_description}``, the description in its characters."""
    return {"error": OAUTH_CODES.get(code, code), "error_description": description(message)}


def oauth_error_body(error: SandboxError) -> dict[str, Any]:
    """RFC 6749 §5.2 ``{error, error_description}`` for every identity error."""
    return oauth_error(error.code, error.message)


@blueprint.errorhandler(SandboxError)
def render_error(error: SandboxError) -> Response:
    return json_response(oauth_error_body(error), error.status, {**error.headers, **NO_STORE})


def client_ip() -> str:
    return request.remote_addr or "unknown"


def query_params() -> Params:
    return request.args.to_dict(flat=False)


def form_params() -> Params:
    """The form of a token, introspection or revocation request; form-encoded only (spec §1
    convention 4)."""
    require_form_type()
    return form_body().to_dict(flat=False)


def require_form_type() -> None:
    if request.mimetype != FORM_TYPE:
        raise InvalidRequest(f"Content-Type must be {FORM_TYPE}")


def basic_credentials() -> tuple[str, str] | None:
    """``client_secret_basic`` (RFC 6749 §2.3.1: both parts form-urlencoded)."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        raise InvalidClient("Authorization must be HTTP Basic client credentials")
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode()
    except (binascii.Error, ValueError):  # not base64, not ASCII, not UTF-8
        raise InvalidClient("Authorization: Basic credentials are not valid base64") from None
    client_id, sep, secret = decoded.partition(":")
    if not sep or not client_id:
        raise InvalidClient("Authorization: Basic credentials must be client_id:client_secret")
    client_id = unquote(client_id.replace("+", " "))
    # Checked as the form's client_id is (same bound, same error), before the rate limit
    # keeps it as a key.
    message = problem({"client_id": [client_id]}, "client_id")
    if message:
        raise InvalidRequest(message)
    return client_id, unquote(secret.replace("+", " "))


def named_client(params: Params, basic: tuple[str, str] | None) -> str | None:
    """The client a request names (for rate limits), before it is authenticated."""
    if basic is not None:
        return basic[0]
    return params.get("client_id", [None])[0] if not problem(params, "client_id") else None


def take(endpoint: str, client_id: str | None) -> None:
    sandbox().identity_limits.take(endpoint, client_id, client_ip())


def no_store(body: dict[str, Any], status: int = 200) -> Response:
    return json_response(body, status, NO_STORE)


# --- discovery and keys ---------------------------------------------------------------------


#: The two well-known names of the metadata (spec §4), served at {auth_url}/.well-known/<name>.
WELL_KNOWN = ("openid-configuration", "oauth-authorization-server")


def discovery() -> Response:
    return json_response(metadata(sandbox().settings))


def cors_origin(sb: Sandbox, environ: dict[str, Any], path: str) -> str | None:
    """The Access-Control-Allow-Origin a browser request is granted (identity/cors.py), None
    for any other: a request without ``Origin`` (every non-browser client) at once."""
    origin = environ.get("HTTP_ORIGIN")
    if origin is None:
        return None
    auth_path = sb.settings.path_of("auth_url")
    relative = relative_path(path, auth_path)
    for name in WELL_KNOWN:
        if path == f"/.well-known/{name}{auth_path}":  # RFC 8414 §3, path_inserted
            relative = f"/.well-known/{name}"
    client_origins = None
    if relative in cors.CLIENT_PATHS and environ["REQUEST_METHOD"] == "POST":
        client_origins = sb.oauth_apps.web_origins(named_client_of_request())
    return cors.allowed_origin(relative, origin, sb.oauth_apps.web_origins, client_origins)


def named_client_of_request() -> str:
    """The client a token or revocation request names (Basic or the form), "" when none can
    be read (no CORS then: the request is refused as another site's)."""
    try:
        # form_body keeps the body (the journal and the endpoint read it again).
        return named_client(form_body().to_dict(flat=False), basic_credentials()) or ""
    except (SandboxError, HTTPException):  # a malformed Basic header, a body too large or
        # not UTF-8: no client, so no CORS, and the guard refuses another site's request
        return ""


def add_cors_headers(response: Response, allowed: str, environ: dict[str, Any]) -> None:
    """The answer a page may read; a preflight's also says what the page may send."""
    response.headers["Access-Control-Allow-Origin"] = allowed
    response.headers["Access-Control-Expose-Headers"] = cors.EXPOSE_HEADERS
    response.vary.add("Origin")
    if environ["REQUEST_METHOD"] == "OPTIONS" and "HTTP_ACCESS_CONTROL_REQUEST_METHOD" in environ:
        response.headers["Access-Control-Allow-Methods"] = cors.ALLOW_METHODS
        response.headers["Access-Control-Allow-Headers"] = cors.ALLOW_HEADERS
        response.headers["Access-Control-Max-Age"] = cors.MAX_AGE_SECONDS


for _name in WELL_KNOWN:
    blueprint.add_url_rule(f"/.well-known/{_name}", view_func=discovery, methods=["GET"])


def path_inserted(auth_path: str) -> list[str]:
    """Where RFC 8414 §3 puts the metadata of an issuer with a path (``/auth``): at the origin,
    the well-known name inserted before the path (``/.well-known/oauth-authorization-server/
    auth``); the same for ``openid-configuration``, the form RFC 8414 §5 says some clients
    try. None for an issuer at the origin's root: its own paths are those already."""
    return [f"/.well-known/{name}{auth_path}" for name in WELL_KNOWN] if auth_path else []


@origin.record
def _serve_path_inserted(state: BlueprintSetupState) -> None:
    for path in path_inserted(state.options["auth_path"]):
        state.add_url_rule(path, f"discovery {path}", discovery, methods=["GET"])


@blueprint.get("/jwks")
def jwks() -> Response:
    return json_response(sandbox().signing_keys.jwks())


# --- pages ----------------------------------------------------------------------------------


def page(
    template: str,
    status: int = 200,
    form: bool = True,
    *,
    redirect_uri: str | None = None,
    **context: Any,
) -> Response:
    """A page of the provider; one with a form makes sure the browser has its CSRF cookie.
    ``redirect_uri``: where its form's redirects end (the CSP's form-action must allow the
    app's address)."""
    sb = sandbox()
    browser = request.cookies.get(BROWSER_COOKIE)
    new_browser = None
    if form and not browser:
        browser = new_browser = sb.browser_sessions.new_browser_id()
    csrf = sb.browser_sessions.csrf_token(browser) if form and browser else None
    html = render_template(template, csrf_token=csrf, **context)
    response = Response(html, status, mimetype="text/html")
    response.headers.update(NO_STORE)
    if redirect_uri is not None:
        policy = content_security_policy(sb.settings, [redirect_uri])
        response.headers["Content-Security-Policy"] = policy
    if new_browser:
        set_cookie(response, BROWSER_COOKIE, new_browser)
    return response


def set_cookie(response: Response, name: str, value: str) -> None:
    settings = sandbox().settings
    response.set_cookie(
        name,
        value,
        path=settings.path_of("auth_url") or "/",
        httponly=True,
        samesite="Lax",
        secure=settings.issuer.startswith("https://"),
    )


#: What the error page adds to the error, by what went wrong.
UNTRUSTED = (
    "The request was not sent back to the app, because its client or redirect address could "
    "not be trusted."
)
TOO_MANY = "Nothing was sent to the app. Wait a little, then sign in from the app again."
FORM_REFUSED = "Nothing was sent to the app. Go back, reload the page and try again."


class UntrustedRequest(Exception):
    """An authorization request refused before its client and redirect address are trusted
    (RFC 6749 §4.1.2.1: shown to the person, never sent to the redirect address)."""

    def __init__(self, error: SandboxError) -> None:
        super().__init__(error.message)
        self.error = error


def checked_request(params: Params) -> AuthorizationRequest:
    """``check_request`` for the pages: its errors before the redirect address is trusted
    are ``UntrustedRequest``; later ones stay ``RedirectError``."""
    try:
        return sandbox().oauth.check_request(params)
    except SandboxError as error:
        raise UntrustedRequest(error) from None


def error_page(error: SandboxError, explanation: str | None = None) -> Response:
    status = 429 if error.status == 429 else 400
    if explanation is None:
        explanation = TOO_MANY if status == 429 else FORM_REFUSED
    response = page("identity_error.html", status, form=False, error=error, explanation=explanation)
    response.headers.update(error.headers)
    return response


#: What an authorization request, the sign-in form or the consent form may be refused with.
REFUSALS = (RedirectError, UntrustedRequest, SandboxError)


def refusal(error: RedirectError | UntrustedRequest | SandboxError, status: int) -> Response:
    """The answer to a refused authorization request or page form: a redirect to the app
    (``status``: 302, or 303 after a POST), or the error page, saying the app could not be
    trusted when that is why."""
    if isinstance(error, RedirectError):
        return redirect(error.location, status)  # type: ignore[return-value]
    if isinstance(error, UntrustedRequest):
        return error_page(error.error, UNTRUSTED)
    return error_page(error)


def check_csrf(form: Params) -> None:
    token = form.get("csrf_token", [None])[0]
    if not sandbox().browser_sessions.csrf_ok(request.cookies.get(BROWSER_COOKIE), token):
        raise InvalidRequest("csrf_token is missing or does not match this browser: reload")


def signed_in() -> tuple[User, BrowserSession] | None:
    return sandbox().browser_sessions.current(request.cookies.get(SESSION_COOKIE))


def authorize_path() -> str:
    return sandbox().settings.path_of("auth_url") + "/oauth2/authorize"


@blueprint.get("/oauth2/authorize")
def authorize() -> Response:
    """An authorization request sent by GET: its query (spec §4)."""
    return authorization_request(query_params(), 302)


@blueprint.post("/oauth2/authorize")
def authorize_post() -> Response:
    """The consent page's form, which carries ``decision``; else an authorization request sent
    by POST (OpenID Connect Core §3.1.2.1: the authorization endpoint "MUST support" GET and
    POST), its parameters form-serialized in the body (the query is not read), answered as
    the GET is but for 303 redirects (RFC 9110 §15.4.4: after a POST)."""
    try:
        form = form_body().to_dict(flat=False)
        if "decision" not in form:
            require_form_type()
    except SandboxError as error:
        return error_page(error)
    if "decision" in form:
        return consent_decision(form)
    return authorization_request(form, 303)


def authorization_request(params: Params, status: int) -> Response:
    """The one path of an authorization request, by GET or POST: the §8 limit, the checks,
    then sign-in, consent or back to the app; ``status`` is its redirects' status."""
    try:
        take("authorize", named_client(params, None))
        auth_request = checked_request(params)
    except REFUSALS as error:
        return refusal(error, status)
    return continue_authorization(auth_request, status)


def continue_authorization(auth_request: AuthorizationRequest, status: int = 302) -> Response:
    """Sign-in page, consent page, or straight back to the app (``next_step``); ``status``
    is the redirect's (303 after a form's POST)."""
    sb = sandbox()
    current = signed_in()
    user, session = current if current is not None else (None, None)
    try:
        step = sb.oauth.next_step(
            auth_request,
            user.id if user is not None else None,
            session.auth_time if session is not None else None,
        )
    except RedirectError as redirected:
        return redirect(redirected.location, status)  # type: ignore[return-value]
    if step == SIGN_IN_PAGE or user is None or session is None:
        return sign_in_page(auth_request)
    if step == CONSENT_PAGE:
        return page(
            "identity_consent.html",
            action=authorize_path(),
            redirect_uri=auth_request.redirect_uri,
            params=auth_request.params(),
            user=user,
            **sb.oauth.consent_view(auth_request),
        )
    location = sb.oauth.decide(
        auth_request, user.id, True, list(auth_request.scopes), session.auth_time
    )
    return redirect(location, status)  # type: ignore[return-value]


def sign_in_page(auth_request: AuthorizationRequest, status: int = 200, **context: Any) -> Response:
    """The sign-in form of an authorization request: the request rides in hidden fields, one
    per parameter (as on the consent page), so the sign-in post checks each as authorize does
    and the app's name and redirect address come from its registration."""
    sb = sandbox()
    context.setdefault("login", auth_request.login_hint)  # OpenID Connect Core §3.1.2.1
    return page(
        "identity_signin.html",
        status,
        action=sb.settings.path_of("auth_url") + "/signin",
        app_name=sb.oauth_apps.get(auth_request.client_id).name,
        params=auth_request.params(),
        redirect_uri=auth_request.redirect_uri,
        **context,
    )


def posted_params(form: Params) -> Params:
    """The authorization request a page's form carries in its hidden fields."""
    return {name: form[name] for name in AUTHORIZE_PARAMS if name in form}


@blueprint.post("/signin")
def sign_in() -> Response:
    sb = sandbox()
    try:
        form = form_body().to_dict(flat=False)
        check_csrf(form)
        # Checked again as authorize checks it: a tampered form is an error page, or a
        # redirect to the app's registered address. The §8 authorize limit is not taken: a
        # sign-in is part of one authorization request.
        auth_request = checked_request(posted_params(form))
    except REFUSALS as error:
        return refusal(error, 303)
    try:
        login = required(form, "login")
        password = required(form, "password")
    except InvalidRequest as error:
        # The request holds and the person typed something no account has (a pasted tab, a
        # novel): the form again, saying so, not a dead-end error page.
        return sign_in_page(auth_request, 400, login="", error=error.message)
    user = sb.users.check_password(login, password)
    if user is None:
        return sign_in_page(auth_request, 401, login=login, error="Wrong handle, email or password")
    # Back to authorize with the request, less what this sign-in met (prompt=login, max_age).
    query = urlencode(auth_request.after_sign_in().params())
    response = redirect(authorize_path() + "?" + query, 303)
    set_cookie(response, SESSION_COOKIE, sb.browser_sessions.sign_in(user.id))  # type: ignore[arg-type]
    return response  # type: ignore[return-value]


def consent_decision(form: Params) -> Response:
    """The consent page's form: approve (with the ticked scopes) or deny."""
    sb = sandbox()
    try:
        check_csrf(form)
        params = posted_params(form)
        take("authorize", named_client(params, None))
        auth_request = checked_request(params)
        decision = required(form, "decision")
        if decision not in ("approve", "deny"):
            raise InvalidRequest("decision must be approve or deny")
    except REFUSALS as error:
        return refusal(error, 303)
    current = signed_in()
    if current is None:
        return continue_authorization(auth_request, 303)
    user, session = current
    location = sb.oauth.decide(
        auth_request, user.id, decision == "approve", list(form.get("grant", [])), session.auth_time
    )
    return redirect(location, 303)  # type: ignore[return-value]


# --- token, userinfo, introspection, revocation -----------------------------------------------


@blueprint.post("/oauth2/token")
def token() -> Response:
    sb = sandbox()
    basic = basic_credentials()
    form = form_params()
    take("token", named_client(form, basic))
    return no_store(sb.oauth.token(form, basic))


@blueprint.route("/oauth2/userinfo", methods=["GET", "POST"])
def userinfo() -> Response:
    sb = sandbox()
    take("userinfo", None)
    record = sb.access_tokens.userinfo_token(bearer_token(request.headers.get("Authorization")))
    claims = sb.access_tokens.claims_of(record.user_id, frozenset(record.scopes))
    return no_store(claims)


def client_form(endpoint: str) -> tuple[str, App]:
    """The ``token`` of an introspection or revocation request and the authenticated client.
    The token is only looked up by its digest (linear in its length, whatever it holds), so
    one this provider never issued, however long or odd, is unknown, not an error."""
    basic = basic_credentials()
    form = form_params()
    take(endpoint, named_client(form, basic))
    app = sandbox().oauth.authenticate_client(form, basic)
    token = presented(form, "token")
    optional(form, "token_type_hint")
    return token, app


@blueprint.post("/oauth2/introspect")
def introspect() -> Response:
    token, app = client_form("introspect")
    return no_store(sandbox().access_tokens.introspect(token, app))


@blueprint.post("/oauth2/revoke")
def revoke() -> Response:
    token, app = client_form("revoke")
    sandbox().access_tokens.revoke(token, app)
    return Response(status=200, headers=NO_STORE)
