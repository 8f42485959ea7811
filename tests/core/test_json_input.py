"""Every JSON body is checked once at the edge (core/json_input.py): nesting depth, finite
numbers, Unicode scalar strings without NUL. The refusal is a 400 naming the limit or the
field path, on public, control-plane and page routes alike, and it changes nothing."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest
from flask.testing import FlaskClient

from svc_sandbox.core import json_input
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.json_input import MAX_DEPTH
from svc_sandbox.sandbox import Sandbox
from tests.helpers import assert_unharmed
from tests.wallet.helpers import sender


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


#: (raw body, what the 400 must say)
BAD_BODIES = [
    (nested(10_000), f"nests deeper than {MAX_DEPTH} levels"),
    (nested(MAX_DEPTH + 1), f"nests deeper than {MAX_DEPTH} levels"),
    ('{"data": {"description": "x\\udfffy"}}', "data.description must be valid Unicode"),
    ('{"a": ["ok", "\\ud800"]}', "a[1] must be valid Unicode"),
    ('{"a": {"b": "nul\\u0000here"}}', "a.b must not contain NUL characters"),
    ('{"k\\u0000": 1}', "has a key that must not contain NUL characters"),
    ('{"seconds": 1e309}', "seconds must be a finite number"),
    ('{"seconds": NaN}', "seconds must be a finite number"),
    ('{"seconds": -Infinity}', "seconds must be a finite number"),
    # Valid JSON, but longer than Python converts (sys.get_int_max_str_digits, kept at 4300).
    ('{"amount": 1%s}' % ("0" * 4300), "amount is a number longer than 4300 digits"),
    ('{"a": [1, {"b": -%s}]}' % ("9" * 5000), "a[1].b is a number longer than 4300 digits"),
    ("9" * 4301, "body is a number longer than 4300 digits"),
    # A name written twice (RFC 8259 §4: SHOULD be unique; receivers differ on which wins).
    ('{"amount": 100, "description": "d", "amount": 999999}', "amount is repeated: send it once"),
    ('{"customer": {"email": "a@b.co", "email": "c@d.co"}}', "customer.email is repeated"),
    ('{"a": [1, {"b": 1, "b": 2}]}', "a[1].b is repeated: send it once"),
    ('{"url": "https://a.example/x", "n": 1, "n": 2}', "n is repeated"),  # and a colon
    ('{"a\\u003a": 1, "b": 1, "b": 2}', "b is repeated"),  # a colon only once decoded
    ('{"a:b": 1, "a:b": 2}', "a:b is repeated: send it once"),
    ('{"a\\u003a": 1, "a:": 2}', "a: is repeated: send it once"),  # one name once decoded
    ('{"a": "x:y", "a": "z"}', "a is repeated: send it once"),  # its dropped value had a colon
    ('{"u": "http://h:1/", "b": {"c": "d:e", "c": "f:g"}}', "b.c is repeated"),
]

ROUTES = [
    ("POST", "/api/checkout"),
    ("POST", "/api/products"),
    ("POST", "/_sandbox/clock/advance"),
    ("POST", "/_sandbox/events/trigger"),
    ("PATCH", "/_sandbox/payments/provider"),
    ("PUT", "/_sandbox/state"),
    ("POST", "{checkoutUrl}"),  # a payment link's attempt (a page route taking JSON)
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
@pytest.mark.parametrize(("body", "message"), BAD_BODIES)
def test_a_body_no_route_may_take_is_a_400_naming_the_problem(
    svc_http: FlaskClient, auth: dict[str, str], method: str, path: str, body: str, message: str
) -> None:
    if path == "{checkoutUrl}":
        link = svc_http.post(
            "/api/checkout", json={"amount": 1000, "description": "x"}, headers=auth
        )
        path = urlsplit(link.json["checkoutUrl"]).path  # type: ignore[index]
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.open(
        path, method=method, data=body, content_type="application/json", headers=auth
    )
    assert response.status_code == 400, response.data
    assert message in json.dumps(response.json, ensure_ascii=False)
    assert_unharmed(svc_http, before)


def test_a_long_integer_is_no_invalid_json_and_gives_no_python_advice() -> None:
    with pytest.raises(json_input.NumberTooLong) as refused:
        json_input.decode('{"x": [0, %s]}' % ("7" * 4301))
    assert refused.value.message == "x[1] is a number longer than 4300 digits"
    assert (refused.value.path, refused.value.negative) == (("x", 1), False)
    # A long integer before a part too deep to parse: the depth is what is named.
    with pytest.raises(ValidationFailed, match=f"nests deeper than {MAX_DEPTH} levels"):
        json_input.decode("[" + "9" * 4301 + "," + nested(10_000) + "]")


def test_64_levels_are_still_a_body(svc_http: FlaskClient) -> None:
    """The limit itself is allowed: the answer is about the body's shape, not its depth."""
    response = svc_http.post(
        "/_sandbox/clock/advance", data=nested(MAX_DEPTH), content_type="application/json"
    )
    assert response.status_code == 400
    assert "deeper" not in response.json["error"]  # type: ignore[index]


def test_deep_event_data_is_refused_so_export_reset_and_import_keep_working(
    svc_http: FlaskClient,
) -> None:
    data: object = "leaf"
    for _ in range(500):
        data = {"d": data}
    response = svc_http.post(
        "/_sandbox/events/trigger", json={"type": "order.completed", "data": data}
    )
    assert response.status_code == 400
    exported = svc_http.get("/_sandbox/state")
    assert exported.status_code == 200
    assert svc_http.put("/_sandbox/state", json=exported.json).status_code == 200
    assert_unharmed(svc_http, exported.data)


