"""The ``svc-sandbox`` console script: ``svc-sandbox mcp`` starts the tool server without
importing the emulator's commands (a faster start, and no Flask in the tool server); every
other command goes to cli.py."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["mcp"]:
        from svc_sandbox.mcp.command import main as mcp_main

        return mcp_main(args[1:])
    from svc_sandbox.cli import main as cli_main

    return cli_main(args)


def mcp() -> int:
    """The ``svc-sandbox-mcp`` alias."""
    from svc_sandbox.mcp.command import main as mcp_main

    return mcp_main()


if __name__ == "__main__":
    sys.exit(main())
