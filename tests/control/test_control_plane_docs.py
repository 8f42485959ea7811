"""Every /_sandbox route is documented in docs/control-plane.md."""

from __future__ import annotations

import re
from pathlib import Path

from flask import Flask

DOC = Path(__file__).parents[2] / "docs" / "control-plane.md"
PLACEHOLDER = re.compile(r"<[^>]+>|\{[^}]+\}")


def normalize(path: str) -> str:
    return PLACEHOLDER.sub("{}", path.rstrip("/"))


def documented_paths() -> set[str]:
    text = DOC.read_text()
    return {normalize(p) for p in re.findall(r"/_sandbox(?:[A-Za-z0-9_\-/{}]|<[^>]*>)*", text)}


def test_every_control_plane_route_is_in_the_doc(svc_flask_app: Flask) -> None:
    routes = {
        normalize(rule.rule)
        for rule in svc_flask_app.url_map.iter_rules()
        if rule.rule.startswith("/_sandbox")
    }
    assert len(routes) > 20
    assert sorted(routes - documented_paths()) == []