def test_a_lone_surrogate_never_reaches_a_webhook(svc_http: FlaskClient) -> None:
    svc_http.post("/_sandbox/webhooks/endpoints", json={"url": "http://127.0.0.1:9/hook"})
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post(
        "/_sandbox/events/trigger",
        data='{"type": "order.completed", "data": {"description": "x\\udfffy"}}',
        content_type="application/json",
    )
    assert response.status_code == 400
    assert_unharmed(svc_http, before)


def test_a_text_decoded_twice_is_parsed_once_and_another_text_afresh() -> None:
    """The contract check and the route read the same body object: the second decode returns
    the first one's document; a different object is always parsed (even with equal text)."""
    first = b'{"amount": 500, "items": [1, 2]}'
    document = json_input.decode(first)
    assert json_input.decode(first) is document
    same_text = bytes(bytearray(first))
    assert same_text is not first
    assert json_input.decode(same_text) == document
    assert json_input.decode(same_text) is not document
    assert json_input.decode(b'{"amount": 600}') == {"amount": 600}


def test_a_refused_text_is_refused_every_time_under_its_own_name() -> None:
    bad = b'{"x": '
    for what in ("body", "body", "state file"):
        with pytest.raises(ValidationFailed, match=f"^{what} is not valid JSON"):
            json_input.decode(bad, what)


def test_big_texts_are_not_kept() -> None:
    big = json.dumps({"pad": "x" * json_input.MEMO_BYTES}).encode()
    assert json_input.decode(big) is not json_input.decode(big)


@pytest.mark.parametrize(
    "text",
    [
        '{"successUrl": "https://shop.example/done?a=1", "note": "at 10:30"}',
        '{"a:b": 1, "c": {"d:e": "f:g"}}',
        '["x:y", {"a": 1}, {"a": 2}]',  # one name per object
        '"a:b"',
        '{"a\\u003a": 1, "b": "c"}',  # a colon only once decoded
    ],
)
def test_colons_in_strings_are_no_repeated_names(text: str) -> None:
    assert json_input.decode(text) == json.loads(text)


def test_the_first_repeated_name_in_the_document_is_named() -> None:
    with pytest.raises(ValidationFailed, match=r"^a\.x is repeated: send it once$"):
        json_input.decode('{"a": {"x": 1, "x": 2}, "b": {"y": 1, "y": 2}}')


def test_the_contract_check_records_the_repeated_name(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    svc_http.delete("/_sandbox/conformance", content_type="application/json")
    response = svc_http.post(
        "/api/products",
        data='{"title": "first", "pricingModel": "free", "title": "second"}',
        content_type="application/json",
        headers=auth,
    )
    assert response.status_code == 400
    assert response.json == {"error": "title is repeated: send it once"}
    report = svc_http.get("/_sandbox/conformance").json
    assert report is not None
    assert [(v["location"], v["message"]) for v in report["violations"]] == [
        ("body", "title is repeated: send it once")
    ]


def test_a_wallet_send_with_amount_minor_twice_moves_no_money(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    both = sender(svc_http, svc_sandbox)
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post(
        "/wallet/send",
        data='{"recipientHandle": "tigist", "amountMinor": 100, "amountMinor": 250,'
        ' "idempotencyKey": "dup-names-1"}',
        content_type="application/json",
        headers=both,
    )
    assert response.status_code == 400
    assert response.json == {
        "error": "invalid_request",
        "message": "amountMinor is repeated: send it once",
    }
    assert_unharmed(svc_http, before)


#: (body, the 400's message after "body is not valid JSON: "), the same on Python 3.11 to
#: 3.13: a trailing comma is worded as 3.13 words it, at the comma (3.11 and 3.12 said
#: "Expecting property name..." or "Expecting value" just after it); the rest as 3.11 says it.
MALFORMED_JSON = [
    (
        '{"title": "Book",}',
        "Illegal trailing comma before end of object: line 1 column 17 (char 16)",
    ),
    ('{"a":1 , \t}', "Illegal trailing comma before end of object: line 1 column 8 (char 7)"),
    ("[1, ]", "Illegal trailing comma before end of array: line 1 column 3 (char 2)"),
    ('{"a": [1,\n]}', "Illegal trailing comma before end of array: line 1 column 9 (char 8)"),
    ('{"title": }', "Expecting value: line 1 column 11 (char 10)"),
    ('{"a" 1}', "Expecting ':' delimiter: line 1 column 6 (char 5)"),
    ("{,}", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ("[,]", "Expecting value: line 1 column 2 (char 1)"),
    ("[1,2,,]", "Expecting value: line 1 column 6 (char 5)"),
    ('{"a":1,,}', "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)"),
    ('{"a":1} x', "Extra data: line 1 column 9 (char 8)"),
    ('"abc', "Unterminated string starting at: line 1 column 1 (char 0)"),
    ("[1 2]", "Expecting ',' delimiter: line 1 column 4 (char 3)"),
]


@pytest.mark.parametrize(("body", "message"), MALFORMED_JSON)
@pytest.mark.parametrize("path", ["/api/products", "/_sandbox/state"])
def test_malformed_json_is_worded_the_same_on_every_python(
    svc_http: FlaskClient, auth: dict[str, str], path: str, body: str, message: str
) -> None:
    before = svc_http.get("/_sandbox/state").data
    method = "PUT" if path == "/_sandbox/state" else "POST"
    response = svc_http.open(
        path,
        method=method,
        data=body.encode(),
        headers={**auth, "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json["error"] == f"body is not valid JSON: {message}"  # type: ignore[index]
    assert_unharmed(svc_http, before)
