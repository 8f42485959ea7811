"""The baseline of bench/tool_server.py's start-up: the smallest tool server on the same SDK
(one tool, stdio), i.e. the floor that Python and the mcp package set."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def ping() -> str:
    """Answers pong."""
    return "pong"


if __name__ == "__main__":
    server.run()
