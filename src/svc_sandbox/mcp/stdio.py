"""The tool server over stdio: the SDK's transport, fed stdin's lines one by one after each is
held to the emulator's one rule for JSON (messages.py). The SDK reads each line itself, keeps
the last of a repeated name and drops a line it cannot read without answering it; here such a
line is answered with a JSON-RPC error and never reaches the SDK. When stdin closes, the
requests read by then are answered before the SDK is told: it cancels the ones still running
and answers them "Connection closed", so `cat calls.jsonl | svc-sandbox mcp` lost the answers
of its last tool calls."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Any, Self, cast

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from svc_sandbox.mcp.messages import line_refusal

Send = Callable[[SessionMessage], Awaitable[None]]


CANCELLED = "notifications/cancelled"
#: A request id as JSON tells them apart (``1`` and ``"1"`` are two requests).
IdKey = tuple[type, Any]


def id_key(request_id: Any) -> IdKey:
    return (type(request_id), request_id)


class Unanswered:
    """The requests passed to the SDK that it has not answered yet."""

    def __init__(self) -> None:
        self._ids: set[IdKey] = set()
        self._changed = anyio.Event()

    def read(self, raw: bytes) -> None:
        """Notes a line passed to the SDK, as the SDK reads it: a request is waited for (its
        id as the SDK has it: ``2.0`` is no id it answers, a message with ``error`` is a
        response); a cancellation (MCP ``notifications/cancelled``) ends the wait for its
        request, since the SDK then answers nothing."""
        try:
            message = jsonrpc_message_adapter.validate_json(raw, by_name=False)
        except ValidationError:
            return  # the SDK refuses it too, and answers it at once
        if isinstance(message, JSONRPCRequest):
            self._ids.add(id_key(message.id))
        elif isinstance(message, JSONRPCNotification) and message.method == CANCELLED:
            params = message.params or {}
            if "requestId" in params:
                self.answered(params["requestId"])

    def answered(self, request_id: Any) -> None:
        self._ids.discard(id_key(request_id))
        self._changed.set()

    async def all_answered(self) -> None:
        while self._ids:
            self._changed = anyio.Event()
            await self._changed.wait()


class NotingAnswers:
    """The SDK's write stream, noting in ``unanswered`` each answer it sends (a result or an
    error; a request of the server's own has an id too, and is no answer)."""

    def __init__(self, stream: Any, unanswered: Unanswered) -> None:
        self._stream = stream
        self._unanswered = unanswered

    async def send(self, item: SessionMessage, /) -> None:
        await self._stream.send(item)
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            self._unanswered.answered(item.message.id)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> Self:
        await self._stream.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        return cast(bool | None, await self._stream.__aexit__(exc_type, exc_val, exc_tb))


class CheckedLines:
    """stdin's lines as the SDK's stdio transport reads them (text, one message a line), each
    checked first. A refused line is answered through ``answer_through``'s stream, the one the
    SDK writes its own answers to (so no two writers share stdout); blank lines are skipped,
    as the SDK skips them."""

    def __init__(self, source: AsyncIterable[bytes], unanswered: Unanswered) -> None:
        self._source = source
        self._unanswered = unanswered
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
                self._unanswered.read(raw)
                # Text, as the SDK's own reader gives it (UTF-8: the SDK's parser read it).
                yield raw.decode("utf-8")
                continue
            # The transport starts reading before its write stream reaches the caller.
            await self._ready.wait()
            assert self._send is not None
            await self._send(SessionMessage(refusal))
        await self._unanswered.all_answered()


async def run_stdio(server: Server[Any]) -> None:
    """Serves ``server`` over this process's stdin and stdout until stdin closes."""
    unanswered = Unanswered()
    lines = CheckedLines(anyio.wrap_file(sys.stdin.buffer), unanswered)
    # The SDK's transport takes any async iterable of lines where it expects its text file.
    async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
        lines.answer_through(write_stream.send)
        noting = NotingAnswers(write_stream, unanswered)
        await server.run(read_stream, noting, server.create_initialization_options())
