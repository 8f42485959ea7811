"""The page envelope's ``page`` and ``limit`` (§8 "`page` >=1 default 1; `limit` 1..100 default
20", §7 400 naming the field) on every list that uses core/pagination.py: a value with more
digits than Python converts (4300) is a 400 naming the parameter, never a 500, and ``page``
stops at 2^53 - 1 so that the envelope echoes what every JSON client reads exactly."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from svc_sandbox.core.pagination import MAX_PAGE
from svc_sandbox.sandbox import Sandbox
from tests.helpers import assert_unharmed, token_of

#: Every paginated list, with the environment of the token it needs (None: the control plane).
PAGINATED = [
    ("/api/products", "sandbox"),
    ("/api/orders", "sandbox"),
    ("/api/withdrawals", "production"),
    ("/_sandbox/withdrawals", None),
]
PAGE_ERROR = f"page must be an integer between 1 and {MAX_PAGE}"
LIMIT_ERROR = "limit must be an integer between 1 and 100"


def headers_for(sandbox: Sandbox, environment: str | None) -> dict[str, str]:
    if environment is None:
        return {}
    return {"Authorization": f"Bearer {token_of(sandbox, environment)}"}


def test_the_highest_page_is_2_to_the_53_minus_1() -> None:
    assert MAX_PAGE == 9007199254740991 == 2**53 - 1


@pytest.mark.parametrize(("path", "environment"), PAGINATED)
@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("page=" + "9" * 4301, PAGE_ERROR),  # past Python's int() limit: was a 500
        ("limit=" + "9" * 4301, LIMIT_ERROR),  # was a 500
        ("page=" + "9" * 4300, PAGE_ERROR),  # was 200 echoing all 4300 digits
        (f"page={MAX_PAGE + 1}", PAGE_ERROR),
        ("page=0", PAGE_ERROR),
        ("limit=" + "1" + "0" * 5000, LIMIT_ERROR),
    ],
    ids=[
        "page 4301 digits",
        "limit 4301 digits",
        "page 4300 digits",
        "page 2^53",
        "page 0",
        "limit 10^5000",
    ],
)
def test_a_page_or_limit_out_of_range_is_a_400_naming_it(
    svc_http: FlaskClient,
    svc_sandbox: Sandbox,
    path: str,
    environment: str | None,
    query: str,
    message: str,
) -> None:
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.get(f"{path}?{query}", headers=headers_for(svc_sandbox, environment))
    assert response.status_code == 400
    assert response.json["error"] == message  # type: ignore[index]
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize(("path", "environment"), PAGINATED)
@pytest.mark.parametrize(
    ("query", "page", "limit"),
    [
        (f"page={MAX_PAGE}", MAX_PAGE, 20),
        ("page=" + "0" * 5000 + "2&limit=" + "0" * 5000 + "5", 2, 5),  # leading zeros
    ],
    ids=["the highest page", "leading zeros"],
)
def test_the_highest_page_and_leading_zeros_are_read_exactly(
    svc_http: FlaskClient,
    svc_sandbox: Sandbox,
    path: str,
    environment: str | None,
    query: str,
    page: int,
    limit: int,
) -> None:
    response = svc_http.get(f"{path}?{query}", headers=headers_for(svc_sandbox, environment))
    assert response.status_code == 200, response.json
    assert response.json == {"items": [], "total": 0, "page": page, "limit": limit}
    # The contract check agrees: what the emulator reads is no violation.
    assert svc_http.get("/_sandbox/conformance").json["violations"] == []  # type: ignore[index]
