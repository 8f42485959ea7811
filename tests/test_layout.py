"""The layout rules of docs/architecture.md: domain modules stay free of Flask, and every
module stays small enough to read (DESIGN.md: "split well before 800 lines")."""

from __future__ import annotations

import re
from pathlib import Path

import svc_sandbox

SRC = Path(svc_sandbox.__file__).parent
IMPORTS_FLASK = re.compile(r"^\s*(from flask\b|import flask\b)", re.M)
HTTP_MODULES = {"app.py", "web.py", "pytest_plugin.py"}


def test_only_http_edge_modules_import_flask() -> None:
    offenders = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if IMPORTS_FLASK.search(path.read_text())
        and path.name not in HTTP_MODULES
        and not path.name.endswith("api.py")
    ]
    assert offenders == []


def test_the_scan_sees_flask_imports() -> None:
    assert IMPORTS_FLASK.search("x = 1\nfrom flask import Blueprint\n")
    assert not IMPORTS_FLASK.search("from flasks import x\n")


MAX_MODULE_LINES = 800


def test_every_module_is_split_before_800_lines() -> None:
    sizes = {str(p.relative_to(SRC)): len(p.read_text().splitlines()) for p in SRC.rglob("*.py")}
    assert len(sizes) > 100
    assert {name: n for name, n in sizes.items() if n >= MAX_MODULE_LINES} == {}
