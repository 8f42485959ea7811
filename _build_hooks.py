"""Build backend and hook: setuptools' own backend (re-exported, so pyproject.toml can name
this in-tree module and setuptools can import the hook from it), plus a build_py that makes
the wheel ships the project's docs/*.md as package data (svc_sandbox/docs/),
the corpus of the tool server's svc_search_docs / svc_read_doc. In a source checkout the tool
server reads docs/ itself (svc_sandbox/mcp/docs.py), so there is no copy to keep in step."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools.build_meta import *  # noqa: F403  (the backend: setuptools' own)
from setuptools.command.build_py import build_py


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
