"""Bodies that break the contract many times over, from a careless or hostile client: the
contract check words them as it words an ordinary body, choosing among a bounded number of
errors (``EXPLAINED_ERRORS`` per keyword) rather than collecting every one (seconds to
minutes of CPU, with no token); a form field repeated many times is read in one pass."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.contract.validation import (
    EXPLAINED_ERRORS,
    Violation,
    commerce_contract,
    decode_body,
)

CHECKOUT = commerce_contract().find("POST", "/checkout")
PRODUCTS = commerce_contract().find("POST", "/products")

#: (operation, a body breaking the contract at each of n places), as the audit sent them.
MANY_TIMES = {
    "metadata values": (
        CHECKOUT,
        lambda n: {"productId": "p_x", "metadata": {f"k{i}": [] for i in range(n)}},
    ),
    "media items": (PRODUCTS, lambda n: {"media": [1] * n}),
    "unknown names": (CHECKOUT, lambda n: {f"k{i}": 1 for i in range(n)}),
    "array body": (CHECKOUT, lambda n: [1] * n),
}


def request_violations(operation: Any, body: Any) -> list[Violation]:
    found, params = operation
    raw = json.dumps(body).encode()
    return commerce_contract().validate_request(found, params, {}, {}, "application/json", raw)


def body_schema(operation: Any) -> str:
    return str(operation[0].pointer) + "/requestBody/content/application~1json/schema"


@pytest.mark.parametrize("case", list(MANY_TIMES))
def test_an_explanation_chooses_among_a_bounded_number_of_errors(case: str) -> None:
    operation, body = MANY_TIMES[case]
    errors = commerce_contract().errors(body_schema(operation), body(5_000))
    assert 0 < len(errors) <= EXPLAINED_ERRORS

    def widest(error: Any) -> int:
        return max([len(error.context), *(widest(e) for e in error.context)])

    # oneOf / anyOf keep each alternative's errors: a few keywords' first ones (a metadata
    # map of 5,000 bad values once put 5,000 inside the one oneOf error).
    assert max(widest(e) for e in errors) <= 2 * EXPLAINED_ERRORS


@pytest.mark.parametrize("case", list(MANY_TIMES))
def test_the_violation_of_many_is_worded_as_that_of_a_few(case: str) -> None:
    """Where and why are the same for 3 bad places and for 30,000 (the values shown cut)."""
    operation, body = MANY_TIMES[case]
    few = request_violations(operation, body(3))
    many = request_violations(operation, body(30_000))
    assert [(v.location, v.schema_path) for v in many] == [(v.location, v.schema_path) for v in few]
    assert [v.message.split(" ")[-1] for v in many] == [v.message.split(" ")[-1] for v in few]


def test_an_unauthenticated_body_of_25000_bad_metadata_values_is_recorded(
    svc_http: FlaskClient,
) -> None:
    body = {"productId": "p_x", "metadata": {f"k{i}": [] for i in range(25_000)}}
    response = svc_http.post("/api/checkout", json=body)
    assert response.status_code == 400
    report: Any = svc_http.get("/_sandbox/conformance").json
    assert [v["location"] for v in report["violations"]] == ["body"]


def test_a_form_field_repeated_100000_times_is_every_value_in_order() -> None:
    body = b"&".join(b"phone=%d" % i for i in range(100_000)) + b"&grant_type=password"
    fields = decode_body("application/x-www-form-urlencoded", body)
    assert fields["phone"] == [str(i) for i in range(100_000)]
    assert fields["grant_type"] == "password"


def test_a_token_request_repeating_a_field_100000_times_is_refused_naming_it(
    svc_http: FlaskClient,
) -> None:
    """A field the token endpoint reads is named; an unknown one is ignored (RFC 6749 §3.2),
    however often it comes (the request then lacks its grant_type)."""
    for field, description in (
        (b"scope", "scope is repeated: send it once"),
        (b"phone", "grant_type is missing"),
    ):
        body = b"&".join(field + b"=1" for _ in range(100_000))
        response = svc_http.post(
            "/auth/oauth2/token", data=body, content_type="application/x-www-form-urlencoded"
        )
        assert (response.status_code, response.json) == (
            400,
            {"error": "invalid_request", "error_description": description},
        )
    svc_http.post(
        "/auth/oauth2/token",
        data=b"scope=1&scope=1",
        content_type="application/x-www-form-urlencoded",
    )
    report: Any = svc_http.get("/_sandbox/conformance?contract=identity").json
    recorded = [(v["location"], v["message"]) for v in report["violations"]]
    assert recorded[0] == recorded[-1]
