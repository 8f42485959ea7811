"""The ``svc-sandbox`` console script (launcher.py) and ``python -m svc_sandbox``."""

from __future__ import annotations

import json
import subprocess
import sys

LOAD_CLI = """
import gc, json, sys
from svc_sandbox.launcher import load_cli
gc.collect()  # the young generation empty: what follows is the import's own
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(1))
cli = load_cli()
print(json.dumps({
    "collections": len(collections),
    "enabled": gc.isenabled(),
    "frozen": gc.get_freeze_count(),
    "modules": sum(name.startswith("svc_sandbox.") for name in sys.modules),
}))
"""


def test_loading_the_commands_runs_no_collection_and_freezes_what_it_imported() -> None:
    """Importing cli.py (most of the emulator) makes only objects that live as long as the
    process: the collector is paused meanwhile, they end up out of its reach, and it is on
    again after."""
    done = subprocess.run(
        [sys.executable, "-c", LOAD_CLI], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["modules"] > 20  # a big import: 40,000 objects and ~60 collections unpaused
    assert seen["collections"] == 0
    assert seen["enabled"] is True
    assert seen["frozen"] > 20_000


def test_python_dash_m_runs_the_console_script() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "svc_sandbox", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("svc-sandbox ")
