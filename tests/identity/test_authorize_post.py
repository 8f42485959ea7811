"""An authorization request sent by POST (OpenID Connect Core §3.1.2.1: the authorization
endpoint "MUST support the use of the HTTP GET and POST methods"): its parameters in a
form-encoded body, answered as the GET, but for 303 redirects; a form with ``decision`` stays
the consent page's."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import (
    AUTH,
    Client,
    authorize_params,
    exchange,
    query_of,
)
from tests.identity.test_authorize import hidden_fields, signed_in
from tests.identity.test_prompt import PASSWORD, SIGN_IN, remembered

AUTHORIZE = f"{AUTH}/oauth2/authorize"

#: What the browser holds (signed in, the consent given before) and how the request differs
#: from a good one: each is answered alike by GET and POST.
CASES: dict[str, tuple[bool, bool, dict[str, str | None]]] = {
    "signed out: the sign-in page": (False, False, {}),
    "signed in, new scopes: the consent page": (True, False, {}),
    "signed in, consent given: a code": (True, True, {}),
    "prompt=login: the sign-in page again": (True, True, {"prompt": "login"}),
    "prompt=none signed out: login_required": (False, False, {"prompt": "none"}),
    "a scope without openid: invalid_scope": (False, False, {"scope": "profile"}),
    "no code_challenge: invalid_request": (False, False, {"code_challenge": None}),
    "a request object: request_not_supported": (False, False, {"request": "x"}),
    "an unknown client: the error page": (False, False, {"client_id": "0" * 24}),
    "a redirect_uri not registered: the error page": (
        False,
        False,
        {"redirect_uri": "https://evil.example/cb"},
    ),
}


def answer(response: Any) -> tuple[Any, ...]:
    """What a browser sees, a code left out (each request issues its own)."""
    if response.status_code in (302, 303):
        location = response.headers["Location"]
        query = query_of(location)
        has_code = query.pop("code", None) is not None
        return ("redirect", location.split("?")[0], query, has_code)
    return (response.status_code, response.mimetype, response.text)


@pytest.mark.parametrize("case", list(CASES))
def test_a_post_is_answered_as_the_get_but_with_303(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, case: str
) -> None:
    browser_signed_in, consented, change = CASES[case]
    if browser_signed_in:
        signed_in(http, svc_sandbox)
    if consented:
        remembered(http, svc_sandbox, confidential)
    params = authorize_params(confidential, **change)
    by_get = http.get(AUTHORIZE, query_string=params)  # first: it sets the browser cookie
    by_post = http.post(AUTHORIZE, data=params)
    assert answer(by_post) == answer(by_get)
    assert (by_get.status_code, by_post.status_code) in [(200, 200), (400, 400), (302, 303)]
    if by_post.status_code == 303 and "code" in query_of(by_post.headers["Location"]):
        code = query_of(by_post.headers["Location"])["code"]
        assert exchange(http, confidential, code).status_code == 200


def test_a_signed_out_post_signs_in_consents_and_gets_a_code(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    """The whole browser flow from a POST: the sign-in form, then authorize again by GET
    (the request in the redirect's query), the consent form, a code."""
    sign_in_page = http.post(AUTHORIZE, data=authorize_params(confidential))
    assert sign_in_page.status_code == 200 and SIGN_IN in sign_in_page.text
    fields = dict(hidden_fields(sign_in_page.text))
    signed = http.post(f"{AUTH}/signin", data={**fields, "login": "abebe", "password": PASSWORD})
    assert signed.status_code == 303
    consent_page = http.get(signed.headers["Location"])
    assert consent_page.status_code == 200 and 'name="decision"' in consent_page.text
    approved = http.post(
        AUTHORIZE, data={**dict(hidden_fields(consent_page.text)), "decision": "approve"}
    )
    assert approved.status_code == 303
    callback = query_of(approved.headers["Location"])
    assert callback["state"] == "state-123" and callback["iss"] == svc_sandbox.settings.issuer
    assert exchange(http, confidential, callback["code"]).status_code == 200


def test_the_query_of_a_post_is_not_read(http: FlaskClient, confidential: Client) -> None:
    """The parameters travel in the body; a client_id in the query alone is missing."""
    response = http.post(f"{AUTHORIZE}?client_id={confidential.client_id}", data={"x": "1"})
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert '<span id="error-description">client_id is missing</span>' in response.text


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b'{"client_id": "x"}', "application/json"),
        (b"", None),
        (b"client_id=x", "text/plain"),
    ],
    ids=["json", "no body", "text"],
)
def test_a_post_without_a_form_is_an_error_page(
    http: FlaskClient, svc_sandbox: Sandbox, body: bytes, content_type: str | None
) -> None:
    before = svc_sandbox.export()
    response = http.post(AUTHORIZE, data=body, content_type=content_type)
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert "Content-Type must be application/x-www-form-urlencoded" in response.text
    assert svc_sandbox.export() == before


def test_a_post_counts_against_the_authorize_limit(
    svc_http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    """Spec §8: 30 authorize requests a minute, whichever method sends them."""
    params = authorize_params(confidential)
    for n in range(30):
        sent = (
            svc_http.post(AUTHORIZE, data=params)
            if n % 2
            else svc_http.get(AUTHORIZE, query_string=params)
        )
        assert sent.status_code == 200
    svc_sandbox.advance(timedelta(seconds=1))
    limited = svc_http.post(AUTHORIZE, data=params)
    assert limited.status_code == 429 and limited.mimetype == "text/html"
    assert limited.headers["Retry-After"] == "59"


def test_a_form_with_decision_is_the_consent_form(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    """Its CSRF token is checked, as before: without it nothing is decided."""
    signed_in(http, svc_sandbox)
    before = svc_sandbox.export()
    response = http.post(AUTHORIZE, data={**authorize_params(confidential), "decision": "approve"})
    assert response.status_code == 400 and "csrf_token" in response.text
    assert svc_sandbox.export() == before
