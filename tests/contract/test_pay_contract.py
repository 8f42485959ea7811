"""POST {pay_url}/{payToken} as the contract describes it: the hosted page's form (with its
`csrf` field) and its HTML answers, the JSON attempt and its `{error}` answers. The operation
lives under its own root, outside the conformance report: these checks validate the messages
against the contract's operation directly."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from svc_sandbox.contract.validation import Violation, commerce_contract

PAY = commerce_contract().operation("payAttempt")
UNKNOWN = "cs_000000000000000000000000"


def pay_token(svc_http: FlaskClient, auth: dict[str, str]) -> str:
    answer = svc_http.post("/api/checkout", headers=auth, json={"amount": 1000, "description": "x"})
    return f"cs_{answer.json['sessionId']}"  # type: ignore[index]


def csrf_of(svc_http: FlaskClient, token: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', svc_http.get(f"/pay/{token}").text)
    assert found is not None
    return found.group(1)


def post_form(
    svc_http: FlaskClient, token: str, fields: dict[str, str]
) -> tuple[TestResponse, list[Violation]]:
    """Posts the form and returns the answer with every violation of request and response."""
    body = urlencode(fields).encode()
    form = "application/x-www-form-urlencoded"
    found = commerce_contract().validate_request(
        PAY, {"payToken": token}, {}, {"Content-Type": form}, form, body
    )
    answer = svc_http.post(f"/pay/{token}", data=body, content_type=form)
    return answer, found + response_violations(answer)


def response_violations(answer: TestResponse) -> list[Violation]:
    return commerce_contract().validate_response(
        PAY, answer.status_code, answer.headers, answer.content_type, answer.get_data()
    )


def test_a_form_without_its_csrf_field_breaks_the_contract_and_is_a_declared_403(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    token = pay_token(svc_http, auth)
    answer, violations = post_form(svc_http, token, {"gateway": "telebirr", "phone": "0911223344"})
    assert answer.status_code == 403 and answer.mimetype == "text/html"
    assert [(v.kind, v.schema_path.rsplit("/", 1)[-1]) for v in violations] == [
        ("request", "required")
    ]
    assert "csrf" in violations[0].message


def form_attempts(token: str, csrf: str) -> list[tuple[dict[str, str], int]]:
    """The hosted page's form in the contract's PayForm shape, and the status each earns."""
    return [
        ({"csrf": csrf, "gateway": "telebirr", "phone": "0911223344"}, 400),  # no email
        ({"csrf": csrf, "gateway": "telebirr", "phone": "0911223344", "email": "a@b.co"}, 303),
        ({"csrf": csrf, "gateway": "telebirr", "phone": "0911223344", "email": "a@b.co"}, 409),
    ]


def test_the_form_answers_are_the_declared_ones(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    token = pay_token(svc_http, auth)
    for fields, status in form_attempts(token, csrf_of(svc_http, token)):
        answer, violations = post_form(svc_http, token, fields)
        assert answer.status_code == status
        assert violations == []
        if status != 303:
            assert answer.mimetype == "text/html"


def test_an_unknown_pay_token_is_a_declared_404_for_forms_and_json(
    svc_http: FlaskClient,
) -> None:
    fields: dict[str, Any] = {"gateway": "telebirr", "phone": "0911223344"}
    as_json = svc_http.post(f"/pay/{UNKNOWN}", json=fields)
    assert as_json.status_code == 404 and as_json.mimetype == "application/json"
    assert response_violations(as_json) == []
    # A form's token is checked first: a form for an unknown link is the 403 page.
    answer, violations = post_form(svc_http, UNKNOWN, {**fields, "csrf": "x" * 32})
    assert answer.status_code == 403 and violations == []
