"""The request journal (GET /_sandbox/requests): each entry is bounded in size, not only the
number of entries. Its method, path, query, Authorization and Content-Type are kept up to
JOURNAL_TEXT_CHARACTERS (cut with an ellipsis, the one rule for a string too long to keep);
a body is kept whole up to 16 KiB, left out past that."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.core.clock import parse_instant
from svc_sandbox.core.journal import JOURNAL_TEXT_CHARACTERS
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.web import JOURNAL_BODY_BYTES

HUGE = 100_000


def latest(client: FlaskClient) -> dict[str, Any]:
    found: dict[str, Any] = client.get("/_sandbox/requests?limit=1").json["items"][0]  # type: ignore[index]
    return found


def kept(text: str) -> str:
    return text[: JOURNAL_TEXT_CHARACTERS - 1] + "…"


def test_a_huge_path_query_and_authorization_are_kept_cut() -> None:
    client = create_app(Sandbox(clock_mode="frozen", seed=3, rate_limits=False)).test_client()
    path = "/api/nowhere/" + "p" * HUGE
    query = "q=" + "a" * HUGE
    authorization = "Bearer " + "t" * HUGE
    client.post(
        f"{path}?{query}",
        data=b"{}",
        headers={
            "Authorization": authorization,
            "Content-Type": "application/json; x=" + "c" * HUGE,
        },
    )
    entry = latest(client)
    assert entry["path"] == kept(path)
    assert entry["query"] == kept(query)
    assert entry["authorization"] == kept(authorization)
    assert entry["body"] == "{}"
    assert len(json.dumps(entry)) < 4 * JOURNAL_TEXT_CHARACTERS  # 300 kB before the cut


def test_what_fits_is_kept_whole(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    path = "/api/nowhere/" + "p" * (JOURNAL_TEXT_CHARACTERS - len("/api/nowhere/"))
    query = "q=" + "a" * (JOURNAL_TEXT_CHARACTERS - 2)
    body = json.dumps({"description": "d" * (JOURNAL_BODY_BYTES - 20)})
    svc_http.post(f"{path}?{query}", data=body, headers=auth, content_type="application/json")
    entry = latest(svc_http)
    assert (entry["path"], entry["query"], entry["authorization"]) == (
        path,
        query,
        auth["Authorization"],
    )
    assert entry["body"] == body  # a body has its own bound, larger than a header's


def test_a_request_while_the_ticker_runs_past_due_work_is_stamped_in_order() -> None:
    """A real or scaled clock's ticker runs an entry at its (past) due time; a request that
    finishes meanwhile, on another thread and without the state lock (an unknown path), is
    stamped with the clock as it flows: journal times never go back in recording order."""
    sandbox = Sandbox(clock_mode="scaled", clock_factor=1000)
    client = create_app(sandbox).test_client()
    running, release = threading.Event(), threading.Event()

    def hold(payload: dict[str, Any]) -> None:  # due work that takes a while
        running.set()
        release.wait(timeout=30)

    sandbox.scheduler.register("test.hold", hold)
    assert client.get("/nope/before").status_code == 404
    with sandbox.lock:
        sandbox.scheduler.schedule(sandbox.now() - timedelta(hours=1), "test.hold")
    ticker = threading.Thread(target=sandbox.run_due, kwargs={"background": True})
    ticker.start()
    try:
        assert running.wait(timeout=30)
        assert client.get("/nope/during").status_code == 404
        read_meanwhile = sandbox.now()
    finally:
        release.set()
        ticker.join()
    entries = client.get("/_sandbox/requests").json["items"]  # type: ignore[index]
    times = [parse_instant(entry["time"]) for entry in reversed(entries)]
    assert [entry["path"] for entry in reversed(entries)] == ["/nope/before", "/nope/during"]
    assert times == sorted(times)
    assert read_meanwhile >= times[0]


def journal_client() -> FlaskClient:
    """A journal holding, oldest first: GET /api/products 403 (no token), POST /api/checkout
    400, GET /api/nowhere 404, GET /_sandbox 200."""
    client = create_app(Sandbox(clock_mode="frozen", rate_limits=False)).test_client()
    assert client.get("/api/products").status_code == 403
    assert client.post("/api/checkout", json={}).status_code == 400
    assert client.get("/api/nowhere").status_code == 404
    assert client.get("/_sandbox").status_code == 200
    return client


@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ("", ["GET /_sandbox", "GET /api/nowhere", "POST /api/checkout", "GET /api/products"]),
        ("method=post", ["POST /api/checkout"]),
        ("method=GET&status=4xx", ["GET /api/nowhere", "GET /api/products"]),
        ("status=404", ["GET /api/nowhere"]),
        ("status=400&method=POST", ["POST /api/checkout"]),
        ("status=2XX", ["GET /_sandbox"]),
        ("status=5xx", []),
        ("path=/api/", ["GET /api/nowhere", "POST /api/checkout", "GET /api/products"]),
        ("path=/api/&limit=2", ["GET /api/nowhere", "POST /api/checkout"]),
        (
            "method=&status=&path=",
            ["GET /_sandbox", "GET /api/nowhere", "POST /api/checkout", "GET /api/products"],
        ),
    ],
)
def test_the_journal_filters_by_method_status_and_path(query: str, shown: list[str]) -> None:
    """``limit`` counts the entries that match (the newest matching ones); an empty value is no
    condition, as a form's blank field sends it."""
    items = journal_client().get(f"/_sandbox/requests?{query}").json["items"]  # type: ignore[index]
    assert [f"{item['method']} {item['path']}" for item in items] == shown


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("status=abc", "status must be a status code such as 404, or a class such as 4xx"),
        ("status=600", "status must be a status code such as 404, or a class such as 4xx"),
        ("status=4x", "status must be a status code such as 404, or a class such as 4xx"),
        ("sort=path", "sort is not a known field"),
        ("method=GET&method=POST", "method is repeated: send it once"),
    ],
)
def test_a_journal_filter_it_cannot_read_is_400_naming_it(query: str, message: str) -> None:
    """A misspelt filter never lists everything."""
    response = journal_client().get(f"/_sandbox/requests?{query}")
    assert response.status_code == 400
    assert response.json == {"error": message, "code": "validation_failed"}


def test_a_reset_starts_the_journal_over_with_the_reset_itself() -> None:
    client = journal_client()
    assert client.post("/_sandbox/reset", json={}).status_code == 200
    items = client.get("/_sandbox/requests").json["items"]  # type: ignore[index]
    assert [(item["method"], item["path"]) for item in items] == [("POST", "/_sandbox/reset")]
