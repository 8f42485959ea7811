"""create_app: one Flask app serving every root of the spec on one origin, over one Sandbox."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask, Request, Response, after_this_request, request
from flask.sessions import NullSession, SecureCookieSessionInterface
from werkzeug.exceptions import HTTPException
from werkzeug.routing import MapAdapter, Rule

from svc_sandbox import exposure_api, latency
from svc_sandbox.commerce import api as commerce_api
from svc_sandbox.commerce import payouts_api as commerce_payouts_api
from svc_sandbox.contract import api as contract_api
from svc_sandbox.control import api as control_api
from svc_sandbox.control import checkout_api as control_checkout_api
from svc_sandbox.control import contract_api as control_contract_api
from svc_sandbox.control import identity_api as control_identity_api
from svc_sandbox.control import payouts_api as control_payouts_api
from svc_sandbox.control import provider_api as control_provider_api
from svc_sandbox.control import scenarios_api as control_scenarios_api
from svc_sandbox.control import wallet_api as control_wallet_api
from svc_sandbox.control import webhooks_api as control_webhooks_api
from svc_sandbox.core.errors import SandboxError
from svc_sandbox.core.text import isolated
from svc_sandbox.dashboard import api as dashboard_api
from svc_sandbox.exposure_api import UNJOURNALED_REQUEST
from svc_sandbox.identity import api as identity_api
from svc_sandbox.pages import api as pages_api
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.settings import Settings
from svc_sandbox.wallet import api as wallet_api
from svc_sandbox.web import (
    CORS_ORIGIN,
    LATENCY_APPLIED,
    MAX_BODY_BYTES,
    REQUEST_ID,
    check_content_coding,
    check_no_body,
    check_query,
    escape_query_bytes,
    json_response,
    request_details,
    sandbox_of,
    wsgi_text,
)

CONTROL_PREFIX = "/_sandbox"
#: The roots whose paths the app's routes are registered under.
ROUTED_ROOTS = (
    "base_url",
    "auth_url",
    "wallet_base_url",
    "pay_url",
    "simulate_url",
    "product_page_url",
    "provider_url",
)
#: Answers no identity route gave, by their code: RFC 6749's for a request the provider cannot
#: take (an OAuth client maps it); no RFC code names a wrong path or method, so these keep theirs.
DASHBOARD_PREFIX = CONTROL_PREFIX + "/ui"
#: Not journaled: the journal's own reads, the dashboard's pages (it polls them) and assets.
UNJOURNALED = (
    CONTROL_PREFIX + "/requests",
    DASHBOARD_PREFIX,
    pages_api.ASSETS_PREFIX,
    pages_api.FAVICON_PATH,
)


class LazyBuildRule(Rule):
    """A URL rule whose ``url_for`` builders are compiled when first used, not at start-up:
    werkzeug writes and compiles two Python functions per rule, most of the app's start-up
    cost for its ~80 routes, and the emulator builds almost no URLs from rules."""

    def _compile_builder(self, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        compiled: Callable[..., tuple[str, str]] | None = None

        def build(rule: Rule, *args: Any, **kwargs: Any) -> tuple[str, str]:
            nonlocal compiled
            if compiled is None:
                compiled = Rule._compile_builder(rule, append_unknown)
            return compiled(rule, *args, **kwargs)

        return build


class NullSessions(SecureCookieSessionInterface):
    """No cookie session (the emulator keeps none in Flask: the dashboard's and the identity
    provider's sign-ins are its own records). Flask's default interface finds no secret key
    on every request and builds a fresh null session; this one hands out the same one, which
    refuses a write as every null session does."""

    def __init__(self) -> None:
        self.shared = NullSession()

    def open_session(self, app: Flask, request: Request) -> None:
        return None

    def make_null_session(self, app: Flask) -> NullSession:
        return self.shared


#: Hosts whose URL-adapter details are remembered; past it, a new host is worked out afresh.
ADAPTER_HOSTS_KEPT = 256


class SandboxFlask(Flask):
    """Flask as the emulator uses it: URL rules build their ``url_for`` code when first used;
    every view and request hook is a plain function (``ensure_sync``, Flask's documented
    override: Flask otherwise asks ``inspect`` whether each one is a coroutine, three times
    per request; tests/test_app.py checks that none is); no cookie session; and the request's
    URL adapter is bound from details remembered per Host (``create_url_adapter``)."""

    url_rule_class = LazyBuildRule
    session_interface = NullSessions()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: (Host header, scheme, server name, port) -> (request.host, the adapter's server
        #: name), as Flask's ``create_url_adapter`` works them out.
        self._adapter_hosts: dict[tuple[Any, ...], tuple[str, str]] = {}

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        return func

    def create_url_adapter(self, request: Request | None) -> MapAdapter | None:
        """The adapter Flask's ``create_url_adapter`` binds, with what depends only on the
        Host worked out once per Host: Flask validates and IDNA-encodes the host twice per
        request, about a tenth of a GET's time in the app. Configurations this does not
        cover (trusted hosts, SERVER_NAME, host or subdomain matching, a WebSocket upgrade)
        take Flask's own path; tests/test_app.py checks the two give the same adapter."""
        environ = request.environ if request is not None else None
        if (
            environ is None
            or "HTTP_UPGRADE" in environ
            or self.config["TRUSTED_HOSTS"] is not None
            or self.config["SERVER_NAME"] is not None
            or self.url_map.host_matching
            or self.subdomain_matching
        ):
            return super().create_url_adapter(request)
        assert request is not None
        key = (
            environ.get("HTTP_HOST"),
            environ["wsgi.url_scheme"],
            environ.get("SERVER_NAME"),
            environ.get("SERVER_PORT"),
        )
        known = self._adapter_hosts.get(key)
        if known is None:
            adapter = super().create_url_adapter(request)  # raises for a host IDNA refuses
            assert adapter is not None
            known = (request.host, adapter.server_name)
            if len(self._adapter_hosts) < ADAPTER_HOSTS_KEPT:
                self._adapter_hosts[key] = known
            return adapter
        request.host = known[0]  # as Flask sets it
        script_name, path_info = (
            wsgi_text(environ.get("SCRIPT_NAME")),
            wsgi_text(environ.get("PATH_INFO")),
        )
        return MapAdapter(
            self.url_map,
            known[1],
            "/" if script_name is None else script_name,
            self.url_map.default_subdomain or "",
            environ["wsgi.url_scheme"],
            "/" if path_info is None else path_info,
            environ["REQUEST_METHOD"],
            wsgi_text(environ.get("QUERY_STRING")),
        )


def create_app(sandbox: Sandbox | Settings | None = None) -> Flask:
    """The WSGI app. Pass a Sandbox to share it with a test, or Settings to make a new one."""
    if not isinstance(sandbox, Sandbox):
        sandbox = Sandbox(sandbox)
    app = SandboxFlask(__name__, static_folder=None)  # no /static/<path>: /_assets serves files
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.jinja_env.filters["isolated"] = isolated
    app.extensions["svc_sandbox"] = sandbox

    settings = sandbox.settings
    app.register_blueprint(commerce_api.blueprint, url_prefix=settings.path_of("base_url"))
    app.register_blueprint(commerce_payouts_api.blueprint, url_prefix=settings.path_of("base_url"))
    app.register_blueprint(control_api.blueprint, url_prefix=CONTROL_PREFIX)
    app.register_blueprint(control_contract_api.blueprint, url_prefix=CONTROL_PREFIX)
    app.register_blueprint(control_webhooks_api.blueprint, url_prefix=CONTROL_PREFIX)
    app.register_blueprint(control_checkout_api.blueprint, url_prefix=CONTROL_PREFIX)
    app.register_blueprint(pages_api.pay, url_prefix=settings.path_of("pay_url"))
    app.register_blueprint(pages_api.simulate, url_prefix=settings.path_of("simulate_url"))
    app.register_blueprint(pages_api.product_pages, url_prefix=settings.path_of("product_page_url"))
    app.register_blueprint(pages_api.provider, url_prefix=settings.path_of("provider_url"))
    app.register_blueprint(control_payouts_api.blueprint, url_prefix=CONTROL_PREFIX)
    app.register_blueprint(wallet_api.blueprint, url_prefix=settings.path_of("wallet_base_url"))
    app.register_blueprint(control_wallet_api.blueprint, url_prefix=CONTROL_PREFIX)
    app.register_blueprint(dashboard_api.blueprint, url_prefix=DASHBOARD_PREFIX)
    app.register_blueprint(pages_api.assets, url_prefix=pages_api.ASSETS_PREFIX)
    app.register_blueprint(pages_api.favicon)
    #: The hosted pages' roots: a wrong method there (a form's address opened as a page) gets
    #: the HTML message page, as a person lands on it.
    page_roots = [
        path
        for path in map(
            settings.path_of, ("pay_url", "simulate_url", "product_page_url", "provider_url")
        )
        if path
    ]
    #: Under these, an unknown path gets the HTML 404 page (a person followed a link).
    html_roots = [DASHBOARD_PREFIX, *page_roots]
    auth_path = settings.path_of("auth_url")
    app.register_blueprint(identity_api.blueprint, url_prefix=auth_path)
    if auth_path:
        app.register_blueprint(identity_api.origin, auth_path=auth_path)
    app.register_blueprint(control_identity_api.blueprint, url_prefix=CONTROL_PREFIX)
    app.register_blueprint(control_provider_api.blueprint, url_prefix=CONTROL_PREFIX)
    app.register_blueprint(control_scenarios_api.blueprint, url_prefix=CONTROL_PREFIX)

    exposure_api.install(app, settings)
    contract_api.install(app)

    # One hook before and one after every request, each a list of plain steps in order: the
    # request object is looked up once (every ``request.x`` is a context lookup), and Flask
    # calls two hooks instead of six. Every request finds its Sandbox through the app (never
    # a captured one), so ``bind`` can put another Sandbox behind a built app: the pytest
    # plugin builds the app once.
    @app.before_request
    def begin_request() -> None:
        """An id; the exposure rules (Host, control-plane peers, JSON-only writes); a body's
        content coding; the query parameters and the body sent to a control-plane route that
        does not read them; injected latency; the work due by now (a real or scaled clock);
        the contract check of a request to a contract root."""
        current = request._get_current_object()  # type: ignore[attr-defined]
        sb = sandbox_of(app)
        environ = current.environ
        environ[REQUEST_ID] = sb.next_request_id()
        escape_query_bytes(current)
        if "HTTP_ORIGIN" in environ:  # a browser's fetch: may it read the answer?
            allowed = identity_api.cors_origin(sb, environ, current.path)
            if allowed is not None:
                environ[CORS_ORIGIN] = allowed
        exposure_api.guard(app, current, CONTROL_PREFIX)
        check_content_coding(current)
        if under(current.path, CONTROL_PREFIX):
            check_query(app, current)
            check_no_body(app, current)
        inject_latency(sb, current)
        sb.catch_up()
        contract_api.validate_request(app, sb, current)

    @app.after_request
    def finish_request(response: Response) -> Response:
        """The request id header; the contract's record (strict mode may turn the response
        into a 500); the journal; the security headers."""
        current = request._get_current_object()  # type: ignore[attr-defined]
        sb = sandbox_of(app)
        request_id = current.environ.get(REQUEST_ID) or sb.next_request_id()
        response.headers["X-Request-Id"] = request_id
        response = contract_api.check_response(sb, current, response, request_id)
        if not current.path.startswith(UNJOURNALED) and UNJOURNALED_REQUEST not in current.environ:
            sb.journal.record(
                request_id,
                current.method,
                current.path,
                response.status_code,
                request_details(current),
            )
        exposure_api.add_security_headers(app, response, under(current.path, CONTROL_PREFIX))
        allowed = current.environ.get(CORS_ORIGIN)
        if allowed is not None:
            identity_api.add_cors_headers(response, allowed, current.environ)
        return response

    #: The API family whose error shape each root's unknown paths take. Roots may nest
    #: ({auth_url}/wallet): a path belongs to the longest root it is under. The wallet's root
    #: wins over a commerce root at the same path; the identity provider's, at the path of
    #: another API (or the origin's), is not told apart and answers as that API does.
    families: dict[str, str] = {}
    for root in ROUTED_ROOTS:
        if root not in ("auth_url", "wallet_base_url"):
            families[settings.path_of(root)] = "commerce"
    families[settings.path_of("wallet_base_url")] = "wallet"
    families.setdefault(auth_path, "identity")
    for path in identity_api.path_inserted(auth_path):
        families[path] = "identity"  # the metadata's origin paths answer as their family
    families.pop("", None)  # the origin's own paths answer as commerce's

    def family(path: str) -> str:
        """``control`` under /_sandbox, else the family of the longest root ``path`` is under."""
        if under(path, CONTROL_PREFIX):
            return "control"
        best, found = -1, "commerce"
        for root, name in families.items():
            if len(root) > best and under(path, root):
                best, found = len(root), name
        return found

    def framework_answer(code: str, message: str, status: int, headers: dict[str, str]) -> Response:
        """An answer no route gave: the control plane's ``{error, code}``, the identity
        provider's RFC 6749 ``{error: <code>, error_description}`` with no-store (RFC 6749
        §5.1, docs/spec-gaps.md), the wallet's ``{error: <code>, message}`` (spec §7), else
        ``{error: <message>}``."""
        kind = family(request.path)
        body: dict[str, str] = {"error": message}
        if kind == "control":
            body["code"] = code
        elif kind == "identity":
            body = identity_api.oauth_error(code, message)
            headers = {**headers, **identity_api.NO_STORE}
        elif kind == "wallet":
            body = {"error": code, "message": message}
        return json_response(body, status, headers)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Response:
        """Unknown routes, wrong methods, oversized bodies: JSON like every other answer, the
        code (``not_found``, ``method_not_allowed``, ``request_entity_too_large``) where the
        API family's errors carry one."""
        status = error.code or 500
        if status == 404 and any(under(request.path, root) for root in html_roots):
            return pages_api.not_found_page(f"No page at {request.path}")
        if status == 404:
            # A HEAD answers as its GET would, Content-Length included (RFC 9110 §9.3.2).
            method = "GET" if request.method == "HEAD" else request.method
            message = f"No route for {method} {request.path}"
        else:
            message = error.description or error.name
        # What the exception says in headers stays (a 405's Allow, RFC 9110 §15.5.6); its
        # Content-Type is for werkzeug's HTML page, not this JSON.
        headers = {k: v for k, v in error.get_headers() if k.lower() != "content-type"}
        if status == 405 and any(request.path.startswith(root + "/") for root in page_roots):
            if "GET" in (getattr(error, "valid_methods", None) or ()):
                # A page that is also where its own form is sent (/pay/cs_...): open it.
                where = f"{request.path} is a page: open it, and use its form"
            else:
                where = f"{request.path} is where a form is sent: open the page it belongs to"
            refusal = SandboxError(where, status=405, code="method_not_allowed", headers=headers)
            return pages_api.render_page_error(refusal)
        return framework_answer(error.name.lower().replace(" ", "_"), message, status, headers)

    @app.errorhandler(SandboxError)
    def refused(error: SandboxError) -> Response:
        """A refusal before any route matched (the Host check on an unknown path)."""
        return framework_answer(error.code, error.message, error.status, error.headers)

    return app


def under(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (the contract's rule for its roots)."""
    return contract_api.relative_path(path, root) is not None


def inject_latency(sb: Sandbox, current: Request) -> None:
    """The latency fault (latency.py): a matching request waits before it is handled, or says
    in a header that its delay was skipped (every worker a delay may hold is taken)."""
    if not sb.latency.rules:  # the common case, without taking the lock
        return
    header = current.environ.get("HTTP_AUTHORIZATION", "")
    token = header[7:].strip() if header[:7].lower() == "bearer " else None
    applied, skipped = sb.delay_request(current.method, current.path, token)
    if applied:  # the journal shows it; the recorder leaves it out of the time between requests
        current.environ[LATENCY_APPLIED] = applied.total_seconds()
    if skipped:
        after_this_request(say_latency_skipped)


def say_latency_skipped(response: Response) -> Response:
    name, value = latency.SKIPPED_HEADER
    response.headers[name] = value
    return response


def bind(app: Flask, sandbox: Sandbox) -> None:
    """Puts ``sandbox`` behind ``app`` (built by ``create_app``) for the requests that follow.

    Building an app costs tens of milliseconds and a Sandbox about one, so a test harness
    builds the app once and binds a fresh Sandbox per test. The routes stay where they were
    registered: the Sandbox must serve its roots at the same paths.
    """
    current = sandbox_of(app)
    for root in ROUTED_ROOTS:
        if sandbox.settings.path_of(root) != current.settings.path_of(root):
            raise ValueError(
                f"{root} path {sandbox.settings.path_of(root)!r} differs from the app's "
                f"{current.settings.path_of(root)!r}: build a new app with create_app"
            )
    exposure_api.configure(app, sandbox.settings)
    app.extensions["svc_sandbox"] = sandbox
