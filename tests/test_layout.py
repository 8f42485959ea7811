"""The layout rule of docs/architecture.md: domain modules stay free of Flask."""

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
