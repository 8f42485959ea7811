"""Build backend and hook: setuptools' own backend (re-exported, so pyproject.toml can name
this in-tree module and setuptools can import the hook from it), plus a build_py that makes
the wheel ships the project's docs/*.md as package data (svc_sandbox/docs/),
the corpus of the tool server's svc_search_docs / svc_read_doc, and the scenario library
(scenarios/, as svc_sandbox/scenarios/library/: ``svc-sandbox run --library``). In a source
checkout the tool server reads docs/ itself (svc_sandbox/mcp/docs.py) and ``--library`` reads
scenarios/, so there is no copy to keep in step."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools.build_meta import *  # noqa: F403  (the backend: setuptools' own)
from setuptools.command.build_py import build_py


def copy_library(source: Path, target: Path) -> list[Path]:
    """Copies the scenario library (scenarios/**/*.yaml) into ``target``; the files written."""
    written = []
    for scenario in sorted(source.rglob("*.yaml")):
        copy = target / scenario.relative_to(source)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(scenario, copy)
        written.append(copy)
    return written


def copy_docs(source: Path, target: Path) -> list[Path]:
    """Copies every docs/*.md into ``target``; the files written."""
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for doc in sorted(source.glob("*.md")):
        shutil.copyfile(doc, target / doc.name)
        written.append(target / doc.name)
    return written


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        root = Path(__file__).resolve().parent
        copy_docs(root / "docs", Path(self.build_lib) / "svc_sandbox" / "docs")
        library = Path(self.build_lib) / "svc_sandbox" / "scenarios" / "library"
        copy_library(root / "scenarios", library)
