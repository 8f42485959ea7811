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


def request_ids(http: Any, count: int = 3) -> list[str]:
    return [http.get("/api/products").headers["X-Request-Id"] for _ in range(count)]


def fresh_client() -> Any:
    return create_app(Sandbox(seed=1, clock_mode="frozen")).test_client()


def test_a_reset_gives_the_request_ids_of_a_fresh_start() -> None:
    """docs/control-plane.md, Reset: "same ids as a fresh start with the same seed"."""
    started = request_ids(fresh_client())
    http = fresh_client()
    request_ids(http, 5)
    assert http.post("/_sandbox/reset", json={}).status_code == 200
    assert request_ids(http) == started
    journal = http.get("/_sandbox/requests?limit=3").json["items"]
    assert [entry["requestId"] for entry in reversed(journal)] == started


def test_request_ids_after_an_import_repeat_none_given_before() -> None:
    exporting = fresh_client()
    given = request_ids(exporting)
    document = exporting.get("/_sandbox/state").json
    given.append(exporting.get("/_sandbox/state").headers["X-Request-Id"])

    importing = fresh_client()
    assert importing.put("/_sandbox/state", json=document).status_code == 200
    after_first = request_ids(importing, 5)
    assert importing.put("/_sandbox/state", json=document).status_code == 200
    after_second = request_ids(importing, 5)
    assert not set(after_first) & set(given)
    assert not set(after_second) & (set(after_first) | set(given))
    assert all(re.fullmatch("req_[0-9a-f]{24}", value) for value in after_first + after_second)


def test_request_ids_after_an_import_are_the_same_for_the_same_seed_and_requests() -> None:
    document = fresh_client().get("/_sandbox/state").json

    def run() -> list[str]:
        http = fresh_client()
        request_ids(http, 2)
        http.put("/_sandbox/state", json=document)
        return request_ids(http)

    assert run() == run()


def test_request_ids_are_not_state_a_read_leaves_the_export_as_it_was() -> None:
    sandbox = Sandbox(seed=1, clock_mode="frozen")
    before = sandbox.export()
    request_ids(create_app(sandbox).test_client(), 5)
    assert sandbox.export() == before
