"""The request journal (GET /_sandbox/requests): each entry is bounded in size, not only the
number of entries. Its method, path, query, Authorization and Content-Type are kept up to
JOURNAL_TEXT_CHARACTERS (cut with an ellipsis, the one rule for a string too long to keep);
a body is kept whole up to 16 KiB, left out past that."""

from __future__ import annotations

import json
from typing import Any

from flask.testing import FlaskClient

from svc_sandbox.app import create_app
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
