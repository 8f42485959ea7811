"""Seeded ids: the same seed and the same calls give the same ids, tokens and bodies."""

from __future__ import annotations

import hashlib
import random
import re
import string
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.core.ids import (
    Digested,
    IdFactory,
    RequestIds,
    degenerate_problem,
    is_object_id,
)
from svc_sandbox.sandbox import Sandbox
from tests.helpers import create_product, token_of


def test_id_shapes() -> None:
    ids = IdFactory(7)
    assert re.fullmatch(r"[0-9a-f]{24}", ids.object_id())
    assert re.fullmatch(r"p_[A-Za-z0-9_-]{16}", ids.product_token())
    assert re.fullmatch(r"svc_test_[A-Za-z0-9]{32}", ids.api_token("sandbox"))
    assert re.fullmatch(r"svc_live_[A-Za-z0-9]{32}", ids.api_token("production"))


def test_seeded_tokens_are_the_ones_earlier_versions_gave() -> None:
    """A seeded token is pasted into .env files and CI secrets: it stays what it was."""
    ids = IdFactory(1)
    assert ids.api_token("sandbox") == "svc_test_iK2ZWeqhFWCEPyYngFb51yBMWXaSCrUZ"
    assert ids.product_token() == "p_DnOdcdbWB2dC4_DS"


@pytest.mark.parametrize(
    # "abc" draws 2 bits a character and draws again on 3: the path a 62-letter alphabet takes.
    "alphabet",
    ["0123456789abcdef", "abc", "x", string.ascii_letters + string.digits + "-_"],
)
@pytest.mark.parametrize("seed", [0, 1, 2026, "text seed"])
def test_text_draws_each_character_as_random_choice_does(alphabet: str, seed: int | str) -> None:
    ids, reference = IdFactory(seed), random.Random(seed)
    for length in (0, 1, 16, 32, 300):
        expected = "".join(reference.choice(alphabet) for _ in range(length))
        assert ids.text(length, alphabet) == expected


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


def test_a_seed_gives_the_same_request_ids_from_one_version_to_the_next() -> None:
    """A recorded run, a log or a bug report names request ids: the stream of a seed (and of a
    branch and a restart) is fixed, whatever makes it faster."""
    ids = RequestIds(1)
    assert [ids.next(), ids.next()] == [
        "req_5c067c17c8c4cecacd6ca6eb",
        "req_48a5009604670836afa8101e",
    ]
    ids.branch("abc")
    assert ids.next() == "req_0f14193d429314a15d2dd822"
    ids.restart()
    assert ids.next() == "req_5c067c17c8c4cecacd6ca6eb"
    assert RequestIds("seed-x").next() == "req_2b2ceb617ba5f1db1d4f4a80"


def test_request_ids_are_not_state_a_read_leaves_the_export_as_it_was() -> None:
    sandbox = Sandbox(seed=1, clock_mode="frozen")
    before = sandbox.export()
    request_ids(create_app(sandbox).test_client(), 5)
    assert sandbox.export() == before


def test_a_draw_that_names_a_taken_record_is_drawn_again_deterministically() -> None:
    """The factory asks the kind's records: a taken draw is drawn again, the same way for the
    same seed; an untaken one is the draw itself (so an uninterrupted run is unchanged)."""
    draws = IdFactory(5)
    first, second = draws.object_id(), draws.object_id()
    assert IdFactory(5).object_id({}) == first
    assert IdFactory(5).object_id({first: None}) == second
    assert IdFactory(5).object_id({first}, prefix="evt_") == "evt_" + first
    assert IdFactory(5).object_id({"evt_" + first}, prefix="evt_") == "evt_" + second
    token = IdFactory(5).api_token("sandbox")
    assert IdFactory(5).api_token("sandbox", {token}) != token


def test_a_draw_of_a_digested_record_is_compared_by_its_digest() -> None:
    secret = IdFactory(6).secret("rt_", 48)
    kept = {hashlib.sha256(secret.encode()).hexdigest(): None}
    taken = Digested(kept, lambda value: hashlib.sha256(value.encode()).hexdigest())
    assert secret in taken
    assert IdFactory(6).secret("rt_", 48, taken) != secret


def stale_import() -> tuple[Sandbox, FlaskClient, dict[str, str]]:
    """A sandbox whose state has records made after its id source's state: the ids of a
    fresh export of the same seed pasted into a fuller document, as a fixture assembled by
    hand would have them."""
    sandbox = Sandbox(clock_mode="frozen", seed=1)
    http = create_app(sandbox).test_client()
    fresh_ids = http.get("/_sandbox/state").json["ids"]  # type: ignore[index]
    made = {
        "org": http.post("/_sandbox/orgs", json={"name": "Shop A"}).json["id"],  # type: ignore[index]
    }
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    made["product"] = create_product(http, auth, title="Book")["product"]["_id"]
    document = http.get("/_sandbox/state").json
    document["ids"] = fresh_ids  # type: ignore[index]
    assert http.put("/_sandbox/state", json=document).status_code == 200
    return sandbox, http, made


def test_a_create_after_an_import_of_an_id_source_behind_its_records_makes_a_new_record() -> None:
    """The source draws the ids of records the document holds again: the create draws on,
    and the imported record stays (an organization created replaced "Shop A", its token then
    acting for the new one)."""
    sandbox, http, made = stale_import()
    org = http.post("/_sandbox/orgs", json={"name": "Brand new"}).json
    assert org["id"] != made["org"]  # type: ignore[index]
    names = {o["id"]: o["name"] for o in http.get("/_sandbox/orgs").json["items"]}  # type: ignore[index]
    assert names[made["org"]] == "Shop A"
    assert names[org["id"]] == "Brand new"  # type: ignore[index]
    auth = {"Authorization": f"Bearer {token_of(sandbox)}"}
    product = create_product(http, auth, title="Pen")["product"]
    assert product["_id"] != made["product"]
    titles = {p["_id"]: p["title"] for p in http.get("/api/products", headers=auth).json["items"]}  # type: ignore[index]
    assert titles[made["product"]] == "Book"
    assert titles[product["_id"]] == "Pen"


@pytest.mark.parametrize(
    ("words", "degenerate"),
    [
        ([0] * 624 + [624], True),  # all zero: 0 forever
        ([0] * 624 + [0], True),
        (list(random.Random(1).getstate()[1]), False),
        ([0] * 623 + [1, 624], True),  # one bit set: zeros for its next draws
    ],
    ids=["all zero, regenerating", "all zero, at its start", "seeded", "one bit set"],
)
def test_an_id_source_whose_next_draws_repeat_is_named(words: list[int], degenerate: bool) -> None:
    problem = degenerate_problem([3, words, None])
    assert (problem is not None) is degenerate
    if degenerate:
        assert problem is not None and problem.startswith("state is a degenerate generator state")
