"""POST {auth_url}/signin, the sign-in page's form: it carries the authorization request in
hidden fields, one per parameter, and checks them again as authorize does. Any request
authorize accepts signs in (spec §4: no length on ``state``); a tampered one is an error page
whose CSP names only registered addresses; a wrong password keeps the app's name."""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import pytest
from flask.testing import FlaskClient

from svc_sandbox.identity.api import FORM_REFUSED, UNTRUSTED
from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import AUTH, Client, authorize_params, query_of
from tests.identity.test_authorize import hidden_fields

PASSWORD = "abebe-sandbox-pass"

#: States authorize accepts (each parameter up to 2,000 characters, spec §5.3 sets no length),
#: whose URL-encoded request is longer than 2,000 characters.
LONG_STATES = {
    "amharic": "ሰላም" * 80,  # 240 characters, 2,160 URL-encoded
    "json": json.dumps({"returnTo": "/account?tab=wallet&x=" + "a" * 1700, "csrf": "k" * 40}),
    "2000 characters": "s" * 2000,
    # Carried back byte for byte (a template that closed the override changed it).
    "a direction override": "\u202eabc",
}


def sign_in_form(http: FlaskClient, client: Client, **overrides: str | None) -> dict[str, str]:
    """The sign-in page of an authorization request: its form's hidden fields."""
    page = http.get(f"{AUTH}/oauth2/authorize", query_string=authorize_params(client, **overrides))
    assert page.status_code == 200 and "<h1>Sign in</h1>" in page.text
    return dict(hidden_fields(page.text))


def policy(response: object) -> dict[str, str]:
    header: str = response.headers["Content-Security-Policy"]  # type: ignore[attr-defined]
    return dict(d.split(" ", 1) for d in header.split("; "))


@pytest.mark.parametrize("state", LONG_STATES.values(), ids=list(LONG_STATES))
def test_a_long_or_non_ascii_state_signs_in_and_comes_back_to_the_app(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, state: str
) -> None:
    fields = sign_in_form(http, confidential, state=state)
    assert fields["state"] == state
    signed = http.post(f"{AUTH}/signin", data={**fields, "login": "abebe", "password": PASSWORD})
    assert signed.status_code == 303
    consent = http.get(signed.headers["Location"])
    assert consent.status_code == 200
    assert "wants to access your account" in consent.text
    decided = http.post(
        f"{AUTH}/oauth2/authorize",
        data={**dict(hidden_fields(consent.text)), "decision": "approve"},
    )
    assert decided.status_code == 303
    answer = query_of(decided.headers["Location"])
    assert answer["state"] == state  # spec §4: the callback carries code, state and iss
    assert answer["iss"] == svc_sandbox.settings.issuer and answer["code"]


def test_a_wrong_password_keeps_the_apps_name_and_its_registered_address(
    http: FlaskClient, confidential: Client
) -> None:
    fields = sign_in_form(http, confidential)
    response = http.post(f"{AUTH}/signin", data={**fields, "login": "abebe", "password": "wrong"})
    assert response.status_code == 401
    assert '<strong id="app-name"><bdi>Sandbox Wallet App</bdi></strong>' in response.text
    assert "Wrong handle, email or password" in response.text
    assert dict(hidden_fields(response.text)) == fields  # the next try carries the request
    redirect = urlsplit(confidential.redirect_uri)
    assert f"{redirect.scheme}://{redirect.netloc}" in policy(response)["form-action"]


def test_a_refused_sign_in_marks_both_fields_invalid_and_points_them_at_the_message(
    http: FlaskClient, confidential: Client
) -> None:
    fields = sign_in_form(http, confidential)
    first = http.get(f"{AUTH}/oauth2/authorize", query_string=authorize_params(confidential))
    assert "aria-invalid" not in first.text
    response = http.post(f"{AUTH}/signin", data={**fields, "login": "abebe", "password": "wrong"})
    for name in ("login", "password"):
        tag = re.search(rf'<input id="{name}"[^>]*>', response.text)
        assert tag is not None
        assert 'aria-invalid="true" aria-describedby="error"' in tag.group(0)
    assert '<p class="state error" id="error" role="alert">' in response.text


