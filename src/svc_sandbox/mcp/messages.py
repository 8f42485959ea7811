"""A JSON-RPC message held to the emulator's one rule for JSON (core/json_input.py: each name
once per object, depth, finite numbers, text without NUL) before the SDK reads it, over both
transports: the SDK's parser keeps the last of a repeated name."""

from __future__ import annotations

import json
from typing import Any

import pydantic_core
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from svc_sandbox.core import json_input
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.validation import cut

PARSE_ERROR_PREFIX = "Parse error: "
#: How much of a refused id its message repeats.
ID_SHOWN = 40


def rule_refusal(raw: bytes) -> str | None:
    """The parse error's message for a message the rule refuses (``Parse error: id is
    repeated: send it once``), or None when it passes."""
    try:
        json_input.decode(raw, "message")
    except ValidationFailed as exc:
        return f"{PARSE_ERROR_PREFIX}{exc.message}"
    return None


def sdk_reading(raw: bytes) -> tuple[Any] | None:
    """``(document,)`` as the SDK's parser reads ``raw``, or None when it cannot read it as
    JSON (it then answers a parse error itself over HTTP, worded its own way)."""
    try:
        return (pydantic_core.from_json(raw),)
    except ValueError:
        return None


def answered_id(document: Any, refusal: str) -> str | int | None:
    """The id to answer a message the rule refused with: its own when the refusal is not
    about the id (a client matches answers by id: the SDK's waited for an answer to its
    request until its own timeout), else null (JSON-RPC 2.0 §5: an id that could not be
    read, a repeated one among them)."""
    if not isinstance(document, dict) or refusal.startswith(PARSE_ERROR_PREFIX + "id "):
        return None
    found = document.get("id")
    if isinstance(found, bool) or not isinstance(found, str | int):
        return None
    return found


def id_refusal(document: Any) -> JSONRPCError | None:
    """-32600 for a request whose ``id`` is no string or integer (``true``, ``1.0``, null, an
    object), None for any other message. MCP: a request id "MUST be a string or integer";
    the SDK reads such a message as a notification and answers nothing, so its client waited
    forever (JSON-RPC 2.0 §5.1: an invalid request is answered, with id null)."""
    if not isinstance(document, dict) or "method" not in document or "id" not in document:
        return None
    found = document["id"]
    if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
        return None
    shown = json.dumps(found)
    return error(
        INVALID_REQUEST,
        f"Invalid Request: id must be a string or an integer, got {cut(shown, ID_SHOWN)}",
    )


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
        return error(PARSE_ERROR, refused, answered_id(document, refused))
    refused_id = id_refusal(document)
    if refused_id is not None:
        return refused_id
    try:
        jsonrpc_message_adapter.validate_python(document, by_name=False)
    except ValidationError as exc:
        return error(INVALID_PARAMS, f"Validation error: {exc}")
    return None


def error(code: int, message: str, request_id: str | int | None = None) -> JSONRPCError:
    """An error answering the request ``request_id``, or (null) no request the server could
    read (JSON-RPC 2.0 §5)."""
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))
