"""The identity provider's HTTP edge (spec §4 "Identity provider endpoints"), at {auth_url}:
discovery, JWKS, authorize with its sign-in and consent pages, token, userinfo,
introspection and revocation. Parses, calls the services, serializes."""

from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit

from flask import Blueprint, Response, redirect, render_template, request

from svc_sandbox.core.errors import SandboxError
from svc_sandbox.identity.discovery import metadata
from svc_sandbox.identity.errors import InvalidClient, InvalidRequest, InvalidToken
from svc_sandbox.identity.grants import AUTHORIZE_PARAMS, AuthorizationRequest, RedirectError
from svc_sandbox.identity.params import Params, optional, problem, required
from svc_sandbox.identity.sessions import BROWSER_COOKIE, SESSION_COOKIE, BrowserSession
from svc_sandbox.identity.users import User
from svc_sandbox.web import json_response, sandbox

blueprint = Blueprint("identity", __name__, template_folder="templates")

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
FORM_TYPE = "application/x-www-form-urlencoded"


def oauth_error_body(error: SandboxError) -> dict[str, Any]:
    """RFC 6749 §5.2 ``{error, error_description}`` for every identity error."""
    return {"error": error.code, "error_description": error.message}


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
    if request.mimetype != FORM_TYPE:
        raise InvalidRequest(f"Content-Type must be {FORM_TYPE}")
    return request.form.to_dict(flat=False)


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
    return unquote(client_id.replace("+", " ")), unquote(secret.replace("+", " "))


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


@blueprint.get("/.well-known/openid-configuration")
@blueprint.get("/.well-known/oauth-authorization-server")
def discovery() -> Response:
    return json_response(metadata(sandbox().settings))


@blueprint.get("/jwks")
def jwks() -> Response:
    return json_response(sandbox().signing_keys.jwks())


# --- pages ----------------------------------------------------------------------------------


def page(template: str, status: int = 200, form: bool = True, **context: Any) -> Response:
    """A page of the provider; one with a form makes sure the browser has its CSRF cookie."""
    sb = sandbox()
    browser = request.cookies.get(BROWSER_COOKIE)
    new_browser = None
    if form and not browser:
        browser = new_browser = sb.browser_sessions.new_browser_id()
    csrf = sb.browser_sessions.csrf_token(browser) if form and browser else None
    html = render_template(template, csrf_token=csrf, **context)
    response = Response(html, status, mimetype="text/html")
    response.headers.update(NO_STORE)
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


def error_page(error: SandboxError) -> Response:
    status = 429 if error.status == 429 else 400
    response = page("identity_error.html", status, form=False, error=error)
    response.headers.update(error.headers)
    return response


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
    params = query_params()
    sb = sandbox()
    try:
        take("authorize", named_client(params, None))
        auth_request = sb.oauth.check_request(params)
    except RedirectError as redirected:
        return redirect(redirected.location, 302)  # type: ignore[return-value]
    except SandboxError as error:
        return error_page(error)
    return continue_authorization(auth_request)


def continue_authorization(auth_request: AuthorizationRequest) -> Response:
    """Sign-in page, consent page, or straight back to the app (remembered consent)."""
    sb = sandbox()
    current = signed_in()
    if current is None:
        app = sb.oauth_apps.get(auth_request.client_id)
        return_to = authorize_path() + "?" + urlencode(auth_request.params())
        return page(
            "identity_signin.html",
            action=sb.settings.path_of("auth_url") + "/signin",
            app_name=app.name,
            return_to=return_to,
        )
    user, session = current
    if sb.oauth.needs_consent(auth_request, user.id):
        return page(
            "identity_consent.html",
            action=authorize_path(),
            params=auth_request.params(),
            user=user,
            **sb.oauth.consent_view(auth_request),
        )
    location = sb.oauth.decide(
        auth_request, user.id, True, list(auth_request.scopes), session.auth_time
    )
    return redirect(location, 302)  # type: ignore[return-value]


@blueprint.post("/signin")
def sign_in() -> Response:
    sb = sandbox()
    form = request.form.to_dict(flat=False)
    try:
        check_csrf(form)
        return_to = required(form, "return_to")
        if urlsplit(return_to).path != authorize_path() or urlsplit(return_to).netloc:
            raise InvalidRequest("return_to must be this provider's authorize address")
        login = required(form, "login")
        password = required(form, "password")
    except SandboxError as error:
        return error_page(error)
    user = sb.users.check_password(login, password)
    if user is None:
        return page(
            "identity_signin.html",
            401,
            action=sb.settings.path_of("auth_url") + "/signin",
            app_name="the app",
            return_to=return_to,
            login=login,
            error="Wrong handle, email or password",
        )
    response = redirect(return_to, 303)
    set_cookie(response, SESSION_COOKIE, sb.browser_sessions.sign_in(user.id))  # type: ignore[arg-type]
    return response  # type: ignore[return-value]


@blueprint.post("/oauth2/authorize")
def consent_decision() -> Response:
    """The consent page's form: approve (with the ticked scopes) or deny."""
    sb = sandbox()
    form = request.form.to_dict(flat=False)
    params = {name: form[name] for name in AUTHORIZE_PARAMS if name in form}
    try:
        check_csrf(form)
        take("authorize", named_client(params, None))
        auth_request = sb.oauth.check_request(params)
        decision = required(form, "decision")
        if decision not in ("approve", "deny"):
            raise InvalidRequest("decision must be approve or deny")
    except RedirectError as redirected:
        return redirect(redirected.location, 303)  # type: ignore[return-value]
    except SandboxError as error:
        return error_page(error)
    current = signed_in()
    if current is None:
        return continue_authorization(auth_request)
    user, session = current
    location = sb.oauth.decide(
        auth_request, user.id, decision == "approve", form.get("grant", []), session.auth_time
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


def bearer_token() -> str:
    header = request.headers.get("Authorization")
    if header is None:
        error = InvalidToken("send Authorization: Bearer <access token>")
        # RFC 6750 §3.1: no error code when the request had no authentication at all.
        error.headers["WWW-Authenticate"] = 'Bearer realm="svc-sandbox"'
        raise error
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise InvalidRequest("Authorization must be Bearer <access token>")
    return value.strip()


@blueprint.route("/oauth2/userinfo", methods=["GET", "POST"])
def userinfo() -> Response:
    sb = sandbox()
    take("userinfo", None)
    record = sb.access_tokens.userinfo_token(bearer_token())
    claims = sb.access_tokens.claims_of(record.user_id, frozenset(record.scopes))
    return no_store(claims)


def client_form(endpoint: str) -> tuple[Params, Any]:
    basic = basic_credentials()
    form = form_params()
    take(endpoint, named_client(form, basic))
    app = sandbox().oauth.authenticate_client(form, basic)
    required(form, "token")
    optional(form, "token_type_hint")
    return form, app


@blueprint.post("/oauth2/introspect")
def introspect() -> Response:
    form, app = client_form("introspect")
    return no_store(sandbox().access_tokens.introspect(required(form, "token"), app))


@blueprint.post("/oauth2/revoke")
def revoke() -> Response:
    form, app = client_form("revoke")
    sandbox().access_tokens.revoke(required(form, "token"), app)
    return Response(status=200, headers=NO_STORE)
