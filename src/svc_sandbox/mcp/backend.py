"""What a tool call talks to: the settings of its server and the token it authenticates with
(the env token, or over HTTP without one, the request's own bearer)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, GetPromptResult, InputRequiredResult
from pydantic import ValidationError

from svc_sandbox.client import AsyncSvcClient
from svc_sandbox.core.validation import shown
from svc_sandbox.mcp.config import McpConfig
from svc_sandbox.mcp.stdio import run_stdio

NO_TOKEN = (
    "{tool} needs an API token: start the tool server with SVC_TOKEN=svc_test_... (or "
    "svc_live_...), or over HTTP send `Authorization: Bearer <token>`. Without a token only "
    "the docs, quote and webhook tools work."
)


@dataclass(frozen=True)
class Backend:
    config: McpConfig
    token: str | None
    #: One HTTP connection pool per transport run, shared by every call (an httpx client
    #: costs tens of milliseconds to build).
    http: httpx.AsyncClient | None = None

    def client(self, tool: str) -> AsyncSvcClient:
        if self.token is None:
            raise ToolError(NO_TOKEN.format(tool=tool))
        return AsyncSvcClient(
            self.token, base_url=self.config.base_url, timeout=self.config.timeout, http=self.http
        )

    def secret(self, given: str | None) -> str:
        # Only an omitted secret falls back to the environment's: an explicit "" is the
        # caller's value, and no endpoint signs with an empty secret.
        if given == "":
            raise ToolError("secret must not be empty: pass the endpoint's signing secret")
        secret = self.config.webhook_secret if given is None else given
        if not secret:
            raise ToolError(
                "secret is required: pass `secret` or start the tool server with "
                "SVC_WEBHOOK_SECRET set to the endpoint's signing secret"
            )
        return secret


class ToolServer(MCPServer[Any]):
    """An MCPServer that carries its Backend (tools reach it through their Context) and words
    argument errors as a tool error naming each parameter."""

    def __init__(self, backend: Backend, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.backend = backend

    async def run_stdio_async(self) -> None:
        """The SDK's stdio transport with each line checked first (mcp/stdio.py). The low-level
        server it runs is the SDK's, reached as the SDK's own method reaches it; an SDK without
        it serves stdio unchecked rather than not at all (tests/mcp/test_stdio_lines.py fails
        then)."""
        lowlevel = getattr(self, "_lowlevel_server", None)
        if lowlevel is None:
            await super().run_stdio_async()
            return
        await run_stdio(lowlevel)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            cause = error.__cause__
            if isinstance(cause, ValidationError):
                known = [tool.input_schema for tool in await self.list_tools() if tool.name == name]
                raise ToolError(invalid_arguments(name, cause, *known)) from cause
            raise

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        context: Context[Any, Any] | None = None,
    ) -> GetPromptResult | InputRequiredResult:
        """A prompt asked for wrongly (an unknown name, a required argument missing) is
        JSON-RPC's -32602 with the SDK's words, as MCP's prompts page asks; the SDK answered
        code 0 and logged it as a crash, with a traceback on stderr. The prompts themselves
        raise nothing (mcp/prompts.py), so a ValueError here is always the request's. An
        unknown argument (a typo) is named with the prompt's arguments, in the words of a
        tool's (the SDK said only "Error rendering prompt")."""
        if arguments:
            for prompt in await self.list_prompts():
                if prompt.name == name:
                    takes = [argument.name for argument in prompt.arguments or []]
                    unknown = [given for given in arguments if given not in takes]
                    if unknown:
                        raise MCPError(
                            INVALID_PARAMS, unknown_prompt_arguments(name, unknown, takes)
                        )
        try:
            return await super().get_prompt(name, arguments, context)
        except ValueError as error:
            raise MCPError(INVALID_PARAMS, str(error)) from None


def invalid_arguments(
    tool: str, error: ValidationError, schema: Mapping[str, Any] | None = None
) -> str:
    """Each bad argument named with why; an unknown one (a typo) with the names taken where
    it was sent: the tool's parameters, or an object parameter's fields (``customer`` takes
    ``external_id``, not the wire name ``externalId``). ``schema``: the tool's input schema."""
    problems = []
    takes: dict[str, list[str]] = {}  # where -> the names taken there, in order found
    for item in error.errors():
        loc = item["loc"]
        where = ".".join(str(part) for part in loc) or "arguments"
        if item["type"] == "extra_forbidden":
            problems.append(f"{where}: unknown parameter (got {shown(item.get('input'))})")
            if schema is not None:
                owner = ".".join(str(part) for part in loc[:-1]) or tool
                names = _fields_at(schema, loc[:-1])
                if names:
                    takes.setdefault(owner, names)
        else:
            problems.append(f"{where}: {item['msg']} (got {shown(item.get('input'))})")
    message = f"Invalid arguments for {tool}: " + "; ".join(problems)
    for owner, names in takes.items():
        message += f". {owner} takes: " + ", ".join(names)
    return message


def _fields_at(schema: Mapping[str, Any], path: tuple[Any, ...]) -> list[str]:
    """The property names of the object at ``path`` in a tool's input schema (through
    ``$ref`` to its ``$defs`` and an optional parameter's ``anyOf``); [] if none is found."""
    definitions = schema.get("$defs", {})

    def objects(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        reference = node.get("$ref", "")
        if reference.startswith("#/$defs/"):
            node = definitions.get(reference.removeprefix("#/$defs/"), {})
        found = [node] if "properties" in node else []
        for option in node.get("anyOf", []):
            found.extend(objects(option))
        return found

    nodes = objects(schema)
    for part in path:
        nodes = [
            child
            for node in nodes
            if isinstance(part, str) and part in node.get("properties", {})
            for child in objects(node["properties"][part])
        ]
    return [name for node in nodes[:1] for name in node.get("properties", {})]


def unknown_prompt_arguments(prompt: str, unknown: list[str], takes: list[str]) -> str:
    problems = "; ".join(f"{name}: unknown argument" for name in unknown)
    return f"Invalid arguments for {prompt}: {problems}. {prompt} takes: " + (
        ", ".join(takes) or "no arguments"
    )


def backend_of(ctx: Context[Any, Any]) -> Backend:
    server = ctx.mcp_server
    if not isinstance(server, ToolServer):  # pragma: no cover - only ToolServer registers tools
        raise ToolError("the tool runs outside the svc-sandbox tool server")
    return server.backend
