"""What a tool answers: a short markdown summary plus the typed structured content (the
payload, in the API's wire names), or a tool error carrying status, code and request id."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from svc_sandbox.client import SvcError, SvcPollTimeout, SvcRateLimitError

ResponseFormat = Literal["markdown", "json"]
#: The ``response_format`` parameter every tool takes (its description is what a model reads).
Format = Annotated[
    ResponseFormat,
    Field(description='"markdown" (default): a short summary; "json": the full payload as text'),
]

#: The client's parameter names -> the tool's (money parameters end in ``_minor``).
_PARAMETERS = {
    "amount": "amount_minor",
    "minimum_amount": "minimum_amount_minor",
    "default_amount": "default_amount_minor",
}
_LEADING_NAME = re.compile(r"^(amount|minimum_amount|default_amount)\b")


def answer(summary: str, payload: dict[str, Any], response_format: str) -> CallToolResult:
    """``response_format: json`` puts the full payload as text; markdown the summary."""
    if response_format == "json":
        text = json.dumps(payload, indent=2, ensure_ascii=False)
    else:
        text = summary
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)


def api_error(error: SvcError) -> CallToolResult:
    """An API (or transport) failure as a tool error: status, code, message, request id."""
    if isinstance(error, SvcPollTimeout):
        status = "gave up"  # every poll was answered: the session did not end in time
    else:
        status = "no answer" if error.status is None else f"HTTP {error.status}"
    lines = [f"**Error ({status}, code `{error.code}`)**: {error.message}"]
    if error.request_id:
        lines.append(f"Request id: `{error.request_id}`")
    detail: dict[str, Any] = {
        "status": error.status,
        "code": error.code,
        "message": error.message,
        "requestId": error.request_id,
    }
    if isinstance(error, SvcRateLimitError) and error.retry_after is not None:
        # A 429's Retry-After: when an agent may try again.
        detail["retryAfter"] = error.retry_after
        lines.append(f"Retry after {error.retry_after:g} s.")
    return CallToolResult(
        content=[TextContent(type="text", text="\n".join(lines))],
        structured_content={"error": detail},
        is_error=True,
    )


def bad_argument(error: ValueError) -> ToolError:
    """A client argument check as a tool error naming the tool's own parameter."""
    message = _LEADING_NAME.sub(lambda m: _PARAMETERS[m.group(1)], str(error))
    return ToolError(f"Invalid argument: {message}")


def money(minor: int | None) -> str:
    """Santim as ETB for a summary: 123456 -> '1,234.56 ETB'."""
    if minor is None:
        return "n/a"
    sign = "-" if minor < 0 else ""
    whole, cents = divmod(abs(minor), 100)
    return f"{sign}{whole:,}.{cents:02d} ETB"
