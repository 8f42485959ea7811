"""Two validators, one verdict: the compiled validator (jsonschema_rs) decides whether a message
fits the contract; jsonschema words a refusal. A valid message never reaches jsonschema, an
invalid one gets the message jsonschema always gave, and where the two could differ (formats,
``$`` before a final newline) jsonschema's verdict stands."""

from __future__ import annotations

from typing import Any

import pytest

from svc_sandbox.contract.document import shared_contract
from svc_sandbox.contract.validation import Contract, commerce_contract

CHECKOUT = "#/components/schemas/CustomAmountCheckout"
CUSTOMER = "#/components/schemas/Customer"
HEX_ID = "#/components/schemas/HexId"
DATE_TIME = "#/components/schemas/DateTime"
PRODUCT_URL = "#/components/schemas/ProductUrl"


def fresh() -> Contract:
    """A contract with no validator built yet (the shared one caches them)."""
    return Contract(shared_contract())


@pytest.mark.parametrize(
    ("pointer", "instance"),
    [
        (CHECKOUT, {"amount": 500, "description": "bench"}),
        (CUSTOMER, {"email": "buyer@example.com", "phone": "0911223344"}),
        (HEX_ID, "0123456789abcdef01234567"),
        (DATE_TIME, "2026-01-01T00:00:00.000Z"),
    ],
)
def test_a_valid_message_never_reaches_jsonschema(pointer: str, instance: Any) -> None:
    contract = fresh()
    assert contract.check(pointer, instance, "request", "body") == []
    assert contract.explain(pointer, instance, "request", "body") == []
    # Only the explain call above built a jsonschema validator: check did not need one.
    other = fresh()
    other.check(pointer, instance, "request", "body")
    assert other._validators == {}


@pytest.mark.parametrize(
    ("pointer", "instance", "location", "message"),
    [
        (
            CHECKOUT,
            {"amount": "lots", "description": "x"},
            "body.amount",
            "'lots' is not of type 'integer'",
        ),
        (PRODUCT_URL, "no scheme", "body", "'no scheme' is not a 'uri'"),
        (HEX_ID, "XYZ", "body", "'XYZ' does not match '^[0-9a-f]{24}$'"),
        (DATE_TIME, "yesterday", "body", "'yesterday' is not a 'date-time'"),
    ],
)
def test_an_invalid_message_is_worded_by_jsonschema_as_before(
    pointer: str, instance: Any, location: str, message: str
) -> None:
    contract = fresh()
    found = contract.check(pointer, instance, "request", "body")
    assert found == contract.explain(pointer, instance, "request", "body")
    assert [(v.location, v.message) for v in found] == [(location, message)]
    assert pointer in contract._validators  # jsonschema was asked, to word it


@pytest.mark.parametrize(
    ("pointer", "instance"),
    [
        # Python's "$" matches before a final newline; Rust's does not: jsonschema stands.
        (HEX_ID, "0123456789abcdef01234567\n"),
    ],
)
def test_where_the_validators_could_differ_jsonschema_decides(pointer: str, instance: Any) -> None:
    contract = commerce_contract()
    assert contract.explain(pointer, instance, "request", "body") == []
    assert contract.check(pointer, instance, "request", "body") == []


def test_both_validators_agree_on_every_body_of_the_checkout_examples() -> None:
    """A corpus of right and wrong checkout bodies: same verdict from both validators."""
    contract = commerce_contract()
    bodies: list[Any] = [
        {"amount": 500, "description": "d"},
        {"amount": 500, "description": "ok", "metadata": {"a": "b", "n": 1, "t": True}},
        {"amount": 0},
        {"amount": -1},
        {"amount": 1.5},
        {"amount": True},
        {"amount": 500, "description": ""},
        {"amount": 500, "description": "   "},
        {"amount": 500, "metadata": {"": "x"}},
        {"amount": 500, "metadata": {"k": None}},
        {"amount": 500, "metadata": {str(i): i for i in range(21)}},
        {"amount": 500, "successUrl": "ftp://x"},
        {"amount": 500, "successUrl": "https://shop.example/ok/{CHECKOUT_ID}"},
        {"amount": 500, "customer": {"email": "x@y.z", "phone": "251911223344"}},
        {"amount": 500, "customer": {"phone": "12345"}},
        {"amount": 500, "unknown": 1},
        {},
        [],
        None,
        "text",
    ]
    for body in bodies:
        fast = contract._compiled(CHECKOUT).is_valid(body)
        worded = contract.explain(CHECKOUT, body, "request", "body")
        assert fast == (worded == []), body


