"""The client is a plain library: importing it loads no Flask and no emulator server code."""

from __future__ import annotations

import json
import subprocess
import sys

SERVER_MODULES = ("flask", "werkzeug", "waitress", "svc_sandbox.app", "svc_sandbox.sandbox")


def test_importing_the_client_loads_no_server_code() -> None:
    script = "import json, sys\nimport svc_sandbox.client\nprint(json.dumps(sorted(sys.modules)))\n"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = json.loads(result.stdout)
    assert "svc_sandbox.client" in loaded
    offenders = [m for m in loaded if m.split(".")[0] in SERVER_MODULES or m in SERVER_MODULES]
    assert offenders == []
