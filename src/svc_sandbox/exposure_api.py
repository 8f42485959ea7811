"""Applies the rules of ``exposure.py`` to every request and response of the app."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flask import Flask, Request, Response, current_app, request

from svc_sandbox.core.errors import Forbidden, SandboxError
from svc_sandbox.exposure import (
    COMMON_HEADERS,
    CONTROL_CACHE_CONTROL,
    JSON_ONLY,
    STALE_FORM,
    WRITE_METHODS,
    FormTokens,
    HostRule,
    content_security_policy,
    cross_site_problem,
    is_loopback,
    remote_control_refusal,
    target_authority,
)
from svc_sandbox.settings import Settings
from svc_sandbox.web import CORS_ORIGIN, form_body

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

EXTENSION = "svc_sandbox.form_tokens"
#: Set in the environ of a request ``guard`` refused as another site's: app.py keeps it out
#: of the request journal.
UNJOURNALED_REQUEST = "svc_sandbox.unjournaled"
RULES = "svc_sandbox.exposure_rules"


@dataclass(frozen=True)
class Rules:
    """What the checks derive from the settings, once per app (and per ``app.bind``), and
    again once the server has picked its port."""

    settings: Settings
    #: The port the rules name: an app is built before a server given port 0 picks one and
    #: writes it into ``settings`` (server.py), and the CSP must name the served origin.
    port: int
    hosts: HostRule
    csp: str
    allow_remote_control: bool


def configure(app: Flask, settings: Settings) -> None:
    """Derives the rules from ``settings``: at ``install``, and again when ``app.bind`` puts
    another Sandbox behind the app."""
    app.extensions[RULES] = Rules(
        settings,
        settings.port,
        HostRule(settings),
        content_security_policy(settings),
        settings.allow_remote_control,
    )


def rules_of(app: Flask) -> Rules:
    """The app's rules, derived again when the port they name is no longer the settings' (a
    server on port 0 binds after the app is built). Two requests racing here derive the same
    rules."""
    rules: Rules = app.extensions[RULES]
    if rules.port != rules.settings.port:
        configure(app, rules.settings)
        rules = app.extensions[RULES]
    return rules


def install(app: Flask, settings: Settings) -> None:
    configure(app, settings)
    app.extensions[EXTENSION] = FormTokens()
    app.wsgi_app = CommonHeaders(app.wsgi_app)  # type: ignore[method-assign]


class CommonHeaders:
    """WSGI middleware: ``COMMON_HEADERS`` on every answer, appended to the header list as the
    server sends it (werkzeug's ``Headers`` checks each value it is given: costly on every
    request for constants)."""

    def __init__(self, wsgi_app: WSGIApplication) -> None:
        self.wsgi_app = wsgi_app
        self.pairs = list(COMMON_HEADERS.items())
        self.names = {name.lower() for name in COMMON_HEADERS}

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            kept = [(k, v) for k, v in headers if k.lower() not in self.names]
            return start_response(status, kept + self.pairs, exc_info)

        return self.wsgi_app(environ, start)


def guard(app: Flask, current: Request, control_prefix: str) -> None:
    """Refuses a request for a Host not served here, and a control-plane request from another
    machine (unless allowed) or a control-plane write that is not JSON."""
    rules = rules_of(app)
    environ = current.environ
    # The raw header when there is one (werkzeug's ``host`` re-derives it on every access,
    # and blanks one it finds invalid).
    host = environ.get("HTTP_HOST") or current.host
    if not rules.hosts.allows(host):
        raise SandboxError(rules.hosts.refusal(host), code="host_not_allowed")
    authority = target_authority(environ.get("REQUEST_URI", "/"))
    if authority is not None and not rules.hosts.allows(authority):
        refusal = rules.hosts.refusal(authority, "The request target's host")
        raise SandboxError(refusal, code="host_not_allowed")
    site = environ.get("HTTP_SEC_FETCH_SITE")
    if site is not None and CORS_ORIGIN not in environ:  # a browser's, no CORS granted
        problem = cross_site_problem(site, environ.get("HTTP_SEC_FETCH_MODE"))
        if problem:
            environ[UNJOURNALED_REQUEST] = True  # another site's, not the developer's
            raise Forbidden(problem, code="cross_site_request")
    path = current.path
    if path != control_prefix and not path.startswith(control_prefix + "/"):
        return
    if not rules.allow_remote_control and not is_loopback(current.remote_addr):
        raise Forbidden(remote_control_refusal(current.remote_addr), code="remote_control")
    if current.method in WRITE_METHODS and current.mimetype != "application/json":
        raise SandboxError(JSON_ONLY, status=415, code="unsupported_media_type")


def add_security_headers(app: Flask, response: Response, control: bool) -> None:
    """A page's Content-Security-Policy; ``no-store`` on a control-plane answer (``control``)
    (``CommonHeaders`` adds the rest to every answer)."""
    if control:
        response.headers["Cache-Control"] = CONTROL_CACHE_CONTROL
    if response.mimetype == "text/html":
        # A page may widen it (identity pages add the app's redirect origin to form-action).
        response.headers.setdefault("Content-Security-Policy", rules_of(app).csp)


def form_tokens() -> FormTokens:
    tokens: FormTokens = current_app.extensions[EXTENSION]
    return tokens


def require_form_token(subject: str) -> None:
    """A hosted-page form post must carry the token its page issued for ``subject``; a JSON
    request needs none (no other site can send one without the browser asking CORS)."""
    if request.mimetype == "application/json":
        return
    if not form_tokens().valid(subject, form_body().get(FormTokens.FIELD)):
        raise Forbidden(STALE_FORM, code="form_token")
