"""web.check_content_coding: a body sent with a Content-Encoding other than ``identity`` is
415 in its family's error shape, naming the coding, with ``Accept-Encoding: identity``
(RFC 9110 §15.5.16, RFC 7694 §3), before anything reads it: nothing changes."""

from __future__ import annotations

import gzip
import json
import re
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.contract.validation import (
    Contract,
    Operation,
    commerce_contract,
    identity_contract,
    wallet_contract,
)
from tests.helpers import assert_unharmed, create_product

FORM = "application/x-www-form-urlencoded"
JSON = "application/json"


def refusal(coding: str) -> str:
    return f"Content-Encoding {coding} is not supported: send the body without a content coding"


#: (family, path, content type, body, the answer's body for a refused ``coding``)
ROUTES: list[tuple[str, str, str, bytes, Any]] = [
    (
        "commerce",
        "/api/products",
        JSON,
        b'{"title": "Book", "pricingModel": "free"}',
        lambda coding: {"error": refusal(coding)},
    ),
    (
        "control",
        "/_sandbox/orgs",
        JSON,
        b'{"name": "Acme"}',
        lambda coding: {"error": refusal(coding), "code": "unsupported_media_type"},
    ),
    (
        "wallet",
        "/wallet/send",
        JSON,
        b'{"recipientHandle": "tigist", "amountMinor": 100, "idempotencyKey": "key-00001"}',
        lambda coding: {"error": "unsupported_media_type", "message": refusal(coding)},
    ),
    (
        "identity",
        "/auth/oauth2/token",
        FORM,
        b"grant_type=client_credentials",
        lambda coding: {"error": "invalid_request", "error_description": refusal(coding)},
    ),
]


@pytest.mark.parametrize("coding", ["gzip", "br", "x-bogus", "identity, gzip"])
@pytest.mark.parametrize(("family", "path", "kind", "body", "answer"), ROUTES)
@pytest.mark.parametrize("compressed", [False, True])
def test_a_coded_body_is_refused_in_the_family_shape(
    svc_http: FlaskClient,
    auth: dict[str, str],
    family: str,
    path: str,
    kind: str,
    body: bytes,
    answer: Any,
    coding: str,
    compressed: bool,
) -> None:
    before = svc_http.get("/_sandbox/state").data
    sent = gzip.compress(body) if compressed else body
    headers = {**auth, "Content-Type": kind, "Content-Encoding": coding}
    response = svc_http.post(path, data=sent, headers=headers)
    assert response.status_code == 415
    named = coding.split(", ")[-1]
    assert response.json == answer(named)
    assert response.headers["Accept-Encoding"] == "identity"
    if family == "identity":
        assert response.headers["Cache-Control"] == "no-store"
    assert_unharmed(svc_http, before)


def test_a_hosted_page_form_is_refused_with_the_message_page(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    product = create_product(svc_http, auth, status="published")
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post(
        f"/p/{product['product']['checkoutToken']}",
        data=b"phone=0911111111",
        headers={"Content-Type": FORM, "Content-Encoding": "gzip"},
    )
    assert response.status_code == 415
    assert response.mimetype == "text/html"
    assert refusal("gzip") in response.get_data(as_text=True)
    assert_unharmed(svc_http, before)


@pytest.mark.parametrize("coding", ["identity", "IDENTITY", ""])
def test_identity_is_no_coding(svc_http: FlaskClient, auth: dict[str, str], coding: str) -> None:
    response = svc_http.post(
        "/api/products",
        data=json.dumps({"title": "Book", "pricingModel": "free"}),
        headers={**auth, "Content-Type": JSON, "Content-Encoding": coding},
    )
    assert response.status_code == 201


def test_a_request_without_a_body_is_not_concerned(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    response = svc_http.get("/api/products", headers={**auth, "Content-Encoding": "gzip"})
    assert response.status_code == 200
    assert svc_http.get("/_sandbox", headers={"Content-Encoding": "br"}).status_code == 200


def test_an_unknown_route_answers_404_whatever_its_body(svc_http: FlaskClient) -> None:
    response = svc_http.post(
        "/api/nothing-here",
        data=b"{}",
        headers={"Content-Type": JSON, "Content-Encoding": "gzip"},
    )
    assert response.status_code == 404


def sample_path(root: str, operation: Operation) -> str:
    """A concrete path of ``operation`` under ``root`` (any value fills a path parameter)."""
    return root + re.sub(r"\{[^}]+\}", "x0", operation.path)


#: Every operation of every contract that takes a body and is served under its API root.
WITH_BODY = [
    pytest.param(root, contract, operation, id=f"{name} {operation.label}")
    for name, root, contract in (
        ("commerce", "/api", commerce_contract()),
        ("identity", "/auth", identity_contract()),
        ("wallet", "/wallet", wallet_contract()),
    )
    for operation in contract.operations
    if "requestBody" in operation.definition and not operation.own_server
]


@pytest.mark.parametrize(("root", "contract", "operation"), WITH_BODY)
def test_every_operation_with_a_body_declares_the_415_it_answers(
    svc_http: FlaskClient, auth: dict[str, str], root: str, contract: Contract, operation: Operation
) -> None:
    content_type = next(iter(operation.definition["requestBody"]["content"]))
    response = svc_http.open(
        sample_path(root, operation),
        method=operation.method,
        data=gzip.compress(b"{}"),
        headers={**auth, "Content-Type": content_type, "Content-Encoding": "gzip"},
    )
    assert response.status_code == 415
    found = contract.validate_response(
        operation, 415, response.headers, response.content_type, response.get_data()
    )
    assert found == []
