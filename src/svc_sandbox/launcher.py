"""The ``svc-sandbox`` console script: ``svc-sandbox mcp`` starts the tool server without
importing the emulator's commands (a faster start, and no Flask in the tool server); every
other command goes to cli.py."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from types import ModuleType

# Imported with the launcher, not in load_cli: the pause must begin before the import makes
# a single object (loading this module's bytecode could trigger a collection of its own).
from svc_sandbox.core.collector import collector_paused


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["mcp"]:
        from svc_sandbox.mcp.command import main as mcp_main

        return mcp_main(args[1:])
    try:
        return load_cli().main(args)  # type: ignore[no-any-return]
    except BrokenPipeError:
        return reader_gone()


def reader_gone() -> int:
    """Output piped into a reader that stopped early (``| head``): no traceback. Python's
    advice (signal module docs, "Note on SIGPIPE"): point stdout at devnull so the flush at
    exit fails no more, and exit as a process killed by SIGPIPE would (128 + 13)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141


def load_cli() -> ModuleType:
    """Imports cli.py (and with it most of the emulator) with the cyclic garbage collector
    paused: every object an import makes lives as long as the process, so the collections it
    would trigger only walk them again (cli.build_serving pauses it for the rest of the
    start-up, for the same reason)."""
    with collector_paused(freeze=True):
        from svc_sandbox import cli
    return cli


def mcp() -> int:
    """The ``svc-sandbox-mcp`` alias."""
    from svc_sandbox.mcp.command import main as mcp_main

    return mcp_main()


if __name__ == "__main__":
    sys.exit(main())
