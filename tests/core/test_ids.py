"""Seeded ids: the same seed and the same calls give the same ids, tokens and bodies."""

from __future__ import annotations

import re
from typing import Any

import pytest

from svc_sandbox.app import create_app
from svc_sandbox.core.ids import IdFactory, is_object_id
from svc_sandbox.sandbox import Sandbox
from tests.helpers import token_of


def test_id_shapes() -> None:
    ids = IdFactory(7)
    assert re.fullmatch(r"[0-9a-f]{24}", ids.object_id())
    assert re.fullmatch(r"p_[A-Za-z0-9_-]{16}", ids.product_token())
    assert re.fullmatch(r"svc_test_[A-Za-z0-9]{32}", ids.api_token("sandbox"))
    assert re.fullmatch(r"svc_live_[A-Za-z0-9]{32}", ids.api_token("production"))


@pytest.mark.parametrize(
    ("value", "is_id"),
    [
        ("0123456789abcdef01234567", True),
        ("0123456789ABCDEF01234567", False),  # ids are lowercase
        ("0123456789abcdef0123456", False),
        ("0123456789abcdef012345678", False),
        ("0123456789abcdef0123456g", False),
        ("0123456789abcdef0123456\n", False),
        ("٠١٢٣٤٥٦٧٨٩abcdef01234567", False),  # other digits
        ("", False),
    ],
)
def test_what_has_the_shape_of_an_id(value: str, is_id: bool) -> None:
    assert is_object_id(value) is is_id
    assert is_object_id(IdFactory(3).object_id())


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
