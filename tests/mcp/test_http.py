"""The tool server over streamable HTTP: one ``svc-sandbox mcp --http --port 0`` process for
the module, started without SVC_TOKEN (each request brings its own bearer) and with
SVC_ENABLE_WITHDRAWALS=true, against a served emulator."""

from __future__ import annotations

import json
import signal
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest

from svc_sandbox.webhooks.signing import verify
from tests.mcp.conftest import (
    INITIALIZE,
    REFUSED_MESSAGES,
    SECRET,
    HttpServer,
    Served,
    Session,
    open_http,
    server_env,
    start_http,
    stop,
    text_of,
)
from tests.mcp.test_stdio import ALL_TOOLS

JSON_POST = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def server(served: Served) -> Iterator[HttpServer]:
    env = server_env(
        SVC_BASE_URL=served.base_url,
        SVC_WEBHOOK_SECRET=SECRET,
        SVC_ENABLE_WITHDRAWALS="true",
    )
    running = start_http([], env)
    try:
        yield running
    finally:
        stop(running.process)


@pytest.fixture(scope="module")
def sessions(server: HttpServer, served: Served) -> Iterator[dict[str, Session]]:
    """One session per credential: the sandbox token, the production token, none."""
    with ExitStack() as stack:
        yield {
            "sandbox": open_http(stack, server.url, _bearer(served.tenant.token)),
            "production": open_http(stack, server.url, _bearer(served.tenant.live_token)),
            "none": open_http(stack, server.url),
        }


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_healthz(server: HttpServer, served: Served) -> None:
    answer = httpx.get(server.origin + "/healthz")
    assert answer.status_code == 200
    assert answer.json() | {"baseUrl": "-"} == {
        "status": "ok",
        "name": "svc-sandbox",
        "version": answer.json()["version"],
        "baseUrl": "-",
        "token": "per-request bearer",
        "readOnly": False,
        "withdrawals": True,
    }
    assert answer.json()["baseUrl"] == served.base_url


def test_withdrawal_mode_registers_all_17_tools(sessions: dict[str, Session]) -> None:
    for session in sessions.values():
        assert session.tool_names() == ALL_TOOLS
        assert session.prompts() == ["integrate_svc", "go_live_checklist", "debug_payment"]
        assert session.resources() == ["svc://reference"]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:3333", "127.0.0.1.nip.io"])
def test_a_foreign_host_is_refused(server: HttpServer, host: str) -> None:
    refused = httpx.post(
        server.url, json=INITIALIZE, headers={**JSON_POST, "Host": host}, timeout=10
    )
    assert refused.status_code == 421
    assert httpx.get(server.origin + "/healthz", headers={"Host": host}).status_code == 421


def test_loopback_names_and_a_foreign_origin(server: HttpServer) -> None:
    port = server.origin.rsplit(":", 1)[1]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}"):
        answer = httpx.post(server.url, json=INITIALIZE, headers={**JSON_POST, "Host": host})
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"]["serverInfo"]["name"] == "svc-sandbox"
    evil = {**JSON_POST, "Origin": "http://evil.example"}
    assert httpx.post(server.url, json=INITIALIZE, headers=evil).status_code == 403


def test_another_loopback_address_serves_its_own_url(served: Served) -> None:
    running = start_http(["--host", "127.0.0.2"], server_env(SVC_BASE_URL=served.base_url))
    try:
        assert running.origin.startswith("http://127.0.0.2:")
        assert httpx.get(running.origin + "/healthz").json()["status"] == "ok"
        answer = httpx.post(running.url, json=INITIALIZE, headers=JSON_POST)
        assert answer.status_code == 200, answer.text
        port = running.origin.rsplit(":", 1)[1]
        for host in (f"localhost:{port}", "127.0.0.2"):
            ok = httpx.post(running.url, json=INITIALIZE, headers={**JSON_POST, "Host": host})
            assert ok.status_code == 200, host
        foreign = {**JSON_POST, "Host": "evil.example"}
        assert httpx.post(running.url, json=INITIALIZE, headers=foreign).status_code == 421
    finally:
        stop(running.process)


@pytest.mark.parametrize(
    "header", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer not-a-token", "Bearer svc_prod_1"]
)
def test_a_malformed_bearer_is_refused(server: HttpServer, header: str) -> None:
    answer = httpx.post(server.url, json=INITIALIZE, headers={**JSON_POST, "Authorization": header})
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"].startswith("Bearer")
    assert "Bearer svc_test_" in answer.json()["message"]


