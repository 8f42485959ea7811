"""Seeded ids: the same seed and the same calls give the same ids, tokens and bodies."""

from __future__ import annotations

import re
from typing import Any

from svc_sandbox.app import create_app
from svc_sandbox.core.ids import IdFactory
from svc_sandbox.sandbox import Sandbox
from tests.helpers import token_of


def test_id_shapes() -> None:
    ids = IdFactory(7)
    assert re.fullmatch(r"[0-9a-f]{24}", ids.object_id())
    assert re.fullmatch(r"p_[A-Za-z0-9_-]{16}", ids.product_token())
    assert re.fullmatch(r"svc_test_[A-Za-z0-9]{32}", ids.api_token("sandbox"))
    assert re.fullmatch(r"svc_live_[A-Za-z0-9]{32}", ids.api_token("production"))


def script(seed: int) -> list[Any]:
    """The same calls against a fresh sandbox; returns every response body and request id."""
    sandbox = Sandbox(clock_mode="frozen", seed=seed)
    client = create_app(sandbox).test_client()
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    seen: list[Any] = [client.get("/_sandbox").json]
    for n in range(3):
        r = client.post(
            "/api/products",
            json={"title": f"P{n}", "pricingModel": "fixed", "price": {"amount": 100 * (n + 1)}},
            headers=auth,
        )
        seen.append((r.headers["X-Request-Id"], r.json))
    seen.append(client.post("/_sandbox/orgs", json={"name": "Other"}).json)
    seen.append(client.get("/api/products", headers=auth).json)
    return seen


def test_same_seed_same_calls_identical_ids_and_bodies() -> None:
    assert script(42) == script(42)


def test_another_seed_gives_other_ids() -> None:
    assert script(42) != script(43)
