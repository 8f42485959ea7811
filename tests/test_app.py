"""One Sandbox behind both the Flask test client and a real multi-threaded server."""

from __future__ import annotations

import inspect
import json
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from flask import Flask, session
from flask.sessions import NullSession
from flask.testing import FlaskClient
from werkzeug.exceptions import BadHost
from werkzeug.test import EnvironBuilder

from svc_sandbox.app import ADAPTER_HOSTS_KEPT, bind, create_app
from svc_sandbox.client.errors import from_coded_answer
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox


def http(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def test_test_client_and_real_server_share_one_sandbox(
    svc_http: FlaskClient, svc_server: RunningServer, auth: dict[str, str]
) -> None:
    created = svc_http.post(
        "/api/products", json={"title": "Shared", "pricingModel": "free"}, headers=auth
    ).json
    product_id = created["product"]["_id"]  # type: ignore[index]
    fetched = http("GET", f"{svc_server.url}/api/products/{product_id}", headers=auth)
    assert fetched["product"]["title"] == "Shared"
    principal = svc_server.sandbox.orgs.authenticate(auth["Authorization"].removeprefix("Bearer "))
    assert svc_server.sandbox.products.get(principal.org.id, product_id).title == "Shared"


def test_parallel_creates_over_a_real_server_all_land_with_distinct_ids(
    svc_server: RunningServer, auth: dict[str, str]
) -> None:
    def create(n: int) -> str:
        body = {"title": f"P{n}", "pricingModel": "fixed", "price": {"amount": n}}
        return str(http("POST", f"{svc_server.url}/api/products", body, auth)["product"]["_id"])

    with ThreadPoolExecutor(max_workers=20) as pool:
        ids = list(pool.map(create, range(40)))
    assert len(set(ids)) == 40
    listing = http("GET", f"{svc_server.url}/api/products?limit=100", headers=auth)
    assert listing["total"] == 40
    assert {p["_id"] for p in listing["items"]} == set(ids)


def test_url_rules_build_urls_when_asked(svc_http: FlaskClient) -> None:
    """Rules compile their URL builders on first use (start-up cost): building still works,
    for every rule and both builders (known and unknown arguments)."""
    app = svc_http.application
    with app.test_request_context():
        adapter = app.url_map.bind("127.0.0.1")
        for rule in app.url_map.iter_rules():
            values = {name: "x1" for name in rule.arguments}
            method = sorted((rule.methods or {"GET"}) - {"HEAD", "OPTIONS"})[0]
            built = adapter.build(rule.endpoint, values, method=method)
            assert adapter.match(built, method=method) == (rule.endpoint, values)
            with_query = adapter.build(rule.endpoint, {**values, "extra": "1"})
            assert with_query.endswith("extra=1")


def test_every_view_and_request_hook_is_a_plain_function(svc_http: FlaskClient) -> None:
    """The app skips Flask's coroutine check of each view and hook (``SandboxFlask``): an
    ``async def`` among them would be called without being awaited."""
    app = svc_http.application
    hooks = [
        hook
        for registry in (
            app.before_request_funcs,
            app.after_request_funcs,
            app.teardown_request_funcs,
            app.url_value_preprocessors,
            app.url_default_functions,
        )
        for functions in registry.values()
        for hook in functions
    ]
    handlers = [
        handler
        for by_code in app.error_handler_spec.values()
        for by_class in by_code.values()
        for handler in by_class.values()
    ]
    functions = [*app.view_functions.values(), *hooks, *handlers]
    assert len(app.view_functions) > 50 and hooks and handlers
    assert not [f for f in functions if inspect.iscoroutinefunction(f)]


# --- the URL adapter bound per request (SandboxFlask.create_url_adapter) ---------------------

#: Requests whose adapter the remembered-per-Host path binds: each as Flask's own would.
ADAPTER_CASES = {
    "plain": {},
    "upper-case host": {"HTTP_HOST": "LOCALHOST:8700"},
    "default port dropped": {"HTTP_HOST": "127.0.0.1:80"},
    "https default port": {"wsgi.url_scheme": "https", "HTTP_HOST": "shop.test:443"},
    "port 443 over http": {"HTTP_HOST": "shop.test:443"},
    "no Host, https": {"wsgi.url_scheme": "https", "HTTP_HOST": None, "SERVER_NAME": "box.local"},
    "no Host header": {"HTTP_HOST": None, "SERVER_NAME": "box.local", "SERVER_PORT": "8700"},
    "IDN host": {"HTTP_HOST": "b\u00fccher.test:8700".encode().decode("latin-1")},
    "invalid host characters": {"HTTP_HOST": "bad host"},
    "UTF-8 path": {"PATH_INFO": "/api/products/\u00e9".encode().decode("latin-1")},
    "bytes that are not UTF-8": {"PATH_INFO": "/api/\xff\xfe", "QUERY_STRING": "q=\xff"},
    "empty path": {"PATH_INFO": ""},
    "no path": {"PATH_INFO": None},
    "script name": {"SCRIPT_NAME": "/mounted"},
    "no query": {"QUERY_STRING": None},
    "query": {"QUERY_STRING": "limit=5&status=open"},
    "WebSocket upgrade": {"HTTP_UPGRADE": "websocket", "HTTP_CONNECTION": "Upgrade"},
}


def adapter_environ(changes: dict[str, Any]) -> dict[str, Any]:
    environ = EnvironBuilder(path="/api/checkout/x", base_url="http://127.0.0.1:8700").get_environ()
    for name, value in changes.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    return environ


def assert_flasks_adapter(app: Flask, changes: dict[str, Any]) -> None:
    expected_request = app.request_class(adapter_environ(changes))
    expected = Flask.create_url_adapter(app, expected_request)
    request = app.request_class(adapter_environ(changes))
    adapter = app.create_url_adapter(request)
    assert request.host == expected_request.host
    assert vars(adapter) == vars(expected)


@pytest.mark.parametrize("changes", ADAPTER_CASES.values(), ids=ADAPTER_CASES.keys())
def test_the_url_adapter_is_the_one_flask_binds(changes: dict[str, Any]) -> None:
    app = create_app(Sandbox(seed=1))
    for _ in range(2):  # once worked out, then remembered for the Host
        assert_flasks_adapter(app, changes)


def test_one_app_binds_every_request_as_flask_does_whatever_came_before() -> None:
    """What is remembered for one request's Host is never used for another's."""
    app = create_app(Sandbox(seed=1))
    for _ in range(2):
        for changes in ADAPTER_CASES.values():
            assert_flasks_adapter(app, changes)


def test_a_host_idna_refuses_is_refused_each_time() -> None:
    app = create_app(Sandbox(seed=1, allowed_hosts="*"))
    too_long = {"HTTP_HOST": "a" * 64 + ".test"}
    with pytest.raises(BadHost):
        Flask.create_url_adapter(app, app.request_class(adapter_environ(too_long)))
    for _ in range(2):
        with pytest.raises(BadHost):
            app.create_url_adapter(app.request_class(adapter_environ(too_long)))
    answer = app.test_client().get("/_sandbox", headers={"Host": too_long["HTTP_HOST"]})
    assert answer.status_code == 400
    assert answer.json == {
        "error": "The browser (or proxy) sent a request that this server could not understand.",
        "code": "bad_request",
    }


def test_hosts_beyond_the_remembered_ones_are_still_bound_right() -> None:
    app = create_app(Sandbox(seed=1, allowed_hosts="*"))
    client = app.test_client()
    for n in range(ADAPTER_HOSTS_KEPT + 10):
        answer = client.get("/_sandbox/clock", headers={"Host": f"h{n}.test"})
        assert answer.status_code == 200, answer.json


def test_the_app_keeps_no_cookie_session() -> None:
    """Flask's session stays the null one, which refuses a write, on every request."""
    app = create_app(Sandbox(seed=1))
    for _ in range(2):
        with app.test_request_context():
            assert isinstance(session, NullSession)
            with pytest.raises(RuntimeError, match="session is unavailable"):
                session["user"] = "x"
    answer = app.test_client().get("/_sandbox")
    assert answer.status_code == 200 and "Set-Cookie" not in answer.headers


# --- one app, another Sandbox behind it (app.bind) -------------------------------------------


def test_a_bound_sandbox_answers_the_requests_that_follow() -> None:
    first, second = Sandbox(seed=1), Sandbox(seed=2, allowed_hosts="shop.test")
    app = create_app(first)
    client = app.test_client()
    assert client.get("/_sandbox").json["seed"] == 1  # type: ignore[index]
    assert client.get("/_sandbox", headers={"Host": "shop.test"}).status_code == 400

    bind(app, second)
    assert client.get("/_sandbox").json["seed"] == 2  # type: ignore[index]
    # The exposure rules follow the bound Sandbox's settings too.
    assert client.get("/_sandbox", headers={"Host": "shop.test"}).status_code == 200
    assert second.journal.recent(10)[0]["path"] == "/_sandbox"
    assert len(first.journal.recent(10)) == 2


def test_binding_a_sandbox_with_other_route_paths_is_refused() -> None:
    app = create_app(Sandbox())
    with pytest.raises(ValueError, match="base_url path '/v1' differs"):
        bind(app, Sandbox(base_url="http://127.0.0.1:8700/v1"))


#: (method, path, body, status, code): answers no route gives (app.py http_error).
FRAMEWORK_ANSWERS = [
    ("DELETE", "/wallet", None, 405, "method_not_allowed"),
    ("GET", "/wallet/send", None, 405, "method_not_allowed"),
    ("GET", "/wallet/transfers", None, 404, "not_found"),
    (
        "POST",
        "/wallet/send",
        b'{"recipientHandle": "' + b"x" * (1 << 20) + b'"}',
        413,
        "request_entity_too_large",
    ),
]


@pytest.mark.parametrize(("method", "path", "body", "status", "code"), FRAMEWORK_ANSWERS)
def test_the_wallets_framework_answers_carry_a_code_in_error_as_its_other_errors(
    svc_http: FlaskClient, method: str, path: str, body: bytes | None, status: int, code: str
) -> None:
    headers = {"Authorization": "Bearer x", "X-Svc-Key": "svc_test_abcdefgh"}
    answer = svc_http.open(
        path, method=method, data=body, content_type="application/json", headers=headers
    )
    assert answer.status_code == status
    assert answer.json is not None and answer.json["error"] == code
    assert answer.json["message"] and answer.json["message"] != code  # the sentence
    # The Python client reads the code from ``error`` (spec §7).
    assert from_coded_answer(status, answer.json, None).code == code


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/api/checkout", {"POST", "OPTIONS"}),
        ("DELETE", "/wallet", {"GET", "HEAD", "OPTIONS"}),
        ("PUT", "/_sandbox/clock", {"GET", "HEAD", "OPTIONS"}),
        ("DELETE", "/auth/oauth2/token", {"POST", "OPTIONS"}),
    ],
)
def test_a_405_names_the_methods_the_route_takes_in_allow(
    svc_http: FlaskClient, method: str, path: str, allowed: set[str]
) -> None:
    """RFC 9110 §15.5.6: a 405 carries Allow (schemathesis' unsupported_method checks it)."""
    answer = svc_http.open(path, method=method, json={})
    assert answer.status_code == 405
    assert set(answer.headers["Allow"].split(", ")) == allowed
    assert answer.content_type == "application/json"


#: Unknown paths under each family's root and the origin's own.
UNKNOWN_PATHS = ["/api/nope", "/auth/nope", "/wallet/nope", "/_sandbox/nope", "/nope"]


@pytest.mark.parametrize("path", UNKNOWN_PATHS)
def test_a_head_for_an_unknown_path_answers_the_headers_of_its_get(
    svc_http: FlaskClient, path: str
) -> None:
    """RFC 9110 §9.3.2: HEAD answers as GET without the body, Content-Length included."""
    get, head = svc_http.get(path), svc_http.head(path)
    assert get.status_code == head.status_code == 404
    assert f"No route for GET {path}" in get.get_data(as_text=True)
    assert head.get_data() == b""
    assert get.headers.get("Content-Length") is not None
    for answer in (get, head):
        del answer.headers["X-Request-Id"]
    assert head.headers == get.headers


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS"])
def test_no_route_serves_files_under_static(svc_http: FlaskClient, method: str) -> None:
    """The package's files are under /_assets; Flask's default /static/<path> is not served."""
    answer = svc_http.open("/static/x", method=method)
    assert answer.status_code == 404
    assert "Allow" not in answer.headers