@pytest.mark.parametrize("stray", [b"\xa0", b"\x85", b"\x1c"])
def test_a_bearer_with_a_stray_byte_around_it_is_refused(server: HttpServer, stray: bytes) -> None:
    """Only HTTP's space and tab around the token are trimmed (core/authorization.py), as the
    API trims them: str.strip() took "<token>\\xa0" for the token."""
    token = b"svc_test_abcdefgh"
    spaced = {**JSON_POST, "Authorization": b"Bearer \t" + token}
    assert httpx.post(server.url, json=INITIALIZE, headers=spaced).status_code == 200
    for sent in (stray + token, token + stray):
        headers = {**JSON_POST, "Authorization": b"Bearer " + sent}
        answer = httpx.post(server.url, json=INITIALIZE, headers=headers)
        assert answer.status_code == 401
        assert "Bearer svc_test_" in answer.json()["message"]


@pytest.mark.parametrize(
    "token",
    ["svc_test_abc", "svc_test_" + "a" * 129, "svc_live_" + "a" * 65536, "svc_test_ab-cdefgh"],
)
def test_a_token_the_api_calls_malformed_is_refused_at_the_edge(
    server: HttpServer, served: Served, token: str
) -> None:
    """One token shape (docs/spec-gaps.md "Token shape"): what the API answers 401
    "Malformed API token" the tool server refuses with 401 before any tool runs."""
    bearer = _bearer(token)
    api = httpx.get(served.base_url + "/products", headers=bearer, timeout=10)
    assert api.status_code == 401 and api.json()["message"].startswith("Malformed API token")
    answer = httpx.post(server.url, json=INITIALIZE, headers={**JSON_POST, **bearer}, timeout=10)
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"].startswith("Bearer")


def test_two_authorization_headers_are_refused_as_the_api_does(
    server: HttpServer, served: Served
) -> None:
    twice = [("Authorization", f"Bearer {served.tenant.token}")] * 2
    api = httpx.get(served.base_url + "/products", headers=twice, timeout=10)
    assert api.status_code == 401
    answer = httpx.post(
        server.url, json=INITIALIZE, headers=[*JSON_POST.items(), *twice], timeout=10
    )
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"].startswith("Bearer")
    assert answer.json()["message"] == "Authorization is repeated: send it once"


@pytest.mark.parametrize("host", ["127.0.0.1:evil.com", "localhost:1@evil.com", "a b", "[::1"])
def test_a_host_that_is_no_host_and_port_is_refused(server: HttpServer, host: str) -> None:
    """RFC 9112 §3.2: 400 (the SDK's check matched 127.0.0.1:evil.com to 127.0.0.1:*), as
    the emulator answers it."""
    answer = httpx.post(server.url, json=INITIALIZE, headers={**JSON_POST, "Host": host})
    assert answer.status_code == 400
    assert answer.json() == {"error": "invalid_host", "message": "Host must be host[:port]"}


@pytest.mark.parametrize("name", ["LOCALHOST", "Localhost", "LocalHost"])
def test_host_names_are_matched_without_case(server: HttpServer, name: str) -> None:
    port = server.origin.rsplit(":", 1)[1]
    for host in (name, f"{name}:{port}"):
        headers = {**JSON_POST, "Host": host, "Origin": f"HTTP://{name}:{port}"}
        answer = httpx.post(server.url, json=INITIALIZE, headers=headers, timeout=10)
        assert answer.status_code == 200, answer.text
        health = httpx.get(server.origin + "/healthz", headers={"Host": host}, timeout=10)
        assert health.json()["status"] == "ok"