TYPED_WRONG = {
    "a pasted tab in the login": ({"login": "abebe\t", "password": PASSWORD}, "login contains"),
    "a novel for a login": ({"login": "a" * 2001, "password": PASSWORD}, "login is longer"),
    "a control character in the password": ({"login": "abebe", "password": "x\x01"}, "password"),
}


@pytest.mark.parametrize(("typed", "says"), TYPED_WRONG.values(), ids=list(TYPED_WRONG))
def test_a_login_or_password_no_account_has_is_said_on_the_form(
    http: FlaskClient, confidential: Client, typed: dict[str, str], says: str
) -> None:
    """It ended on the identity error page ("invalid_request ... Go back, reload the page and
    try again"), the form and the request it carried gone."""
    fields = sign_in_form(http, confidential)
    response = http.post(f"{AUTH}/signin", data={**fields, **typed})
    assert response.status_code == 400
    assert "<h1>Sign in</h1>" in response.text
    assert re.search(
        rf'<p class="state error" id="error" role="alert">{says}[^<]*</p>', response.text
    )
    assert dict(hidden_fields(response.text)) == fields  # the next try carries the request


@pytest.mark.parametrize("login", ["meron@users.sandbox.test", "Meron@Users.Sandbox.Test"])
def test_an_email_signs_in_its_user_in_any_case(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, login: str
) -> None:
    """Emails are unique without case (docs/spec-gaps.md), so one always names one user."""
    created = http.post("/_sandbox/users", json={"handle": "meron", "password": "meron-pass"})
    assert created.status_code == 201
    taken = http.post("/_sandbox/users", json={"email": login, "password": "other-pass"})
    assert taken.status_code == 409
    fields = sign_in_form(http, confidential)
    signed = http.post(f"{AUTH}/signin", data={**fields, "login": login, "password": "meron-pass"})
    assert signed.status_code == 303


TAMPERED_REDIRECTS = [
    "http://[::1",  # cannot be parsed
    "http://x; script-src * 'unsafe-inline'; form-action *; a",  # directives for the CSP
    "https://evil.example/cb",  # not registered
]


@pytest.mark.parametrize("password", [PASSWORD, "wrong"])
@pytest.mark.parametrize("redirect_uri", TAMPERED_REDIRECTS)
def test_a_tampered_redirect_address_is_an_error_page_that_changes_nothing(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    redirect_uri: str,
    password: str,
) -> None:
    fields = {**sign_in_form(http, confidential), "redirect_uri": redirect_uri}
    before = svc_sandbox.export()
    response = http.post(f"{AUTH}/signin", data={**fields, "login": "abebe", "password": password})
    assert response.status_code == 400
    assert "Location" not in response.headers and "Set-Cookie" not in response.headers
    assert UNTRUSTED in response.text
    directives = policy(response)
    assert directives["script-src"] == "'self'"
    assert directives["form-action"] == "'self' http://127.0.0.1:8700"  # the roots only
    assert svc_sandbox.export() == before


@pytest.mark.parametrize(
    "return_to",
    [
        "https:/auth/oauth2/authorize?client_id=x",
        "//evil.example/auth/oauth2/authorize",
        "https://evil.example/auth/oauth2/authorize",
    ],
)
def test_no_address_to_return_to_is_taken_from_the_form(
    http: FlaskClient, confidential: Client, return_to: str
) -> None:
    """The sign-in redirects to this provider's authorize path with the checked request; a
    field naming somewhere else is not read."""
    fields = sign_in_form(http, confidential)
    response = http.post(
        f"{AUTH}/signin",
        data={**fields, "return_to": return_to, "login": "abebe", "password": PASSWORD},
    )
    assert response.status_code == 303
    location = urlsplit(response.headers["Location"])
    assert (location.scheme, location.netloc, location.path) == ("", "", f"{AUTH}/oauth2/authorize")
    assert query_of(response.headers["Location"]) == authorize_params(confidential)


def test_a_stale_form_does_not_blame_the_app(http: FlaskClient, confidential: Client) -> None:
    fields = {**sign_in_form(http, confidential), "csrf_token": "0" * 64}
    response = http.post(f"{AUTH}/signin", data={**fields, "login": "abebe", "password": PASSWORD})
    assert response.status_code == 400
    assert "csrf_token" in response.text
    assert FORM_REFUSED in response.text and "could not be trusted" not in response.text
