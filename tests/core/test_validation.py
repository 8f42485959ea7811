"""core/validation.py words a refusal: it names the field, and a name the client made up (an
unknown field, a metadata key) is cut to SHOWN_CHARACTERS like any repeated value, so a
300,000-character name gives a short 400, not a 300 kB one."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.core.validation import ELLIPSIS, SHOWN_CHARACTERS
from tests.helpers import assert_unharmed

LONG = "k" * 300_000
#: What a message shows of LONG: its first SHOWN_CHARACTERS - 1 characters and an ellipsis.
LONG_SHOWN = "k" * (SHOWN_CHARACTERS - 1) + ELLIPSIS

#: (method, path, body with LONG somewhere, the 400's whole message)
LONG_NAMES: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "POST",
        "/api/products",
        {"title": "t", "pricingModel": "free", LONG: 1},
        f"{LONG_SHOWN} is not a known field",
    ),
    (
        "POST",
        "/api/checkout",
        {"amount": 1000, "description": "d", LONG: 1},
        f"{LONG_SHOWN} is not a known field",
    ),
    (
        "POST",
        "/api/products",
        {"title": "t", "pricingModel": "free", "metadata": {LONG: "v"}},
        "metadata keys must be 1 to 40 characters",
    ),
    (
        "POST",
        "/api/checkout",
        {"amount": 1000, "description": "d", "metadata": {LONG: "v"}},
        "metadata keys must be 1 to 40 characters",
    ),
    (
        "POST",
        "/_sandbox/faults/latency",
        {"delaySeconds": 1, LONG: 1},
        f"{LONG_SHOWN} is not a known field",
    ),
    (
        "POST",
        "/_sandbox/faults/notifications",
        {"kind": "lost", LONG: 1},
        f"{LONG_SHOWN} is not a known field",
    ),
    (
        "POST",
        "/_sandbox/triggers",
        {"phone": "0911999998", LONG: 1},
        f"{LONG_SHOWN} is not a known field",
    ),
    (
        "POST",
        "/_sandbox/triggers",
        {"phone": "0911999998", "outcome": "approve", "notification": {"kind": "lost", LONG: 1}},
        f"notification.{LONG_SHOWN} is not a known field",
    ),
    ("POST", "/_sandbox/reset", {LONG: 1}, f"{LONG_SHOWN} is not a known field"),
]


@pytest.mark.parametrize(("method", "path", "body", "message"), LONG_NAMES)
def test_a_long_name_is_named_not_echoed(
    svc_http: FlaskClient,
    auth: dict[str, str],
    method: str,
    path: str,
    body: dict[str, Any],
    message: str,
) -> None:
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.open(path, method=method, json=body, headers=auth)
    assert response.status_code == 400
    assert response.json["error"] == message  # type: ignore[index]
    assert len(response.data) < 300
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize("key", ["", "k" * 41])
def test_product_metadata_keys_are_worded_as_checkouts(
    svc_http: FlaskClient, auth: dict[str, str], key: str
) -> None:
    """One rule for metadata keys: the product schema and checkout's metadata say the same."""
    for path, body in [
        ("/api/products", {"title": "t", "pricingModel": "free"}),
        ("/api/checkout", {"amount": 1000, "description": "d"}),
    ]:
        response = svc_http.post(path, json={**body, "metadata": {key: "v"}}, headers=auth)
        assert response.status_code == 400
        assert response.json == {"error": "metadata keys must be 1 to 40 characters"}