@pytest.mark.parametrize(("find", "replace", "says"), REFUSED_MESSAGES)
def test_a_message_the_json_rule_refuses_is_a_parse_error_naming_it(
    server: HttpServer, find: str, replace: str, says: str
) -> None:
    """The SDK's parser keeps the last of a repeated name (and takes NUL, NaN, any depth):
    the emulator's one rule for JSON refuses them first, as a JSON-RPC parse error."""
    text = json.dumps(INITIALIZE)
    assert find in text
    answer = httpx.post(
        server.url, content=text.replace(find, replace, 1), headers=JSON_POST, timeout=10
    )
    assert answer.status_code == 400
    body = answer.json()
    # The request's own id, unless the refusal is about the id (then null: none was read).
    request_id = None if says.startswith("id ") else 1
    assert (body["jsonrpc"], body["id"], body["error"]["code"]) == ("2.0", request_id, -32700)
    assert body["error"]["message"].startswith("Parse error: ")
    assert says in body["error"]["message"]
    assert httpx.post(server.url, content=text, headers=JSON_POST, timeout=10).status_code == 200


@pytest.mark.parametrize("id_text", ["true", "1.0", "null", "[1]"])
def test_a_request_whose_id_is_no_string_or_integer_is_answered(
    server: HttpServer, id_text: str
) -> None:
    """The SDK took it for a notification: 202, no body, the tool not run."""
    call = '{"jsonrpc": "2.0", "id": ' + id_text + ', "method": "tools/list"}'
    answer = httpx.post(server.url, content=call, headers=JSON_POST, timeout=10)
    assert answer.status_code == 400
    assert answer.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": f"Invalid Request: id must be a string or an integer, got {id_text}",
        },
    }


def test_broken_json_and_another_type_keep_the_sdks_answers(
    server: HttpServer,
) -> None:
    broken = httpx.post(server.url, content=b'{"id": 1,', headers=JSON_POST, timeout=10)
    assert broken.status_code == 400
    assert broken.json()["error"]["code"] == -32700
    assert "repeated" not in broken.json()["error"]["message"]
    headers = {**JSON_POST, "Content-Type": "text/plain"}
    twice = b'{"id": 1, "id": 2}'
    other = httpx.post(server.url, content=twice, headers=headers, timeout=10)
    assert (other.status_code, other.text) == (400, "Invalid Content-Type header")


def test_other_methods_on_mcp(server: HttpServer) -> None:
    assert httpx.get(server.url).status_code == 405
    assert httpx.delete(server.url).status_code == 405


def test_each_request_uses_its_own_bearer(sessions: dict[str, Session]) -> None:
    sandbox, production, none = sessions["sandbox"], sessions["production"], sessions["none"]
    made = sandbox.ok("svc_create_product", {"title": "Sandbox only", "pricing_model": "free"})
    ids = [p["_id"] for p in sandbox.ok("svc_list_products")["items"]]
    assert made["product"]["_id"] in ids
    assert made["product"]["_id"] not in [
        p["_id"] for p in production.ok("svc_list_products")["items"]
    ]
    said = none.error("svc_list_products")
    assert "needs an API token" in said and "Authorization: Bearer" in said
    assert none.ok("svc_quote_withdrawal", {"amount_minor": 10000})["netAmount"] == 9195


def _earn(served: Served, production: Session, amount: int) -> None:
    """A paid order in the production organization: a direct push approved on the control plane."""
    created = production.ok(
        "svc_create_checkout",
        {
            "amount_minor": amount,
            "description": "Earnings",
            "gateway": "telebirr",
            "customer": {"email": "payer@example.com", "phone": "0911223344"},
        },
    )
    assert created["mode"] == "direct"
    served.control(f"/checkout/sessions/{created['sessionId']}/approve")
    assert (
        production.ok("svc_get_checkout_status", {"session_id": created["sessionId"]})[
            "orderStatus"
        ]
        == "paid"
    )


def test_withdrawals_with_a_production_token(served: Served, sessions: dict[str, Session]) -> None:
    production = sessions["production"]
    _earn(served, production, 50000)
    balance = production.ok("svc_get_balance")
    assert balance["eligible"] is True and balance["balanceMinor"] >= 50000
    arguments = {
        "amount_minor": 20000,
        "gateway": "telebirr",
        "account": "251911234567",
        "idempotency_key": "payout-1",
    }
    first = production.ok("svc_create_withdrawal", arguments)
    assert (first["amount"], first["feeAmount"], first["netAmount"]) == (20000, 1400, 18390)
    assert production.ok("svc_create_withdrawal", arguments)["_id"] == first["_id"]
    assert "was used before" not in text_of(production.call("svc_create_withdrawal", arguments))
    # The same key with another amount: the earlier withdrawal, and the summary says so.
    other = production.call("svc_create_withdrawal", {**arguments, "amount_minor": 30000})
    assert other.structured_content["_id"] == first["_id"]  # type: ignore[index]
    assert "The idempotency key `payout-1` was used before" in text_of(other)
    assert "Nothing new was created (300.00 ETB to telebirr was not paid out)" in text_of(other)
    assert production.ok("svc_get_withdrawal", {"withdrawal_id": first["_id"]}) == first
    assert [w["_id"] for w in production.ok("svc_list_withdrawals")["items"]] == [first["_id"]]
    quote = production.ok("svc_quote_withdrawal", {"amount_minor": 20000})
    assert quote["netAmount"] == first["netAmount"]
    too_much = production.error(
        "svc_create_withdrawal", {**arguments, "idempotency_key": "p2", "amount_minor": 10**9}
    )
    assert "HTTP 400" in too_much and "Request id" in too_much


