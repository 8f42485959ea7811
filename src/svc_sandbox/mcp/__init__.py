"""The agent tool server of spec §1 "Companion clients" (Model Context Protocol): 17 tools,
3 prompts and the resource ``svc://reference`` over the Python client ``svc_sandbox.client``,
on the official ``mcp`` SDK. Started by ``svc-sandbox mcp`` (docs/mcp.md).

Nothing here imports Flask or the emulator's server code (a test checks).
"""
