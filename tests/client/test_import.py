"""The client is a plain library: importing it loads no Flask and no emulator server code."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SERVER_MODULES = ("flask", "werkzeug", "waitress", "svc_sandbox.app", "svc_sandbox.sandbox")


IMPORTS = (
    "import svc_sandbox.client",
    # The identity and wallet clients (pyjwt checks the ID tokens), through the lazy names.
    "from svc_sandbox.client import IdentityClient, WalletClient, TokenSet, SvcIdTokenError",
    # Their async twins.
    "from svc_sandbox.client import AsyncIdentityClient, AsyncWalletClient",
)


@pytest.mark.parametrize("statement", IMPORTS)
def test_importing_the_client_loads_no_server_code(statement: str) -> None:
    script = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))\n"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = json.loads(result.stdout)
    assert "svc_sandbox.client" in loaded
    offenders = [m for m in loaded if m.split(".")[0] in SERVER_MODULES or m in SERVER_MODULES]
    assert offenders == []
