"""Fixtures of the tool-server tests: a served emulator per module, and MCP sessions over the
official SDK's client (``ClientSession``) to a real ``svc-sandbox mcp`` process, over stdio or
streamable HTTP, driven from synchronous tests through an anyio blocking portal."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx
import httpx2
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.server import ServerThread
from svc_sandbox.testing.emulator import InProcessEmulator, Tenant

SVC = str(Path(sys.executable).with_name("svc-sandbox"))
SECRET = "whsec_tool_server_tests"
#: Variables of the tool server a test run must not inherit from the developer's shell.
OWN_VARIABLES = (
    "SVC_TOKEN",
    "SVC_BASE_URL",
    "SVC_WEBHOOK_SECRET",
    "SVC_READ_ONLY",
    "SVC_ENABLE_WITHDRAWALS",
    "SVC_MCP_TRANSPORT",
    "PORT",
    "HOST",
)

#: A JSON-RPC initialize request, as a client sends it first.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}

#: INITIALIZE's text with one thing the emulator's JSON rule refuses, and what the refusal says.
REFUSED_MESSAGES = [
    ('"id": 1,', '"id": 1, "id": 2,', "id is repeated: send it once"),
    ('"name": "raw",', '"name": "raw", "name": "other",', "params.clientInfo.name is repeated"),
    ('"version": "1"', '"version": "1\\u0000"', "params.clientInfo.version"),
    ('"capabilities": {}', '"capabilities": ' + "[" * 70 + "]" * 70, "nests deeper than 64"),
    ('"capabilities": {}', '"capabilities": {"x": NaN}', "params.capabilities.x"),
]


@dataclass
class Served:
    sandbox: Sandbox
    origin: str
    tenant: Tenant

    @property
    def base_url(self) -> str:
        return self.origin + "/api"

    def control(self, path: str, body: Any = None) -> Any:
        answer = httpx.post(self.origin + "/_sandbox" + path, json=body or {}, timeout=10)
        assert answer.status_code == 200, answer.text
        return answer.json()


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    sandbox = Sandbox(clock_mode="frozen", seed=1)
    sandbox.settings.host, sandbox.settings.port = "127.0.0.1", 0
    thread = ServerThread(create_app(sandbox), sandbox.settings).start()
    try:
        emulator = InProcessEmulator(sandbox, thread.origin)
        yield Served(sandbox, thread.origin, emulator.create_tenant("mcp tests"))
    finally:
        thread.close()


def server_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in OWN_VARIABLES}
    env.update(extra)
    return env


class Session:
    """A ClientSession on a portal's event loop, called from synchronous tests."""

    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        return self.portal.call(lambda: self.session.call_tool(name, arguments or {}))

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        result = self.call(name, arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content

    def error(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        result = self.call(name, arguments)
        assert result.is_error, result.structured_content
        return text_of(result)

    def tool_names(self) -> list[str]:
        return [t.name for t in self.portal.call(self.session.list_tools).tools]

    def list_tools(self) -> Any:
        return self.portal.call(self.session.list_tools).tools

    def prompts(self) -> list[str]:
        return [p.name for p in self.portal.call(self.session.list_prompts).prompts]

    def prompt(self, name: str, arguments: dict[str, str] | None = None) -> Any:
        return self.portal.call(lambda: self.session.get_prompt(name, arguments))

    def resources(self) -> list[str]:
        return [str(r.uri) for r in self.portal.call(self.session.list_resources).resources]

    def read(self, uri: str) -> Any:
        return self.portal.call(lambda: self.session.read_resource(uri))


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


@dataclass
class StdioServer:
    session: Session
    errors: IO[str]


def open_stdio(stack: ExitStack, args: list[str], env: dict[str, str], log: Path) -> Session:
    """``svc-sandbox mcp ARGS`` as a subprocess, and an initialized session to it."""
    portal = stack.enter_context(start_blocking_portal())
    errors = stack.enter_context(log.open("w"))
    params = StdioServerParameters(command=SVC, args=["mcp", *args], env=env)
    read, write = stack.enter_context(
        portal.wrap_async_context_manager(stdio_client(params, errlog=errors))
    )
    session = stack.enter_context(portal.wrap_async_context_manager(ClientSession(read, write)))
    portal.call(session.initialize)
    return Session(portal, session)


def open_http(stack: ExitStack, url: str, headers: dict[str, str] | None = None) -> Session:
    """An initialized session to a streamable-HTTP tool server at ``url``."""
    portal = stack.enter_context(start_blocking_portal())
    client = httpx2.AsyncClient(headers=headers or {}, timeout=30)
    stack.enter_context(portal.wrap_async_context_manager(client))
    read, write = stack.enter_context(
        portal.wrap_async_context_manager(streamable_http_client(url, http_client=client))
    )
    session = stack.enter_context(portal.wrap_async_context_manager(ClientSession(read, write)))
    portal.call(session.initialize)
    return Session(portal, session)


@dataclass
class HttpServer:
    process: subprocess.Popen[str]
    origin: str

    @property
    def url(self) -> str:
        return self.origin + "/mcp"


def start_http(args: list[str], env: dict[str, str]) -> HttpServer:
    """``svc-sandbox mcp --http --port 0 ARGS``; its origin from the line it prints."""
    process = subprocess.Popen(
        [SVC, "mcp", "--http", "--port", "0", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    found = re.search(r"serving (http://\S+)/mcp", line)
    if found is None:
        process.kill()
        raise AssertionError(f"the tool server did not start: {line}{process.stderr.read()}")
    return HttpServer(process, found.group(1))


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stderr is not None:
        process.stderr.close()
