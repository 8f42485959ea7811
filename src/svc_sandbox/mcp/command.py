"""``svc-sandbox mcp``: the tool server over stdio (default) or streamable HTTP."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import anyio
import httpx

from svc_sandbox.mcp.backend import Backend
from svc_sandbox.mcp.config import McpConfig, from_args, parser
from svc_sandbox.mcp.server import build_server


async def serve_stdio(config: McpConfig) -> None:
    async with httpx.AsyncClient(timeout=config.timeout) as http:
        server = build_server(Backend(config, config.token, http))
        await server.run_stdio_async()


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    try:
        config = from_args(args)
    except ValueError as error:
        print(f"svc-sandbox mcp: {error}", file=sys.stderr)
        return 2
    if config.http:
        from svc_sandbox.mcp.http import serve_http

        return serve_http(config)
    anyio.run(serve_stdio, config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
