"""Writing scenario files for the tests (kept out of tests/scenarios/ itself: pytest would
collect a YAML file under a folder named scenarios as a scenario)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from svc_sandbox.scenarios.loader import load_file
from svc_sandbox.scenarios.model import Scenario


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def one(folder: Path, text: str) -> Scenario:
    scenarios = load_file(write(folder, "s.yaml", text))
    assert len(scenarios) == 1
    return scenarios[0]
