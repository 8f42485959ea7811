"""The tool server over stdio: the SDK's transport, fed stdin's lines one by one after each is
held to the emulator's one rule for JSON (messages.py). The SDK reads each line itself, keeps
the last of a repeated name and drops a line it cannot read without answering it; here such a
line is answered with a JSON-RPC error and never reaches the SDK."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any, cast

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from svc_sandbox.mcp.messages import line_refusal

Send = Callable[[SessionMessage], Awaitable[None]]


class CheckedLines:
    """stdin's lines as the SDK's stdio transport reads them (text, one message a line), each
    checked first. A refused line is answered through ``answer_through``'s stream, the one the
    SDK writes its own answers to (so no two writers share stdout); blank lines are skipped,
    as the SDK skips them."""

    def __init__(self, source: AsyncIterable[bytes]) -> None:
        self._source = source
        self._send: Send | None = None
        self._ready = anyio.Event()

    def answer_through(self, send: Send) -> None:
        self._send = send
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._source:
            raw = line.rstrip(b"\r\n")  # the line's end is no part of its message
            if not raw.strip():
                continue
            refusal = line_refusal(raw)
            if refusal is None:
                # Text, as the SDK's own reader gives it (UTF-8: the SDK's parser read it).
                yield raw.decode("utf-8")
                continue
            # The transport starts reading before its write stream reaches the caller.
            await self._ready.wait()
            assert self._send is not None
            await self._send(SessionMessage(refusal))


async def run_stdio(server: Server[Any]) -> None:
    """Serves ``server`` over this process's stdin and stdout until stdin closes."""
    lines = CheckedLines(anyio.wrap_file(sys.stdin.buffer))
    # The SDK's transport takes any async iterable of lines where it expects its text file.
    async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
        lines.answer_through(write_stream.send)
        await server.run(read_stream, write_stream, server.create_initialization_options())
