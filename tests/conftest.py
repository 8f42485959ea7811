"""Fixtures shared by every test; svc_sandbox, svc_http and svc_server come from the plugin."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from svc_sandbox.sandbox import Sandbox
from tests.helpers import token_of


@pytest.fixture
def token(svc_sandbox: Sandbox) -> str:
    return token_of(svc_sandbox, "sandbox")


@pytest.fixture
def live_token(svc_sandbox: Sandbox) -> str:
    return token_of(svc_sandbox, "production")


@pytest.fixture
def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def live_auth(live_token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {live_token}"}


#: pytester runs the plugin's own tests (tests/test_pytest_plugin.py) in a scratch directory.
pytest_plugins = ["pytester"]


@pytest.fixture
def gc_collections() -> Iterator[list[int]]:
    """The generation of every cyclic collection that runs while the test does."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)
