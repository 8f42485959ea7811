"""The tool server (svc-sandbox mcp), measured against baselines taken in the same run:

1. Throughput over streamable HTTP: `svc_get_checkout_status` tool calls per second (through
   the SDK's ClientSession, and as raw JSON-RPC POSTs) against GET {base_url}/checkout/{id}
   called directly, sequentially, on the same emulator.
2. Start-up: `svc-sandbox mcp` over stdio from spawn to the first answered tools/list, against
   the smallest server on the same SDK (bench/_bare_mcp.py).

Usage: .venv/bin/python bench/tool_server.py [calls] [start-up runs]
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import httpx
import httpx2
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.server import ServerThread
from svc_sandbox.testing.emulator import InProcessEmulator

HERE = Path(__file__).parent
SVC = str(Path(sys.executable).with_name("svc-sandbox"))
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("SVC_")}


def rest_rate(url: str, calls: int) -> float:
    with httpx.Client() as http:
        http.get(url).raise_for_status()
        started = time.perf_counter()
        for _ in range(calls):
            http.get(url).raise_for_status()
        return calls / (time.perf_counter() - started)


def raw_rate(mcp_url: str, token: str, session_id: str, calls: int) -> float:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "svc_get_checkout_status", "arguments": {"session_id": session_id}},
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    with httpx.Client(headers=headers) as http:
        started = time.perf_counter()
        for _ in range(calls):
            answer = http.post(mcp_url, json=body)
            assert answer.status_code == 200 and "isError" not in answer.text[:0], answer.text
        return calls / (time.perf_counter() - started)


async def session_rate(mcp_url: str, token: str, session_id: str, calls: int) -> float:
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        )
        read, write = await stack.enter_async_context(
            streamable_http_client(mcp_url, http_client=client)
        )
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        arguments = {"session_id": session_id}
        await session.call_tool("svc_get_checkout_status", arguments)
        started = time.perf_counter()
        for _ in range(calls):
            result = await session.call_tool("svc_get_checkout_status", arguments)
            assert not result.is_error
        return calls / (time.perf_counter() - started)


async def stdio_startup(command: str, args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    params = StdioServerParameters(command=command, args=args, env=env)
    with open(os.devnull, "w") as quiet:
        async with AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(stdio_client(params, errlog=quiet))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            await session.list_tools()
            return time.perf_counter() - started


def throughput(calls: int) -> None:
    sandbox = Sandbox(clock_mode="frozen", seed=1)
    sandbox.settings.host, sandbox.settings.port = "127.0.0.1", 0
    thread = ServerThread(create_app(sandbox), sandbox.settings).start()
    tenant = InProcessEmulator(sandbox, thread.origin).create_tenant("bench")
    base = thread.origin + "/api"
    created = httpx.post(
        base + "/checkout",
        json={"amount": 1000, "description": "Bench"},
        headers={"Authorization": f"Bearer {tenant.token}"},
    ).json()
    session_id = created["sessionId"]
    env = {**CLEAN_ENV, "SVC_BASE_URL": base}
    process = subprocess.Popen(
        [SVC, "mcp", "--http", "--port", "0"], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stderr is not None
        found = re.search(r"(http://\S+/mcp)", process.stderr.readline())
        assert found, "the tool server printed no URL"
        mcp_url = found.group(1)
        rest = rest_rate(f"{base}/checkout/{session_id}", calls)
        raw = raw_rate(mcp_url, tenant.token, session_id, calls)
        via_sdk = anyio.run(session_rate, mcp_url, tenant.token, session_id, calls)
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()
        thread.close()
    print(f"calls: {calls} sequential")
    print(f"REST GET /checkout/{{id}} directly       {rest:8.1f} calls/s")
    print(f"tools/call over HTTP (raw JSON-RPC)    {raw:8.1f} calls/s  ratio {raw / rest:.2f}")
    print(
        f"tools/call over HTTP (ClientSession)   {via_sdk:8.1f} calls/s  ratio {via_sdk / rest:.2f}"
    )


def startup(runs: int) -> None:
    ours, base = [], []
    for _ in range(runs):
        ours.append(anyio.run(stdio_startup, SVC, ["mcp"], CLEAN_ENV))
        bare = [str(HERE / "_bare_mcp.py")]
        base.append(anyio.run(stdio_startup, sys.executable, bare, CLEAN_ENV))
    ours_median, base_median = statistics.median(ours), statistics.median(base)
    print(f"start-up runs: {runs}")
    print(f"svc-sandbox mcp (stdio) to tools/list   median {ours_median * 1000:7.1f} ms")
    print(f"bare MCPServer (stdio) to tools/list    median {base_median * 1000:7.1f} ms")
    print(f"ratio (svc-sandbox mcp / bare MCPServer): {ours_median / base_median:.2f}")


if __name__ == "__main__":
    throughput(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
    startup(int(sys.argv[2]) if len(sys.argv) > 2 else 5)
