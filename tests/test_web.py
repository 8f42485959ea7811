"""web.py's body rules on the control plane: every route checks a JSON body sent to it as a
whole before it acts, and a route that takes no body (a GET, HEAD or DELETE, or a POST marked
``takes_no_body``) accepts none or ``{}`` and refuses anything else, never acting on it."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient
from werkzeug.routing import Rule

from svc_sandbox.app import CONTROL_PREFIX, create_app
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.web import wsgi_text
from tests.commerce.checkout_helpers import push_checkout
from tests.helpers import assert_unharmed

DEEP = '{"a":' + "[" * 100 + "]" * 100 + "}"
#: A body no route may take: broken JSON, too deep, NUL, a field no route knows.
BAD_BODIES = (
    ("not json", "body is not valid JSON"),
    ("[1,2", "body is not valid JSON"),
    (DEEP, "body nests deeper than 64 levels"),
    ('{"a": "x\\u0000"}', "a must not contain NUL characters"),
)
UNKNOWN_FIELD = '{"zzUnknown": 1}'


def control_routes() -> list[tuple[str, str]]:
    """Every (method, path) of the control plane, its path arguments filled with ``zz``."""
    rules: list[Rule] = list(create_app(Sandbox(seed=1)).url_map.iter_rules())
    found = []
    for rule in rules:
        if not rule.rule.startswith(CONTROL_PREFIX):
            continue
        url = rule.rule
        for name in rule.arguments:
            url = url.replace(f"<{name}>", "zz")
        found += [(m, url) for m in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"})]
    return sorted(set(found))


@pytest.mark.parametrize(("method", "url"), control_routes())
def test_every_control_route_refuses_a_body_it_cannot_take_before_acting(
    svc_http: FlaskClient, method: str, url: str
) -> None:
    before = svc_http.get("/_sandbox/state").data
    for raw, message in BAD_BODIES:
        answer = svc_http.open(url, method=method, data=raw, content_type="application/json")
        assert answer.status_code == 400, (raw, answer.data)
        # The dashboard's pages (under /_sandbox/ui) say it on an HTML page.
        said = answer.json["error"] if answer.is_json else answer.get_data(as_text=True)  # type: ignore[index]
        assert message in said, said
    # A route taking a body names what it misses or does not know; a route taking none
    # names the field. No route acts, nor looks its path arguments up first (no 404).
    answer = svc_http.open(url, method=method, data=UNKNOWN_FIELD, content_type="application/json")
    assert answer.status_code == 400, answer.data
    assert_unharmed(svc_http, before)


BODYLESS_POSTS = (
    "/_sandbox/reset",
    "/_sandbox/clock/run-due",
    "/_sandbox/webhooks/flush",
    "/_sandbox/identity/keys/rotate",
)


@pytest.mark.parametrize("url", BODYLESS_POSTS)
def test_a_post_taking_no_body_names_a_field_sent_to_it(svc_http: FlaskClient, url: str) -> None:
    before = svc_http.get("/_sandbox/state").data
    answer = svc_http.post(url, data=UNKNOWN_FIELD, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json == {  # type: ignore[comparison-overlap]
        "error": "zzUnknown is not a known field",
        "code": "validation_failed",
    }
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize(("raw", "message"), [("null", "body must be a JSON object")])
def test_null_or_an_array_is_not_an_empty_body(
    svc_http: FlaskClient, raw: str, message: str
) -> None:
    """As on a route whose body is optional (``.../fail``): none or ``{}``, not ``null``."""
    for url in ("/_sandbox/clock/run-due", "/_sandbox/checkout/sessions/zz/fail"):
        answer = svc_http.post(url, data=raw, content_type="application/json")
        assert (answer.status_code, answer.json["error"]) == (400, message)  # type: ignore[index]


APPROVE_BODIES = [raw for raw, _ in BAD_BODIES] + [UNKNOWN_FIELD, '{"code": "payment_failed"}']


@pytest.mark.parametrize("raw", APPROVE_BODIES)
def test_approving_with_a_body_is_refused_and_approves_nothing(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, raw: str
) -> None:
    session_id = push_checkout(svc_http, auth)["sessionId"]
    attempt_id = svc_sandbox.checkout.describe(session_id)["attempts"][0]["id"]
    before = svc_http.get("/_sandbox/state").data
    for url in (
        f"/_sandbox/checkout/sessions/{session_id}/approve",
        f"/_sandbox/payments/attempts/{attempt_id}/approve",
    ):
        answer = svc_http.post(url, data=raw, content_type="application/json")
        assert answer.status_code == 400, answer.data
    assert svc_sandbox.checkout.describe(session_id)["status"] == "open"
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize("raw", ["", "{}", " { } "])
def test_approving_with_no_body_or_an_empty_object_approves(
    svc_http: FlaskClient, auth: dict[str, str], raw: str
) -> None:
    session_id = push_checkout(svc_http, auth)["sessionId"]
    answer = svc_http.post(
        f"/_sandbox/checkout/sessions/{session_id}/approve",
        data=raw,
        content_type="application/json",
    )
    assert answer.status_code == 200, answer.data
    assert answer.json["status"] == "completed"  # type: ignore[index]


@pytest.mark.parametrize(
    ("body", "content_type", "kept"),
    [
        ("{}".encode("utf-16"), "application/json", {"bodyBase64": "//57AH0A"}),
        (
            b"a=1&a=2&b=3",
            "application/x-www-form-urlencoded",
            {"form": {"a": ["1", "2"], "b": "3"}},
        ),
        (b"a=\xff", "application/x-www-form-urlencoded", {"bodyBase64": "YT3/"}),
        (b"a=1&b=2", "application/x-www-form-urlencoded", {"form": {"a": "1", "b": "2"}}),
        ("\ufeff{}".encode(), "application/json", {"body": "\ufeff{}"}),
    ],
    ids=["utf-16", "form-field-twice", "form-not-utf-8", "form", "utf-8-bom"],
)
def test_the_journal_keeps_a_body_as_it_came(
    svc_http: FlaskClient, body: bytes, content_type: str, kept: dict[str, object]
) -> None:
    """request_details: what a recording replays (a body not UTF-8 as its bytes in base64, a
    form as a mapping of its fields, a field sent twice as the list of its values)."""
    svc_http.post("/api/products", data=body, headers={"Content-Type": content_type})
    (entry,) = svc_http.get("/_sandbox/requests?limit=1").json["items"]  # type: ignore[index]
    assert {k: entry.get(k) for k in kept} == kept
    assert not {"body", "bodyBase64", "form"} - set(kept) & set(entry)


@pytest.mark.parametrize("path", ["/api/products", "/_sandbox/clock", "/auth/oauth2/authorize"])
def test_a_query_with_raw_bytes_not_utf_8_is_read_as_its_escapes(
    svc_http: FlaskClient, auth: dict[str, str], path: str
) -> None:
    """A raw byte 0xFF in a query (a server puts it in QUERY_STRING as sent) was a 500; it reads
    as ``%FF`` does, and the journal keeps ``%FF``, which a recording can send again."""
    raw = svc_http.get(path, headers=auth, environ_overrides={"QUERY_STRING": "status=\xff"})
    escaped = svc_http.get(path + "?status=%FF", headers=auth)
    assert raw.status_code == escaped.status_code < 500
    assert raw.get_data().replace(b"\n", b"") == escaped.get_data().replace(b"\n", b"")
    entries = svc_http.get("/_sandbox/requests?limit=2").json["items"]  # type: ignore[index]
    assert [e.get("query") for e in entries] == ["status=%FF", "status=%FF"]


@pytest.mark.parametrize(
    ("environ_text", "read"),
    [
        ("/api/checkout", "/api/checkout"),
        ("", ""),
        ("/products/caf\xc3\xa9", "/products/caf\u00e9"),  # UTF-8 bytes, as PEP 3333 carries them
        ("/\xff", "/\ufffd"),  # not UTF-8: replaced, as werkzeug does
    ],
    ids=["ascii", "empty", "utf-8", "invalid-byte"],
)
def test_an_environ_string_reads_as_the_text_werkzeug_makes_of_it(
    environ_text: str, read: str
) -> None:
    """wsgi_text: an ASCII string is taken as it is (the fast path of every request's URL
    adapter); any other is decoded from its latin-1 bytes as UTF-8."""
    assert wsgi_text(environ_text) == read
