"""The streamable HTTP transport (spec §1): ``POST /mcp``, stateless, a fresh server per
request authenticated by the env token or the request's own bearer; ``GET /healthz``. On a
loopback address a foreign Host (or Origin) is refused: DNS-rebinding protection, by the
SDK's own transport-security check. A JSON-RPC message is held to the emulator's one rule for
JSON before the SDK reads it (messages.py)."""

from __future__ import annotations

import ipaddress
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import FrameType
from typing import Any

import httpx
import uvicorn
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp_types import PARSE_ERROR, JSONRPCError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from svc_sandbox import __version__
from svc_sandbox.client.commerce import is_api_token
from svc_sandbox.core.authorization import scheme_and_credentials
from svc_sandbox.core.validation import host_name
from svc_sandbox.mcp.backend import Backend
from svc_sandbox.mcp.config import McpConfig
from svc_sandbox.mcp.messages import (
    answered_id,
    error,
    id_refusal,
    rule_refusal,
    sdk_reading,
)
from svc_sandbox.mcp.server import NAME, build_server
from svc_sandbox.server import LISTEN_ERRORS, MAX_REQUEST_HEAD_BYTES, cannot_listen

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def transport_security(host: str) -> TransportSecuritySettings | None:
    """Loopback binds accept only loopback Host names and the bound address (any port), and
    their Origins; others: None."""
    if not is_loopback(host):
        return None
    bound = f"[{host}]" if ":" in host and not host.startswith("[") else host
    names = [*LOOPBACK_NAMES, *([bound] if bound not in LOOPBACK_NAMES else [])]
    hosts = [*names, *(f"{name}:*" for name in names)]
    origins = [f"http://{name}{port}" for name in names for port in ("", ":*")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def _unauthorized(message: str) -> Response:
    return JSONResponse(
        {"error": "invalid_token", "message": message},
        status_code=401,
        headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
    )


def request_token(config: McpConfig, request: Request) -> tuple[str | None, Response | None]:
    """The token a request's tools use: the env token, else its own ``Authorization: Bearer``
    (none: the token-free tools still work); a malformed header is refused with 401."""
    if config.token is not None:
        return config.token, None
    headers = request.headers.getlist("authorization")
    if not headers:
        return None, None
    if len(headers) > 1:  # which one to use is a guess: the API answers 401 too
        return None, _unauthorized("Authorization is repeated: send it once")
    scheme, token = scheme_and_credentials(headers[0])
    if scheme.lower() != "bearer" or not is_api_token(token):
        return None, _unauthorized(
            "Authorization must be `Bearer svc_test_...` or `Bearer svc_live_...`"
        )
    return token, None


class CheckedHost:
    """A Host that is no ``host[:port]`` is 400 (RFC 9112 §3.2; the SDK's check matched
    ``127.0.0.1:evil.com`` to ``127.0.0.1:*``), as the emulator answers it. Host names (and
    an Origin's scheme and host) are case-insensitive (RFC 9110 §4.2.3): the SDK's
    transport-security check compares exact strings, so both reach it lowercased."""

    FOLDED = (b"host", b"origin")

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            hosts = [v for k, v in scope["headers"] if k == b"host"]
            if any(host_name(v.decode("latin-1")) is None for v in hosts):
                refusal = JSONResponse(
                    {"error": "invalid_host", "message": "Host must be host[:port]"},
                    status_code=400,
                )
                await refusal(scope, receive, send)
                return
            headers = [(k, v.lower() if k in self.FOLDED else v) for k, v in scope["headers"]]
            scope = {**scope, "headers": headers}
        await self.app(scope, receive, send)


class McpEndpoint:
    """POST /mcp: a fresh, stateless server for each request (an ASGI app)."""

    def __init__(self, config: McpConfig, security: TransportSecuritySettings | None) -> None:
        self.config = config
        self.security = security
        self.http: httpx.AsyncClient | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        token, refusal = request_token(self.config, request)
        if refusal is None and _is_json(request):
            body = await request.body()
            refusal = message_refusal(body)
            receive = _replay(body, receive)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        server = build_server(Backend(self.config, token, self.http))
        server.streamable_http_app(
            stateless_http=True, json_response=True, transport_security=self.security
        )
        manager = server.session_manager
        async with manager.run():
            await manager.handle_request(scope, receive, send)


def message_refusal(body: bytes) -> Response | None:
    """A 400 JSON-RPC error for a message the SDK would read but must not: one the emulator's
    JSON rule refuses (a parse error: ``id is repeated: send it once``) or a request whose id
    is no string or integer (-32600: the SDK took it for a notification, 202 and no answer);
    None for a message that passes, and for one the SDK refuses itself (broken JSON: its own
    parse error, worded as it words it)."""
    reading = sdk_reading(body)
    if reading is None:
        return None
    refused = rule_refusal(body)
    if refused is not None:
        refusal: JSONRPCError | None = error(PARSE_ERROR, refused, answered_id(reading[0], refused))
    else:
        refusal = id_refusal(reading[0])
    if refusal is None:
        return None
    answer = refusal.model_dump(by_alias=True, exclude_unset=True)
    return JSONResponse(answer, status_code=400)


def _is_json(request: Request) -> bool:
    """Whether the SDK would parse the body (it answers 415 to any other type first)."""
    media_type = request.headers.get("content-type", "").split(";")[0]
    return any(part.strip() == "application/json" for part in media_type.split(","))


def _replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` as the SDK needs it after the body was read here: the body once, then
    whatever the connection says next (a disconnect)."""
    pending = [body]

    async def again() -> Message:
        if pending:
            return {"type": "http.request", "body": pending.pop(), "more_body": False}
        return await receive()

    return again


def create_app(config: McpConfig) -> Starlette:
    security = transport_security(config.host)
    guard = TransportSecurityMiddleware(security)
    endpoint = McpEndpoint(config, security)

    async def healthz(request: Request) -> Response:
        refusal = await guard.validate_request(request)
        if refusal is not None:
            return refusal
        return JSONResponse(
            {
                "status": "ok",
                "name": NAME,
                "version": __version__,
                "baseUrl": config.base_url,
                "token": "env" if config.token else "per-request bearer",
                "readOnly": config.read_only,
                "withdrawals": config.enable_withdrawals,
            }
        )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with httpx.AsyncClient(timeout=config.timeout) as http:
            endpoint.http = http
            yield

    routes = [
        Route("/mcp", endpoint=endpoint, methods=["POST"]),
        Route("/healthz", endpoint=healthz, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(CheckedHost)])


def serve_http(config: McpConfig) -> int:
    """Serves until interrupted; prints the URL (with the real port when --port 0) to stderr."""
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY only on sockets that say so, and
    # without it every answer waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((config.host, config.port))
        # Listening before the URL is printed: a client that connects at once waits in the
        # backlog until uvicorn accepts, instead of being refused.
        sock.listen(2048)
    except LISTEN_ERRORS as exc:
        sock.close()
        print(cannot_listen(config.host, config.port, exc), file=sys.stderr)
        return 2
    port = sock.getsockname()[1]
    host = f"[{config.host}]" if family == socket.AF_INET6 else config.host
    settings: dict[str, Any] = {
        "log_level": "warning",
        "lifespan": "on",
        # h11 refuses a request head it has not read whole once it holds more than 16 KiB, so
        # whether a 64 KiB Authorization header was answered 401 or cut off with a reset
        # depended on how TCP split it. The emulator's own server (waitress) reads heads up
        # to 256 KiB; the tool server reads what the emulator reads.
        "h11_max_incomplete_event_size": MAX_REQUEST_HEAD_BYTES,
    }
    server = uvicorn.Server(uvicorn.Config(create_app(config), **settings))
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then raises the signal again for the
    # handler it found (by default: exit 143, or KeyboardInterrupt's traceback). A stop asked
    # for is a clean exit here, as for `svc-sandbox serve`. The handler found asks the server
    # to stop: a signal sent as soon as the URL is read is not lost either.

    def stop(signum: int, frame: FrameType | None) -> None:
        server.should_exit = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        print(f"svc-sandbox mcp: serving http://{host}:{port}/mcp", file=sys.stderr, flush=True)
        server.run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
