"""Identity control plane: users, OAuth apps, disconnect, consent, signed-in browser
sessions, the scripted authorize step and signing keys (issue 11 items 1, 2, 7, 9).

Every route is documented with an example in docs/control-plane.md.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from flask import Blueprint, Response

from svc_sandbox.control.identity_schemas import (
    AppCreateBody,
    ApproveBody,
    AppUpdateBody,
    AuthorizeAsBody,
    ConsentBody,
    UserCreateBody,
    UserUpdateBody,
)
from svc_sandbox.core.errors import SandboxError, ValidationFailed
from svc_sandbox.core.validation import parse
from svc_sandbox.identity.apps import App
from svc_sandbox.identity.errors import OAuthError
from svc_sandbox.identity.sessions import SESSION_COOKIE
from svc_sandbox.identity.users import User
from svc_sandbox.web import (
    error_response,
    json_body,
    json_response,
    parse_body,
    sandbox,
    takes_no_body,
)

blueprint = Blueprint("control_identity", __name__)


@blueprint.errorhandler(SandboxError)
def render_error(error: SandboxError) -> Response:
    return error_response(error, error_body(error))


def error_body(error: SandboxError) -> dict[str, Any]:
    return {"error": error.message, "code": error.code}


# --- users --------------------------------------------------------------------------------


def user_view(user: User) -> dict[str, Any]:
    view = user.to_public()
    view["consents"] = sandbox().oauth.consents_of(user.id)
    return view


def user_fields(body: UserCreateBody | UserUpdateBody) -> dict[str, Any]:
    """The body's fields under the service's names."""
    return {
        "handle": body.handle,
        "name": body.name,
        "given_name": body.givenName,
        "family_name": body.familyName,
        "email": body.email,
        "email_verified": body.emailVerified,
        "picture": body.picture,
        "kyc": body.kyc,
        "password": body.password,
    }


@blueprint.get("/users")
def list_users() -> Response:
    return json_response({"items": [user_view(u) for u in sandbox().users.all()]})


@blueprint.post("/users")
def create_user() -> Response:
    body = parse(UserCreateBody, json_body(optional=True))
    return json_response(user_view(sandbox().users.create(**user_fields(body))), 201)


@blueprint.get("/users/<user_id>")
def get_user(user_id: str) -> Response:
    return json_response(user_view(sandbox().users.get(user_id)))


@blueprint.patch("/users/<user_id>")
def update_user(user_id: str) -> Response:
    body = parse_body(UserUpdateBody)
    return json_response(user_view(sandbox().users.update(user_id, **user_fields(body))))


@blueprint.put("/users/<user_id>/consents/<client_id>")
def preset_consent(user_id: str, client_id: str) -> Response:
    body = parse(ConsentBody, json_body(optional=True))
    scopes = sandbox().oauth.preset_consent(user_id, client_id, body.scopes)
    return json_response({"userId": user_id, "clientId": client_id, "scopes": scopes})


@blueprint.post("/users/<user_id>/apps/<client_id>/disconnect")
@takes_no_body
def disconnect(user_id: str, client_id: str) -> Response:
    stopped, voided = sandbox().oauth.disconnect(user_id, client_id)
    return json_response(
        {
            "userId": user_id,
            "clientId": client_id,
            "refreshTokensStopped": stopped,
            "codesVoided": voided,
        }
    )


@blueprint.post("/users/<user_id>/session")
@takes_no_body
def create_session(user_id: str) -> Response:
    """A signed-in browser session: the cookie to send to {auth_url} (also set here)."""
    sb = sandbox()
    value = sb.browser_sessions.sign_in(user_id)
    path = sb.settings.path_of("auth_url") or "/"
    response = json_response(
        {"cookie": {"name": SESSION_COOKIE, "value": value, "path": path}, "userId": user_id},
        201,
    )
    response.set_cookie(SESSION_COOKIE, value, path=path, httponly=True, samesite="Lax")
    return response


@blueprint.post("/identity/authorize")
def authorize_as() -> Response:
    """The whole authorize step as a user with a decision: the redirect URL, taken apart."""
    body = parse_body(AuthorizeAsBody)
    if (body.params is None) == (body.url is None):
        raise ValidationFailed("send exactly one of params or url")
    if body.url is not None:
        params: dict[str, list[str]] = parse_qs(urlsplit(body.url).query, keep_blank_values=True)
    else:
        params = {k: [v] for k, v in (body.params or {}).items()}
    try:
        location = sandbox().oauth.authorize_as(
            params, body.userId, body.decision == "approve", body.scopes
        )
    except OAuthError as error:
        # Not redirected (unknown or disabled client, redirect_uri): 400, as the browser's error
        # page answers; invalid_client's 401 is the token endpoint's (RFC 6749 §5.2).
        return json_response(error_body(error), 400)
    query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    return json_response({"redirectUrl": location, **query})


# --- apps ---------------------------------------------------------------------------------


def app_view(app: App, secret: str | None = None) -> dict[str, Any]:
    view = app.to_public()
    if secret is not None:
        view["clientSecret"] = secret
    return view


def default_org_id() -> str:
    return next(o.id for o in sandbox().orgs.all() if o.environment.value == "sandbox")


@blueprint.get("/apps")
def list_apps() -> Response:
    return json_response({"items": [app_view(a) for a in sandbox().oauth_apps.all()]})


@blueprint.post("/apps")
def create_app_route() -> Response:
    body = parse_body(AppCreateBody)
    app, secret = sandbox().oauth_apps.create(
        body.organizationId or default_org_id(),
        body.name,
        body.redirectUris,
        body.scopes,
        body.clientType,
        website=body.website,
        logo_url=body.logoUrl,
    )
    return json_response(app_view(app, secret), 201)


@blueprint.get("/apps/<client_id>")
def get_app(client_id: str) -> Response:
    return json_response(app_view(sandbox().oauth_apps.get(client_id)))


@blueprint.patch("/apps/<client_id>")
def update_app(client_id: str) -> Response:
    body = parse_body(AppUpdateBody)
    app = sandbox().oauth_apps.update(
        client_id,
        name=body.name,
        redirect_uris=body.redirectUris,
        scopes=body.scopes,
        website=body.website,
        logo_url=body.logoUrl,
    )
    return json_response(app_view(app))


@blueprint.post("/apps/<client_id>/rotate-secret")
@takes_no_body
def rotate_secret(client_id: str) -> Response:
    app, secret = sandbox().oauth_apps.rotate_secret(client_id)
    return json_response(app_view(app, secret))


@blueprint.post("/apps/<client_id>/disable")
@takes_no_body
def disable_app(client_id: str) -> Response:
    return json_response(app_view(sandbox().oauth_apps.set_disabled(client_id, True)))


@blueprint.post("/apps/<client_id>/enable")
@takes_no_body
def enable_app(client_id: str) -> Response:
    return json_response(app_view(sandbox().oauth_apps.set_disabled(client_id, False)))


@blueprint.delete("/apps/<client_id>")
def delete_app(client_id: str) -> Response:
    sb = sandbox()
    with sb.lock:
        app = sb.oauth_apps.delete(client_id)
        stopped = sb.access_tokens.revoke_refresh_of(None, client_id)
    return json_response({**app_view(app), "refreshTokensStopped": stopped})


@blueprint.post("/apps/<client_id>/approve-wallet-send")
def approve_wallet_send(client_id: str) -> Response:
    body = parse(ApproveBody, json_body(optional=True))
    return json_response(
        app_view(sandbox().oauth_apps.approve_wallet_send(client_id, body.approved))
    )


# --- signing keys -------------------------------------------------------------------------


@blueprint.get("/identity/keys")
def list_keys() -> Response:
    sb = sandbox()
    published = {k.kid for k in sb.signing_keys.published()}
    keys = [{**k.to_public(), "published": k.kid in published} for k in sb.signing_keys.keys]
    return json_response({"active": sb.signing_keys.active().kid, "items": keys})


@blueprint.post("/identity/keys/rotate")
@takes_no_body
def rotate_key() -> Response:
    sandbox().signing_keys.rotate()
    return list_keys()
