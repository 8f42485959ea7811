"""Applies the rules of ``exposure.py`` to every request and response of the app."""

from __future__ import annotations

from dataclasses import dataclass

from flask import Flask, Response, current_app, request

from svc_sandbox.core.errors import Forbidden, SandboxError
from svc_sandbox.exposure import (
    COMMON_HEADERS,
    JSON_ONLY,
    SAFE_METHODS,
    STALE_FORM,
    FormTokens,
    HostRule,
    content_security_policy,
    is_loopback,
    remote_control_refusal,
)
from svc_sandbox.settings import Settings

EXTENSION = "svc_sandbox.form_tokens"
RULES = "svc_sandbox.exposure_rules"


@dataclass(frozen=True)
class Rules:
    """What the checks derive from the settings, once per app (and per ``app.bind``)."""

    hosts: HostRule
    csp: str
    allow_remote_control: bool


def configure(app: Flask, settings: Settings) -> None:
    """Derives the rules from ``settings``: at ``install``, and again when ``app.bind`` puts
    another Sandbox behind the app."""
    app.extensions[RULES] = Rules(
        HostRule(settings), content_security_policy(settings), settings.allow_remote_control
    )


def install(app: Flask, settings: Settings, control_prefix: str) -> None:
    configure(app, settings)
    app.extensions[EXTENSION] = FormTokens()

    @app.before_request
    def guard() -> None:
        rules: Rules = app.extensions[RULES]
        if not rules.hosts.allows(request.host):
            raise SandboxError(rules.hosts.refusal(request.host), code="host_not_allowed")
        path = request.path
        if path != control_prefix and not path.startswith(control_prefix + "/"):
            return
        if not rules.allow_remote_control and not is_loopback(request.remote_addr):
            raise Forbidden(remote_control_refusal(request.remote_addr), code="remote_control")
        if request.method not in SAFE_METHODS and request.mimetype != "application/json":
            raise SandboxError(JSON_ONLY, status=415, code="unsupported_media_type")

    @app.after_request
    def security_headers(response: Response) -> Response:
        response.headers.update(COMMON_HEADERS)
        if response.mimetype == "text/html":
            response.headers["Content-Security-Policy"] = app.extensions[RULES].csp
        return response


def form_tokens() -> FormTokens:
    tokens: FormTokens = current_app.extensions[EXTENSION]
    return tokens


def require_form_token(subject: str) -> None:
    """A hosted-page form post must carry the token its page issued for ``subject``; a JSON
    request needs none (no other site can send one without the browser asking CORS)."""
    if request.mimetype == "application/json":
        return
    if not form_tokens().valid(subject, request.form.get(FormTokens.FIELD)):
        raise Forbidden(STALE_FORM, code="form_token")
