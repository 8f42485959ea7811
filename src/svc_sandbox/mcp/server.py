"""One tool server: the tools its mode registers, the prompts and ``svc://reference``."""

from __future__ import annotations

from mcp.server.mcpserver.resources import FunctionResource

from svc_sandbox import __version__
from svc_sandbox.mcp import docs, prompts, tools
from svc_sandbox.mcp.backend import Backend, ToolServer

NAME = "svc-sandbox"
REFERENCE_URI = "svc://reference"
INSTRUCTIONS = (
    "Tools over the payments service's commerce API (products, checkout sessions, orders, "
    "balance, withdrawals) plus offline webhook, fee-quote and docs tools. Money parameters "
    "end in _minor and are integer santim (10000 = 100.00 ETB). Pass response_format "
    '"json" for the full payload. Read svc://reference for the API.'
)
_RESOURCES: list[FunctionResource] = []


def read_reference() -> str:
    """The reference text (generated once, on the first read)."""
    return docs.reference()


def _reference_resource() -> FunctionResource:
    if not _RESOURCES:
        _RESOURCES.append(
            FunctionResource.from_function(
                read_reference,
                uri=REFERENCE_URI,
                name="reference",
                title="API reference",
                description="A concise reference of the commerce API, generated from its "
                "OpenAPI contract",
                mime_type="text/markdown",
            )
        )
    return _RESOURCES[0]


def build_server(backend: Backend) -> ToolServer:
    """A fresh server for ``backend`` (stdio: one per process; HTTP: one per request). The
    tool, prompt and resource definitions are built once and shared."""
    config = backend.config
    server = ToolServer(
        backend,
        name=NAME,
        title="svc-sandbox payments tools",
        instructions=INSTRUCTIONS,
        version=__version__,
        tools=tools.tools_for(
            read_only=config.read_only, enable_withdrawals=config.enable_withdrawals
        ),
        log_level="WARNING",
    )
    for prompt in prompts.prompts():
        server.add_prompt(prompt)
    server.add_resource(_reference_resource())
    return server
