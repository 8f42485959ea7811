"""`svc-sandbox exec [serve options] -- CMD`: the emulator around one command, as CI runs it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from svc_sandbox.exec import environment
from svc_sandbox.sandbox import Sandbox

#: The command under exec: uses the exported variables the way a test suite would, reports
#: them, and exits with a status of its own.
SCRIPT = """
import json, os, sys
from svc_sandbox.client import SvcClient
with SvcClient(os.environ["SVC_TOKEN"]) as svc:  # base_url from SVC_BASE_URL
    svc.create_product("Book", "free")
    total = svc.list_products().total
env = {k: v for k, v in os.environ.items() if k.startswith("SVC_")}
print(json.dumps({"env": env, "total": total}))
sys.exit(int(sys.argv[1]))
"""


def svc_sandbox_exec(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc_sandbox.cli", "exec", *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_exec_runs_the_command_against_a_ready_emulator_and_exits_with_its_status(
    tmp_path: Path,
) -> None:
    script = tmp_path / "suite.py"
    script.write_text(SCRIPT)
    result = svc_sandbox_exec(
        "--seed", "4", "--webhook-secret", "whsec_ci", "--", sys.executable, str(script), "3"
    )
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    env = report["env"]
    assert report["total"] == 1
    expected = environment(Sandbox(seed=4, webhook_secret="whsec_ci").info())
    origin = env["SVC_SANDBOX_URL"]
    assert env["SVC_BASE_URL"] == origin + "/api"
    for name in ("SVC_TOKEN", "SVC_TEST_TOKEN", "SVC_LIVE_TOKEN", "SVC_WEBHOOK_SECRET"):
        assert env[name] == expected[name]  # the seeded credentials of --seed 4
    assert env["SVC_TOKEN"].startswith("svc_test_") and env["SVC_LIVE_TOKEN"].startswith(
        "svc_live_"
    )
    with pytest.raises(urllib.error.URLError):  # stopped once the command ended
        urllib.request.urlopen(origin + "/_sandbox", timeout=5)


def test_a_successful_command_exits_0(tmp_path: Path) -> None:
    script = tmp_path / "suite.py"
    script.write_text(SCRIPT)
    assert svc_sandbox_exec("--", sys.executable, str(script), "0").returncode == 0


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        ((), 2, "give the command after --"),
        (("--", "no-such-command-svc"), 127, "cannot run no-such-command-svc"),
        (("--base-url", "nope", "--", "true"), 2, "invalid settings"),
    ],
)
def test_exec_without_a_runnable_command_says_why(
    argv: tuple[str, ...], status: int, message: str
) -> None:
    result = svc_sandbox_exec(*argv)
    assert result.returncode == status
    assert message in result.stderr