def tiny_contract() -> Contract:
    """One operation whose 200 response is a ``$ref`` with a required, typed ``$ref`` header."""
    return Contract(
        {
            "openapi": "3.1.0",
            "info": {"title": "tiny", "version": "1"},
            "paths": {
                "/things": {
                    "get": {
                        "operationId": "listThings",
                        "responses": {"200": {"$ref": "#/components/responses/Things"}},
                    }
                }
            },
            "components": {
                "headers": {
                    "Remaining": {"required": True, "schema": {"type": "integer", "minimum": 0}}
                },
                "responses": {
                    "Things": {
                        "description": "ok",
                        "headers": {"X-Remaining": {"$ref": "#/components/headers/Remaining"}},
                        "content": {"application/json": {"schema": {"type": "array"}}},
                    }
                },
            },
        }
    )


@pytest.mark.parametrize(
    ("status", "headers", "body", "expected"),
    [
        (200, {"x-remaining": "3"}, b"[]", []),
        (
            200,
            {},
            b"[]",
            [("header.X-Remaining", "#/components/headers/Remaining/required")],
        ),
        (
            200,
            {"X-Remaining": "-1"},
            b"[]",
            [("header.X-Remaining", "#/components/headers/Remaining/schema/minimum")],
        ),
        (
            200,
            {"X-Remaining": "9" * 4301},  # past int(): named, never a ValueError
            b"[]",
            [("header.X-Remaining", "#/components/headers/Remaining/schema")],
        ),
        (
            200,
            {"X-Remaining": "3"},
            b"{}",
            [("body", "#/components/responses/Things/content/application~1json/schema/type")],
        ),
        (404, {}, b"[]", [("status", "#/paths/~1things/get/responses")]),
    ],
)
def test_a_response_is_checked_through_its_refs_the_same_every_time(
    status: int, headers: dict[str, str], body: bytes, expected: list[tuple[str, str]]
) -> None:
    """The resolved response (``$ref`` hops, header pointers) is worked out once per operation
    and status; every later check must find what the first one found."""
    contract = tiny_contract()
    operation = contract.operation("listThings")
    for _ in range(2):
        found = contract.validate_response(operation, status, headers, "application/json", body)
        assert [(v.location, v.schema_path) for v in found] == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("9" * 4301, "page is a number longer than 4300 digits"),
        ("-" + "9" * 4301, "page is a number longer than 4300 digits"),
        ("9" * 4300, "is greater than the maximum of 9007199254740991"),
        ("0", "0 is less than the minimum of 1"),
        ("0" * 5000, "0 is less than the minimum of 1"),
    ],
    ids=["4301 digits", "minus 4301 digits", "4300 digits", "zero", "5000 zeros"],
)
def test_a_query_integer_past_pythons_conversion_limit_is_named_not_converted(
    raw: str, message: str
) -> None:
    """A parameter's text is read as its schema's integer; one with more digits than
    ``int()`` converts (a ValueError, a 500 in the request hook) is a violation naming it."""
    contract = commerce_contract()
    pointer = "#/components/parameters/Page/schema"
    schema = contract.node(pointer)
    (violation,) = contract.check_text(pointer, schema, raw, "request", "query.page")
    assert violation.location == "query.page"
    assert message in violation.message


def test_leading_zeros_are_no_digits_of_a_query_integer() -> None:
    """The emulator reads ``page=000…02`` as 2 (core/validation.query_integer); the contract
    check must not flag it as too long (int() counts the zeros against its limit)."""
    contract = commerce_contract()
    pointer = "#/components/parameters/Page/schema"
    raw = "0" * 5000 + "2"
    assert contract.check_text(pointer, contract.node(pointer), raw, "request", "query.page") == []


@pytest.mark.parametrize("raw", ["\u0665", "1_0", "inf", "nan", " 5", "\uff15"])
def test_a_number_parameter_is_read_in_ascii_digits_only(raw: str) -> None:
    """A number-typed text is read as a number only in ASCII digits (core/numbers.py):
    ``float()`` would read each of these as one, and the check would pass it."""
    contract = commerce_contract()
    pointer = "#/components/schemas/CheckoutMetadata/additionalProperties/oneOf/1"
    (violation,) = contract.check_text(pointer, contract.node(pointer), raw, "request", "query.x")
    assert violation.location == "query.x"
    assert "is not of type 'number'" in violation.message


@pytest.mark.parametrize("raw", ["5", "-0.5", "5E-2"])
def test_a_number_parameter_in_ascii_digits_is_a_number(raw: str) -> None:
    contract = commerce_contract()
    pointer = "#/components/schemas/CheckoutMetadata/additionalProperties/oneOf/1"
    assert contract.check_text(pointer, contract.node(pointer), raw, "request", "query.x") == []
