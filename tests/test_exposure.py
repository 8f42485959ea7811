"""Safe to leave running (issue 9 §3): what another site, a rebinding DNS name or another
machine can and cannot do to the sandbox, and the headers every answer carries."""

from __future__ import annotations

import json
import socket
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.cli import banner
from svc_sandbox.core.validation import shown
from svc_sandbox.exposure import (
    HOST_ANSWERS_KEPT,
    HostRule,
    content_security_policy,
    usable_origins,
)
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.settings import Settings
from tests.commerce.checkout_helpers import BUYER, checkout, path, published, push_checkout

# What an HTML form on another site can send: none of them is application/json.
FORM_TYPES = [
    None,
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "text/plain",
]


# --- control plane: JSON writes only ------------------------------------------------------------


@pytest.mark.parametrize("content_type", FORM_TYPES)
@pytest.mark.parametrize(
    ("method", "route"),
    [
        ("POST", "/_sandbox/reset"),
        ("POST", "/_sandbox/clock/advance"),
        ("POST", "/_sandbox/orgs"),
        ("PUT", "/_sandbox/state"),
        ("DELETE", "/_sandbox/faults"),
    ],
)
def test_a_cross_site_form_cannot_change_the_control_plane(
    svc_http: FlaskClient, svc_sandbox: Sandbox, content_type: str | None, method: str, route: str
) -> None:
    before = svc_sandbox.export()
    headers = {"Content-Type": content_type} if content_type else {}
    response = svc_http.open(route, method=method, data="", headers=headers)
    assert response.status_code == 415
    assert response.json == {
        "error": "Control-plane requests that change state must send Content-Type: "
        "application/json (an empty body is fine)",
        "code": "unsupported_media_type",
    }
    assert svc_sandbox.export() == before


def test_an_empty_json_request_is_enough(svc_http: FlaskClient) -> None:
    response = svc_http.post("/_sandbox/reset", headers={"Content-Type": "application/json"})
    assert response.status_code == 200


@pytest.mark.parametrize("method", ["TRACE", "PROPFIND", "CONNECT", "FOO"])
@pytest.mark.parametrize(
    ("route", "status", "code"),
    [
        ("/_sandbox", 405, "method_not_allowed"),
        ("/_sandbox/clock", 405, "method_not_allowed"),
        ("/_sandbox/nope", 404, "not_found"),
    ],
)
def test_a_method_that_writes_nothing_needs_no_content_type(
    svc_http: FlaskClient, method: str, route: str, status: int, code: str
) -> None:
    """JSON only for POST, PUT, PATCH, DELETE: another method gets the answer of its route."""
    response = svc_http.open(route, method=method)
    assert (response.status_code, response.json["code"]) == (status, code)  # type: ignore[index]


def test_reads_need_no_content_type(svc_http: FlaskClient) -> None:
    assert svc_http.get("/_sandbox").status_code == 200


# --- another site's page: links and forms only (Fetch Metadata) ----------------------------------

