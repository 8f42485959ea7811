"""scripts/serve and scripts/test (the README's two commands) on a machine they have not seen:
which Python they take, a .venv they cannot use, and the folder `serve` runs in. Each test
copies the scripts into a folder of its own; none installs anything."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The scripts and pyproject.toml of a checkout, with no .venv yet."""
    root = tmp_path / "checkout"
    shutil.copytree(ROOT / "scripts", root / "scripts")
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    (root / "src" / "svc_sandbox").mkdir(parents=True)
    (root / "src" / "svc_sandbox" / "__init__.py").write_text("")
    return root


def run(script: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(script), *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


@pytest.mark.parametrize("script", ["serve", "test"])
def test_a_python_older_than_3_11_is_named_with_the_way_to_pick_another(
    checkout: Path, tmp_path: Path, script: str
) -> None:
    old = tmp_path / "bin" / "python3"
    executable(old, '#!/bin/sh\nif [ "$1" = --version ]; then echo Python 3.10.13; fi\nexit 1\n')
    done = run(checkout / "scripts" / script, cwd=checkout, PYTHON=str(old))
    assert done.returncode == 1
    assert f"svc-sandbox needs Python 3.11 or newer; '{old}' is Python 3.10.13." in done.stderr
    assert f"PYTHON=python3.12 bash scripts/{script}" in done.stderr
    assert not (checkout / ".venv").exists()


def test_a_python_that_does_not_run_is_said_in_one_line(checkout: Path, tmp_path: Path) -> None:
    """A pyenv shim of a version not selected answers a paragraph on stderr, which the
    message pasted whole."""
    shim = tmp_path / "bin" / "python3.12"
    executable(
        shim,
        "#!/bin/sh\necho 'pyenv: python3.12: command not found' >&2\necho >&2\n"
        "echo 'The python3.12 command exists in these Python versions:' >&2\nexit 127\n",
    )
    done = run(checkout / "scripts" / "test", cwd=checkout, PYTHON=str(shim))
    assert done.returncode == 1
    said = "is not runnable here (pyenv: python3.12: command not found)."
    assert done.stderr.splitlines()[0].endswith(f"'{shim}' {said}")
    assert "exists in these Python versions" not in done.stderr


def test_a_venv_left_unusable_is_made_again(checkout: Path, tmp_path: Path) -> None:
    """A first run cut short while `python -m venv` installed pip leaves a .venv without pip:
    it used to be reused, failing every run after ("No module named pip")."""
    executable(checkout / ".venv" / "bin" / "python", "#!/bin/sh\nexit 1\n")
    done = run(checkout / "scripts" / "serve", cwd=checkout, PYTHON=str(tmp_path / "missing"))
    assert "making .venv again: it is not a working Python 3.11+ environment" in done.stderr
    assert not (checkout / ".venv").exists()  # and then the asked-for Python is not there
    assert done.returncode == 1
    assert "is not found." in done.stderr


def test_a_venv_of_another_python_than_the_one_asked_for_is_made_again(
    checkout: Path, tmp_path: Path
) -> None:
    """After a first run with a python3 that was too old or not wanted, PYTHON=... is obeyed
    (it used to be ignored while .venv existed)."""
    executable(checkout / ".venv" / "bin" / "python", f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    other = tmp_path / "bin" / "python3"
    executable(other, '#!/bin/sh\nif [ "$1" = -c ]; then echo 3.99.0; exit 0; fi\nexit 1\n')
    done = run(checkout / "scripts" / "serve", cwd=checkout, PYTHON=str(other))
    assert f"making .venv again: it was made with another Python than PYTHON={other}" in (
        done.stderr
    )


def test_serve_runs_in_the_callers_folder(checkout: Path, tmp_path: Path) -> None:
    """`--state mystate.json` and `--export-on-exit out.json` are the user's files, as with
    `svc-sandbox serve` itself (the script used to run it from the checkout's root)."""
    venv = checkout / ".venv" / "bin"
    executable(venv / "python", f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    executable(venv / "svc-sandbox", '#!/bin/sh\necho "$PWD" "$@"\n')
    digest = hashlib.sha256((checkout / "pyproject.toml").read_bytes()).hexdigest()[:16]
    (checkout / ".venv" / f".installed-{digest}-serve").touch()
    user = tmp_path / "work"
    user.mkdir()
    done = run(checkout / "scripts" / "serve", "--state", "mystate.json", cwd=user)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(user), "serve", "--state", "mystate.json"]


@pytest.mark.parametrize(
    ("args", "pytest_args"),
    [
        ((), ["-n", "auto"]),
        (("-q", "tests/core"), ["-n", "auto", "-q", "tests/core"]),
        (("-n", "1"), ["-n", "1"]),
        (("-n2",), ["-n2"]),
        (("--numprocesses=3",), ["--numprocesses=3"]),
        (("-p", "no:xdist"), ["-p", "no:xdist"]),
        (("--pdb", "tests/test_app.py"), ["--pdb", "tests/test_app.py"]),
        (("-s",), ["-s"]),
    ],
)
def test_the_suite_runs_one_worker_per_core_unless_the_arguments_choose(
    checkout: Path, args: tuple[str, ...], pytest_args: list[str]
) -> None:
    """CI's time went from about 11 minutes of pytest on one core to one worker per core; a
    worker count, xdist switched off or a debugger (which needs the test in this process) is
    the caller's choice."""
    venv = checkout / ".venv" / "bin"
    # The venv's python answers `-m pytest ...` with its arguments; anything else is Python.
    executable(
        venv / "python",
        '#!/bin/sh\nif [ "$1 $2" = "-m pytest" ]; then shift 2; printf "%s\\n" "$@"; exit 0; fi\n'
        f'exec {sys.executable} "$@"\n',
    )
    for tool in ("ruff", "mypy"):
        executable(venv / tool, "#!/bin/sh\nexit 0\n")
    digest = hashlib.sha256((checkout / "pyproject.toml").read_bytes()).hexdigest()[:16]
    (checkout / ".venv" / f".installed-{digest}-test").touch()
    done = run(checkout / "scripts" / "test", *args, cwd=checkout, SVC_SANDBOX_CHROMIUM="/bin/true")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == pytest_args
