"""A JSON-RPC message held to the emulator's one rule for JSON (core/json_input.py: each name
once per object, depth, finite numbers, text without NUL) before the SDK reads it, over both
transports: the SDK's parser keeps the last of a repeated name."""

from __future__ import annotations

import pydantic_core
from mcp_types import (
    INVALID_PARAMS,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from svc_sandbox.core import json_input
from svc_sandbox.core.errors import ValidationFailed


def rule_refusal(raw: bytes) -> str | None:
    """The parse error's message for a message the rule refuses (``Parse error: id is
    repeated: send it once``), or None when it passes."""
    try:
        json_input.decode(raw, "message")
    except ValidationFailed as exc:
        return f"Parse error: {exc.message}"
    return None


def sdk_reads(raw: bytes) -> bool:
    """Whether the SDK's parser reads ``raw`` as JSON (else it answers a parse error itself
    over HTTP, worded its own way)."""
    try:
        pydantic_core.from_json(raw)
    except ValueError:
        return False
    return True


def line_refusal(raw: bytes) -> JSONRPCError | None:
    """The answer to a line of stdin the SDK must not read, None for a line it may. Over stdio
    the SDK drops a line it cannot read without a word (a client would wait forever), so each
    is answered as the SDK answers it over HTTP: broken JSON -32700 in the SDK's words, a
    message the rule refuses -32700 naming the path, JSON that is no JSON-RPC message
    -32602."""
    try:
        document = pydantic_core.from_json(raw)
    except ValueError as exc:
        return error(PARSE_ERROR, f"Parse error: {exc}")
    refused = rule_refusal(raw)
    if refused is not None:
        return error(PARSE_ERROR, refused)
    try:
        jsonrpc_message_adapter.validate_python(document, by_name=False)
    except ValidationError as exc:
        return error(INVALID_PARAMS, f"Validation error: {exc}")
    return None


def error(code: int, message: str) -> JSONRPCError:
    """An error answering no request the server could read (``id`` null, JSON-RPC 2.0 §5)."""
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=message))