#: What a page on another site can make a browser send in the background (fetch with
#: mode no-cors, an image, a script, a beacon), to each family.
BACKGROUND = [
    ("POST", "/_sandbox/reset"),
    ("GET", "/_sandbox/state"),
    ("GET", "/api/products?limit=1000"),
    ("POST", "/api/checkout"),
    ("POST", "/auth/oauth2/token"),
    ("GET", "/auth/oauth2/authorize?client_id=x"),
    ("POST", "/wallet/send"),
]


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
@pytest.mark.parametrize(("method", "route"), BACKGROUND)
def test_another_sites_background_requests_are_refused_unrecorded_and_uncounted(
    svc_http: FlaskClient,
    svc_sandbox: Sandbox,
    auth: dict[str, str],
    method: str,
    route: str,
    site: str,
) -> None:
    """A refused request still counted against §8's per-IP limits (40 no-token checkouts per
    5 minutes: a page could lock the developer out), filled the conformance report and the
    journal. Refused first, it does none of that."""
    product = published(svc_http, auth)
    headers = {"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "no-cors", "Content-Type": "text/plain"}
    report = svc_http.get("/_sandbox/conformance").json
    journal = svc_sandbox.journal.recent(1000)
    for _ in range(45):
        answer = svc_http.open(route, method=method, data='{"amount": 500}', headers=headers)
        assert answer.status_code == 403  # in each family's error shape, saying why
        assert f"Sec-Fetch-Site: {site}" in answer.get_data(as_text=True)
    assert svc_sandbox.journal.recent(1000) == journal
    assert svc_http.get("/_sandbox/conformance").json == report
    checkout(svc_http, None, productId=product["_id"], customer=BUYER)  # no limit spent


@pytest.mark.parametrize(
    ("site", "mode"),
    [
        ("cross-site", "navigate"),  # a link or a form of another site: a person's
        ("same-origin", "cors"),  # the dashboard's own scripts
        ("none", "navigate"),  # typed in the address bar
        (None, None),  # not a browser: curl, a test, a server
    ],
)
def test_links_forms_and_everything_but_another_sites_page_get_through(
    svc_http: FlaskClient, site: str | None, mode: str | None
) -> None:
    headers = {} if site is None else {"Sec-Fetch-Site": site, "Sec-Fetch-Mode": mode or ""}
    assert svc_http.get("/api/checkout/" + "0" * 24, headers=headers).status_code == 404
    assert svc_http.get("/_sandbox/ui", headers=headers).status_code == 200


# --- Host names (DNS rebinding) ------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8700", "127.0.0.1:8700", "[::1]:8700", "LOCALHOST:1"]
)
def test_loopback_host_names_are_served(svc_http: FlaskClient, host: str) -> None:
    assert svc_http.get("/_sandbox", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize(
    "route", ["/_sandbox", "/_sandbox/state", "/api/products", "/nowhere", "/p/p_x"]
)
@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:8700", "10.0.0.5"])
def test_other_host_names_are_refused_on_a_loopback_bind(
    svc_http: FlaskClient, route: str, host: str
) -> None:
    response = svc_http.get(route, headers={"Host": host})
    assert response.status_code == 400
    body = response.get_data(as_text=True)
    assert "is not served here" in body and "--allowed-hosts" in body
    assert "svc_test_" not in body


#: Host values that are no plain ``host[:port]`` (RFC 9112 §3.2: answered 400), though a known
#: name can be read out of each; the last is what waitress makes of two Host lines.
MALFORMED_HOSTS = [
    "evil.example@127.0.0.1",
    "localhost/evil",
    "localhost?evil",
    "localhost#evil",
    "localhost:abc",
    "localhost:99999",
    "localhost\\evil",
    "::1",
    "[::1",
    "127.0.0.1:8700, evil.example",
]


@pytest.mark.parametrize("host", MALFORMED_HOSTS)
@pytest.mark.parametrize("allowed_hosts", ["", "*"])
def test_a_host_that_is_not_a_plain_name_and_port_is_refused_naming_it(
    host: str, allowed_hosts: str
) -> None:
    sandbox = Sandbox(clock_mode="frozen", allowed_hosts=allowed_hosts)
    client = create_app(sandbox).test_client()
    before = sandbox.export()
    response = client.post("/_sandbox/orgs", json={"name": "Evil"}, headers={"Host": host})
    assert response.status_code == 400
    assert response.json == {
        "error": f"Host {shown(host)} is not a host name with an optional port (send one Host "
        "line naming this server): use http://127.0.0.1:8700",
        "code": "host_not_allowed",
    }
    assert sandbox.export() == before


@pytest.mark.parametrize("host", ["\xe9vil.example", "x" * 300 + ".example"])
def test_a_refused_host_is_named_as_sent_cut_like_any_shown_value(
    svc_http: FlaskClient, host: str
) -> None:
    message = svc_http.get("/api/products", headers={"Host": host}).json["error"]  # type: ignore[index]
    assert message.startswith(f"Host {shown(host)} is not ")
    assert "Host ''" not in message and len(message) < 300


def raw_answer(server: RunningServer, request: str) -> tuple[int, Any]:
    """The status and JSON body of ``request`` sent as written (two Host lines, an
    absolute-form target: what an HTTP client library never sends)."""
    port = urlsplit(server.url).port
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request.replace("{port}", str(port)).encode("latin-1"))
        with connection.makefile("rb") as answer:
            status = int(answer.readline().split()[1])
            length = 0
            while (line := answer.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            return status, json.loads(answer.read(length))


@pytest.mark.parametrize(
    ("request_line", "hosts", "refused"),
    [
        ("GET /_sandbox", ["127.0.0.1:{port}", "evil.example"], "'127.0.0.1:{port}, evil.example'"),
        ("GET /_sandbox", ["evil.example", "127.0.0.1:{port}"], "'evil.example, 127.0.0.1:{port}'"),
        ("GET http://evil.example/_sandbox", ["127.0.0.1:{port}"], "'evil.example'"),
        ("GET http://evil.example@127.0.0.1/_sandbox", ["127.0.0.1:{port}"], "'evil.example@"),
        ("GET http://127.0.0.1:{port}/_sandbox", ["127.0.0.1:{port}"], None),
        ("GET /_sandbox", ["127.0.0.1:{port}"], None),
    ],
)
def test_two_host_lines_and_a_foreign_absolute_target_are_refused(
    svc_server: RunningServer, request_line: str, hosts: list[str], refused: str | None
) -> None:
    lines = [f"{request_line} HTTP/1.1", *(f"Host: {host}" for host in hosts)]
    status, body = raw_answer(svc_server, "\r\n".join([*lines, "Connection: close", "", ""]))
    if refused is None:
        assert (status, body["name"]) == (200, "svc-sandbox")
    else:
        port = str(urlsplit(svc_server.url).port)
        assert (status, body["code"]) == (400, "host_not_allowed")
        assert refused.replace("{port}", port) in body["error"]


def test_the_public_url_and_allowed_hosts_are_served() -> None:
    sandbox = Sandbox(
        clock_mode="frozen", public_url="https://sandbox.test:9443", allowed_hosts="dev.box"
    )
    client = create_app(sandbox).test_client()
    for host in ("sandbox.test", "sandbox.test:9443", "dev.box:8700", "localhost"):
        assert client.get("/_sandbox", headers={"Host": host}).status_code == 200, host
    assert client.get("/_sandbox", headers={"Host": "other.test"}).status_code == 400


@pytest.mark.parametrize(
    "allowed", ["bücher.example", "BÜCHER.example", "xn--bcher-kva.example", "ቡና.example"]
)
def test_an_international_allowed_host_is_compared_in_its_ascii_form(allowed: str) -> None:
    """A Host header is ASCII: ``--allowed-hosts bücher.example`` serves the name browsers
    send, ``xn--bcher-kva.example`` (it was compared in Unicode and matched nothing)."""
    rule = HostRule(Settings(allowed_hosts=allowed))
    ascii_name = allowed.lower().encode("idna").decode("ascii")
    assert rule.allows(f"{ascii_name}:8700") and rule.allows(ascii_name.upper())
    assert not rule.allows("xn--other-kva.example")


@pytest.mark.parametrize("public_url", ["http://bücher.example:8700", "http://127.0.0.1/é"])
def test_a_public_url_that_is_no_ascii_uri_is_refused_naming_the_xn_form(
    public_url: str,
) -> None:
    with pytest.raises(ValueError, match="xn-- form"):
        Settings(public_url=public_url)


def test_a_wide_bind_also_serves_ip_addresses_but_not_names() -> None:
    rule = HostRule(Settings(host="0.0.0.0"))
    assert rule.allows("192.168.1.20:8700") and rule.allows("[fe80::1]:8700")
    assert not rule.allows("attacker.example")
    assert HostRule(Settings(allowed_hosts="*")).allows("anything.example")


# --- other machines -------------------------------------------------------------------------------


def test_the_control_plane_refuses_other_machines(svc_http: FlaskClient) -> None:
    remote = {"REMOTE_ADDR": "192.168.1.20"}
    response = svc_http.get("/_sandbox", environ_base=remote)
    assert response.status_code == 403
    assert response.json["code"] == "remote_control"  # type: ignore[index]
    assert "--allow-remote-control" in response.json["error"]  # type: ignore[index]
    # the public API still answers them
    assert svc_http.get("/api/products", environ_base=remote).status_code == 403  # no token


@pytest.mark.parametrize("peer", ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"])
def test_every_loopback_peer_is_this_machine(svc_http: FlaskClient, peer: str) -> None:
    assert svc_http.get("/_sandbox", environ_base={"REMOTE_ADDR": peer}).status_code == 200


def test_allow_remote_control_lets_them_in() -> None:
    client = create_app(Sandbox(clock_mode="frozen", allow_remote_control=True)).test_client()
    assert client.get("/_sandbox", environ_base={"REMOTE_ADDR": "192.168.1.20"}).status_code == 200


@pytest.mark.parametrize(
    ("host", "origin"),
    [("0.0.0.0", "http://127.0.0.1:8700"), ("::", "http://[::1]:8700")],
)
def test_a_wildcard_bind_hands_out_usable_urls(host: str, origin: str) -> None:
    settings = Settings(host=host)
    assert settings.origin == origin
    assert settings.root("pay_url") == origin + "/pay"
    origins = usable_origins(settings)
    assert origins[0] == origin and all("0.0.0.0" not in o for o in origins)
    text = banner(Sandbox(Settings(host=host, clock_mode="frozen")).info(), origins)
    assert "0.0.0.0" not in text and origin in text


def test_a_wildcard_bind_lists_only_addresses_of_this_machine() -> None:
    """Each origin past loopback names an address a socket here can bind (so it is this
    machine's); the route's source address is among them when there is a route at all (the
    hostname alone often resolves to 127.0.0.1 only, and nothing else was listed)."""
    listed = [urlsplit(o).hostname for o in usable_origins(Settings(host="0.0.0.0"))[1:]]
    for address in listed:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.bind((address, 0))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("198.51.100.7", 9))  # another documentation address (RFC 5737)
        except OSError:  # no route off this machine: nothing more to list
            return
        source = probe.getsockname()[0]
    if not source.startswith("127."):
        assert source in listed


# --- headers --------------------------------------------------------------------------------------


def test_every_answer_carries_nosniff_and_a_referrer_policy(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    for response in (
        svc_http.get("/_sandbox"),
        svc_http.get("/api/products", headers=auth),
        svc_http.get("/nowhere"),
        svc_http.get("/_sandbox", headers={"Host": "attacker.example"}),
    ):
        assert response.headers.getlist("X-Content-Type-Options") == ["nosniff"]
        assert response.headers.getlist("Referrer-Policy") == ["no-referrer"]
        # JSON holding every token is no other site's to frame or embed either.
        assert response.headers.getlist("X-Frame-Options") == ["DENY"]
        assert response.headers.getlist("Cross-Origin-Resource-Policy") == ["same-origin"]
        assert "Content-Security-Policy" not in response.headers


@pytest.mark.parametrize(
    "route", ["/_sandbox", "/_sandbox/state", "/_sandbox/users", "/_sandbox/ui", "/_sandbox/nope"]
)
def test_control_plane_answers_stay_out_of_the_browsers_cache(
    svc_http: FlaskClient, route: str
) -> None:
    """Tokens, client secrets and passwords were found in Chromium's disk cache."""
    assert svc_http.get(route).headers.getlist("Cache-Control") == ["no-store"]


def test_other_answers_keep_their_cache_rules(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    assert "Cache-Control" not in svc_http.get("/api/products", headers=auth).headers
    assert svc_http.get("/auth/jwks").headers.get("Cache-Control") != "no-store"


def test_the_common_headers_replace_what_a_route_set() -> None:
    """They are added as the answer leaves (a WSGI middleware): a route's own value of one of
    them is replaced, never sent twice."""
    app = create_app(Sandbox(clock_mode="frozen"))

    @app.get("/_sandbox/own-headers")
    def own_headers() -> tuple[str, int, dict[str, str]]:
        return "x", 200, {"Referrer-Policy": "unsafe-url", "X-Content-Type-Options": "sniff"}

    response = app.test_client().get("/_sandbox/own-headers")
    assert response.headers.getlist("Referrer-Policy") == ["no-referrer"]
    assert response.headers.getlist("X-Content-Type-Options") == ["nosniff"]


def test_host_answers_stay_right_past_the_remembered_ones(svc_http: FlaskClient) -> None:
    """The Host rule remembers its answers for a few names; any name past those is still
    worked out, and a refused name stays refused when it comes again."""
    for n in range(HOST_ANSWERS_KEPT + 10):
        assert svc_http.get("/_sandbox", headers={"Host": f"n{n}.example"}).status_code == 400
    assert svc_http.get("/_sandbox", headers={"Host": "n0.example"}).status_code == 400
    assert svc_http.get("/_sandbox", headers={"Host": "localhost:9"}).status_code == 200
    assert svc_http.get("/_sandbox", headers={"Host": "localhost:9"}).status_code == 200


def test_pages_forbid_scripts_and_framing(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    product = published(svc_http, auth)
    session = push_checkout(svc_http, auth)
    for url in (f"/p/{product['checkoutToken']}", path(session["checkoutUrl"]), "/p/p_missing"):
        policy = svc_http.get(url).headers["Content-Security-Policy"]
        directives = dict(d.split(" ", 1) for d in policy.split("; "))
        assert directives["default-src"] == "'none'"  # no script-src: no script runs
        assert directives["frame-ancestors"] == "'none'"
        assert "http://127.0.0.1:8700" in directives["form-action"]


# --- hosted-page forms (CSRF) ---------------------------------------------------------------------


def _forms(client: FlaskClient, auth: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """Each state-changing hosted-page form (action and fields), as a forger would send it."""
    product = published(client, auth)
    link = checkout(client, auth, productId=product["_id"])
    simulator = path(push_checkout(client, auth)["checkoutUrl"])
    return [
        (path(link["checkoutUrl"]), {"gateway": "telebirr", "phone": "0900000001", **BUYER}),
        (simulator + "/approve", {}),
        (simulator + "/fail", {"code": "payment_failed"}),
        (f"/p/{product['checkoutToken']}", {"email": "a@b.co"}),
    ]


@pytest.mark.parametrize(
    "forged",
    # Non-ASCII text too: hmac.compare_digest refuses such str (it was a 500).
    [None, "", "0" * 32, "stale-token-of-another-process", "é" * 32, 'q\x90\xaf"\x1b\U0010fffd'],
)
def test_a_form_without_its_pages_token_changes_nothing(
    svc_http: FlaskClient, svc_sandbox: Sandbox, auth: dict[str, str], forged: str | None
) -> None:
    for action, fields in _forms(svc_http, auth):
        before = svc_sandbox.export()
        data = fields if forged is None else {**fields, "csrf": forged}
        response = svc_http.post(action, data=data)
        assert response.status_code == 403, action
        assert response.mimetype == "text/html"
        assert "out of date" in response.get_data(as_text=True)
        assert svc_sandbox.export() == before


def test_a_token_is_bound_to_its_page(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    from tests.pages.forms import csrf_of

    first = path(push_checkout(svc_http, auth)["checkoutUrl"])
    second = path(push_checkout(svc_http, auth)["checkoutUrl"])
    stolen = csrf_of(svc_http, first)
    assert svc_http.post(second + "/approve", data={"csrf": stolen}).status_code == 403
    assert svc_http.post(first + "/approve", data={"csrf": stolen}).status_code == 303


def test_json_requests_to_pages_need_no_token(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    simulator = path(push_checkout(svc_http, auth)["checkoutUrl"])
    response = svc_http.post(simulator + "/approve", json={})
    assert response.status_code == 200 and response.json["status"] == "completed"  # type: ignore[index]


@pytest.mark.parametrize(
    ("target", "source"),
    [
        ("https://app.example/cb?x=1", "https://app.example"),
        ("http://[::1]:8080/cb", "http:"),  # CSP has no IPv6 host-source: the scheme
        ("https://u:p@App.Example:8443/cb", "https://app.example:8443"),
        ("https://ቡና.example/cb", "https://xn--1zd4h.example"),  # a CSP source is ASCII
        ("http://[::1", None),  # cannot be parsed
        ("http://x; script-src * 'unsafe-inline'; form-action *; a", None),
        ("http://a b/", None),
        ("http://a\x0bb/", None),
        ("javascript://x/", None),
    ],
)
def test_a_form_target_adds_its_origin_to_the_policy_or_nothing(
    target: str, source: str | None
) -> None:
    settings = Settings()
    policy = content_security_policy(settings, [target])
    directives = dict(d.split(" ", 1) for d in policy.split("; "))
    assert list(directives) == [
        "default-src",
        "style-src",
        "script-src",
        "connect-src",
        "img-src",
        "form-action",
        "base-uri",
        "frame-ancestors",
    ]
    assert directives["script-src"] == "'self'"
    own = content_security_policy(settings)
    assert (policy == own) is (source is None)
    if source is not None:
        sources = directives["form-action"].split(" ")
        assert sources[0] == "'self'"
        assert sorted(sources[1:]) == sorted(["http://127.0.0.1:8700", source])
