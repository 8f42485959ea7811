"""Every control action is a route the app serves and is listed in docs/scenarios.md; the
recorder maps routes back to the same actions."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask
from werkzeug.exceptions import MethodNotAllowed, NotFound

from svc_sandbox.scenarios.actions import ACTIONS, action_for

DOCS = Path(__file__).resolve().parents[2] / "docs" / "scenarios.md"


@pytest.mark.parametrize("name", list(ACTIONS))
def test_each_action_is_a_route_of_the_app(name: str, svc_flask_app: Flask) -> None:
    action = ACTIONS[name]
    path, _ = action.route({argument: "x1" for argument in action.path_arguments})
    adapter = svc_flask_app.url_map.bind("127.0.0.1")
    try:
        adapter.match(path, method=action.method)
    except (NotFound, MethodNotAllowed) as exc:
        pytest.fail(f"{name}: {action.method} {path} is not served ({exc})")
    assert action_for(action.method, path) == (
        name,
        {argument: "x1" for argument in action.path_arguments},
    )


def test_each_action_is_documented() -> None:
    text = DOCS.read_text("utf-8")
    missing = [name for name in ACTIONS if f"| `{name}` |" not in text]
    assert missing == []
