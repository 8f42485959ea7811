"""`svc-sandbox exec [serve options] -- CMD`: the emulator around one command, as CI runs it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from svc_sandbox.cli import main
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


#: Counts the products the emulator started with, adds one, and prints the whole state as the
#: command last saw it (the clock is frozen, so the export written after it must be the same).
STATEFUL = """
import json, os, sys, urllib.request
from svc_sandbox.client import SvcClient
with SvcClient(os.environ["SVC_TOKEN"]) as svc:
    before = svc.list_products().total
    svc.create_product("Book", "free")
with urllib.request.urlopen(os.environ["SVC_CONTROL_URL"] + "/state") as answer:
    state = json.load(answer)
print(json.dumps({"before": before, "state": state}))
sys.exit(int(sys.argv[1]))
"""


@pytest.mark.parametrize("status", [0, 5])
def test_exec_imports_state_before_the_command_and_exports_after_it(
    tmp_path: Path, status: int
) -> None:
    script = tmp_path / "suite.py"
    script.write_text(STATEFUL)
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    frozen = ("--clock", "frozen", "--seed", "3")
    ran = svc_sandbox_exec(
        *frozen, "--export-on-exit", str(first), "--", sys.executable, str(script), str(status)
    )
    assert ran.returncode == status, ran.stderr
    seen = json.loads(ran.stdout.splitlines()[0])
    assert seen["before"] == 0
    assert json.loads(first.read_text()) == seen["state"]  # written after the command ended

    ran = svc_sandbox_exec(
        *frozen,
        "--state",
        str(first),
        "--export-on-exit",
        str(second),
        "--",
        sys.executable,
        str(script),
        str(status),
    )
    assert ran.returncode == status, ran.stderr
    seen = json.loads(ran.stdout.splitlines()[0])
    assert seen["before"] == 1  # the imported product was there before the command started
    assert json.loads(second.read_text()) == seen["state"]


def test_exec_with_a_state_file_that_does_not_hold_up_runs_nothing(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"not": "an export"}')
    marker = tmp_path / "ran"
    result = svc_sandbox_exec(
        "--state", str(broken), "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')"
    )
    assert result.returncode == 2
    assert f"cannot import {broken}" in result.stderr
    assert not marker.exists()


def test_export_on_exit_makes_missing_folders_and_keeps_the_command_status(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out" / "ci" / "state.json"  # neither folder exists yet
    result = svc_sandbox_exec(
        "--export-on-exit", str(out), "--", sys.executable, "-c", "raise SystemExit(3)"
    )
    assert result.returncode == 3, result.stderr
    assert json.loads(out.read_text())["format"]
    assert not list(out.parent.glob("*.partial"))


@pytest.mark.parametrize("status", [0, 3])
def test_an_export_that_cannot_be_written_at_the_end_is_reported_and_the_command_status_kept(
    tmp_path: Path, status: int
) -> None:
    """The command itself puts a file where the export's folder has to be."""
    blocker = tmp_path / "blocker"
    out = blocker / "deeper" / "state.json"
    command = f"open({str(blocker)!r}, 'w').write('x'); raise SystemExit({status})"
    result = svc_sandbox_exec("--export-on-exit", str(out), "--", sys.executable, "-c", command)
    assert result.returncode == status
    assert f"svc-sandbox: cannot write {out}: " in result.stderr
    assert "Traceback" not in result.stderr


def test_an_export_that_could_not_be_written_stops_exec_before_the_command(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder would have to be")
    out = blocker / "deeper" / "state.json"
    marker = tmp_path / "ran"
    result = svc_sandbox_exec(
        "--export-on-exit", str(out), "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')"
    )
    assert result.returncode == 2
    assert result.stderr == (
        f"svc-sandbox: cannot write {out}: {blocker} is a file, where a folder would have to be\n"
    )
    assert not marker.exists()


def test_the_help_says_exec_picks_a_free_port_by_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["exec", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--port PORT listen port (default: a free one, as 0 picks)" in text
    assert "8700" not in text
    with pytest.raises(SystemExit):
        main(["serve", "--help"])  # serve keeps its fixed default
    text = " ".join(capsys.readouterr().out.split())
    assert "--port PORT listen port (default 8700; 0 picks a free one)" in text


def test_exec_listens_on_svc_sandbox_port_when_no_flag_names_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import socket

    with socket.socket() as probe:  # a port free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("SVC_SANDBOX_PORT", str(port))
    result = svc_sandbox_exec(
        "--clock",
        "frozen",
        "--",
        sys.executable,
        "-c",
        "import os; print(os.environ['SVC_SANDBOX_URL'])",
    )
    assert (result.returncode, result.stdout.strip()) == (0, f"http://127.0.0.1:{port}")