def test_create_withdrawal_requires_an_idempotency_key(sessions: dict[str, Session]) -> None:
    arguments: dict[str, Any] = {"amount_minor": 10000, "gateway": "mpesa", "account": "0911223344"}
    assert "idempotency_key: Field required" in sessions["production"].error(
        "svc_create_withdrawal", arguments
    )
    below = {**arguments, "idempotency_key": "k", "amount_minor": 9999}
    assert "amount_minor" in sessions["production"].error("svc_create_withdrawal", below)


def _withdrawal_posts(served: Served) -> list[dict[str, Any]]:
    journal = httpx.get(served.origin + "/_sandbox/requests?limit=1000").json()["items"]
    return [r for r in journal if r["method"] == "POST" and r["path"].endswith("/withdrawals")]


def test_a_sandbox_token_is_refused_before_the_api_is_called(
    served: Served, sessions: dict[str, Session]
) -> None:
    before = _withdrawal_posts(served)
    arguments = {
        "amount_minor": 10000,
        "gateway": "telebirr",
        "account": "251911234567",
        "idempotency_key": "sandbox-try",
    }
    said = sessions["sandbox"].error("svc_create_withdrawal", arguments)
    assert "refuses a sandbox token" in said and "Nothing was sent" in said
    assert _withdrawal_posts(served) == before
    assert "needs an API token" in sessions["none"].error("svc_create_withdrawal", arguments)


def test_the_test_webhook_is_never_sent_over_http(sessions: dict[str, Session]) -> None:
    none = sessions["none"]
    url = "http://127.0.0.1:9/receiver"  # nothing listens: a send would fail
    built = none.ok("svc_create_test_webhook", {"event_type": "order.completed", "url": url})
    assert built["sent"] is False and built["receiverStatus"] is None
    assert built["curl"].startswith("curl -sS -X POST " + url)
    assert f"X-Svc-Signature: {built['signature']}" in built["curl"]
    checked = none.ok(
        "svc_verify_webhook", {"payload": built["body"], "signature": built["signature"]}
    )
    assert checked["valid"] is True
    emulator = verify(built["signature"], built["body"].encode(), SECRET, now=0, tolerance=None)
    assert emulator.valid, emulator.message


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_is_a_clean_exit(served: Served, signum: int) -> None:
    """As `svc-sandbox serve`: exit 0, not uvicorn's re-raised signal (143 or a traceback),
    also for a signal sent the moment the URL is printed."""
    running = start_http([], server_env(SVC_BASE_URL=served.base_url))
    running.process.send_signal(signum)
    assert running.process.wait(timeout=30) == 0
    assert running.process.stderr is not None
    with running.process.stderr as stderr:
        assert "Traceback" not in stderr.read()


def test_a_long_authorization_header_sent_in_pieces_is_answered_401(server: HttpServer) -> None:
    """A 64 KiB header that reaches the server in several reads (as TCP may split it under
    load) is read whole, as the emulator's server reads it, and answered 401: h11's default
    limit refused a head held incomplete past 16 KiB, and the client saw a reset."""
    body = json.dumps(INITIALIZE).encode()
    host, port = server.origin.removeprefix("http://").rsplit(":", 1)
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer svc_live_{'a' * 65536}\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(head[:20_000])
        time.sleep(0.3)  # the server reads the first piece alone
        connection.sendall(head[20_000:] + body)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]
    assert b"WWW-Authenticate: Bearer" in answer or b"www-authenticate: Bearer" in answer
