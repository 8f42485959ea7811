"""OpenID Connect Core §3.1.2.1 ``prompt``, ``max_age`` and ``login_hint`` at authorize
(§15.1: mandatory to implement for every OpenID Provider), through the sign-in and consent
pages, the ID token's ``auth_time`` (checked with joserfc) and the scripted authorize step."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import (
    AUTH,
    Client,
    authorize_as,
    authorize_params,
    decode_jwt,
    epoch,
    exchange,
    query_of,
    user_id,
)
from tests.identity.test_authorize import hidden_fields, signed_in

PASSWORD = "abebe-sandbox-pass"
SIGN_IN = "<h1>Sign in</h1>"
CONSENT = "wants to access your account"


def authorize(http: FlaskClient, client: Client, **overrides: str | None) -> Any:
    return http.get(f"{AUTH}/oauth2/authorize", query_string=authorize_params(client, **overrides))


def remembered(http: FlaskClient, sandbox: Sandbox, client: Client) -> None:
    """The user approved every scope of ``authorize_params`` before."""
    response = http.put(
        f"/_sandbox/users/{user_id(sandbox)}/consents/{client.client_id}",
        json={"scopes": authorize_params(client)["scope"].split()},
    )
    assert response.status_code == 200


def redirected_error(response: Any, sandbox: Sandbox) -> str:
    assert response.status_code in (302, 303), response.text[:200]
    answer = query_of(response.headers["Location"])
    assert answer["state"] == "state-123" and answer["iss"] == sandbox.settings.issuer
    assert answer["error_description"]
    error: str = answer["error"]
    return error


def code_of(response: Any) -> str:
    assert response.status_code in (302, 303), response.text[:200]
    code: str = query_of(response.headers["Location"])["code"]
    return code


def test_discovery_lists_the_prompt_values(http: FlaskClient) -> None:
    meta = http.get(f"{AUTH}/.well-known/openid-configuration").json
    assert meta["prompt_values_supported"] == ["none", "login", "consent", "select_account"]


@pytest.mark.parametrize(
    ("session", "consented", "error"),
    [
        (False, True, "login_required"),
        (False, False, "login_required"),
        (True, False, "consent_required"),
    ],
    ids=["signed out", "signed out, no consent", "no consent"],
)
def test_prompt_none_never_shows_a_page(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    session: bool,
    consented: bool,
    error: str,
) -> None:
    """§3.1.2.6: the error travels to the app by redirect, and nothing changes."""
    if consented:
        remembered(http, svc_sandbox, confidential)
    if session:
        signed_in(http, svc_sandbox)
    before = svc_sandbox.export()
    response = authorize(http, confidential, prompt="none")
    assert redirected_error(response, svc_sandbox) == error
    assert svc_sandbox.export() == before


def test_prompt_none_with_a_session_and_consent_is_a_code_at_once(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    remembered(http, svc_sandbox, confidential)
    signed_in(http, svc_sandbox)
    code = code_of(authorize(http, confidential, prompt="none"))
    assert exchange(http, confidential, code).status_code == 200


@pytest.mark.parametrize("prompt", ["login", "select_account", "login consent"])
def test_prompt_login_shows_the_sign_in_page_to_a_signed_in_browser(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, prompt: str
) -> None:
    """Then the new sign-in's time is the ID token's auth_time, and the browser is not sent
    back to the sign-in page (the sign-in met the prompt)."""
    remembered(http, svc_sandbox, confidential)
    signed_in(http, svc_sandbox)
    svc_sandbox.advance(timedelta(hours=1))
    page = authorize(http, confidential, prompt=prompt)
    assert page.status_code == 200 and SIGN_IN in page.text
    fields = dict(hidden_fields(page.text))
    assert fields["prompt"] == prompt  # the request rides in the form
    signed = http.post(f"{AUTH}/signin", data={**fields, "login": "abebe", "password": PASSWORD})
    assert signed.status_code == 303
    assert "prompt" not in query_of(signed.headers["Location"]) or prompt == "login consent"
    after = http.get(signed.headers["Location"])
    if prompt == "login consent":
        assert after.status_code == 200 and CONSENT in after.text
        after = http.post(
            f"{AUTH}/oauth2/authorize",
            data={**dict(hidden_fields(after.text)), "decision": "approve"},
        )
    tokens = exchange(http, confidential, code_of(after)).json
    claims = decode_jwt(http, tokens["id_token"]).claims  # type: ignore[index]
    assert claims["auth_time"] == epoch(svc_sandbox)


def test_prompt_consent_shows_the_consent_page_despite_remembered_consent(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    remembered(http, svc_sandbox, confidential)
    signed_in(http, svc_sandbox)
    assert authorize(http, confidential).status_code == 302  # remembered: no page
    page = authorize(http, confidential, prompt="consent")
    assert page.status_code == 200 and CONSENT in page.text
    assert dict(hidden_fields(page.text))["prompt"] == "consent"
    decided = http.post(
        f"{AUTH}/oauth2/authorize",
        data={**dict(hidden_fields(page.text)), "decision": "deny"},
    )
    assert redirected_error(decided, svc_sandbox) == "access_denied"


@pytest.mark.parametrize(
    ("age", "max_age", "signs_in_again"),
    [(3600, "60", True), (3600, "3599", True), (3600, "3600", False), (0, "0", True)],
)
def test_max_age_asks_an_older_sign_in_again(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    age: int,
    max_age: str,
    signs_in_again: bool,
) -> None:
    """§3.1.2.1: older than max_age seconds (sandbox clock) signs in again; max_age=0 is
    prompt=login. The ID token's auth_time then satisfies the client's check."""
    remembered(http, svc_sandbox, confidential)
    signed_in(http, svc_sandbox)
    svc_sandbox.advance(timedelta(seconds=age))
    response = authorize(http, confidential, max_age=max_age)
    if signs_in_again:
        assert response.status_code == 200 and SIGN_IN in response.text
        assert dict(hidden_fields(response.text))["max_age"] == max_age
        assert (
            redirected_error(
                authorize(http, confidential, max_age=max_age, prompt="none"), svc_sandbox
            )
            == "login_required"
        )
        fields = dict(hidden_fields(response.text))
        signed = http.post(
            f"{AUTH}/signin", data={**fields, "login": "abebe", "password": PASSWORD}
        )
        response = http.get(signed.headers["Location"])
    tokens = exchange(http, confidential, code_of(response)).json
    claims = decode_jwt(http, tokens["id_token"]).claims  # type: ignore[index]
    assert claims["iat"] - claims["auth_time"] <= int(max_age)


@pytest.mark.parametrize(
    ("name", "value", "mentions"),
    [
        ("prompt", "none login", "none cannot be combined"),
        ("prompt", "none consent", "none cannot be combined"),
        ("prompt", "create", "prompt value create is not supported"),
        ("prompt", "Login", "prompt value Login is not supported"),
        ("max_age", "abc", "max_age must be a whole number"),
        ("max_age", "-1", "max_age must be a whole number"),
        ("max_age", "1.5", "max_age must be a whole number"),
    ],
)
def test_bad_prompt_or_max_age_redirects_invalid_request(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    name: str,
    value: str,
    mentions: str,
) -> None:
    signed_in(http, svc_sandbox)
    before = svc_sandbox.export()
    response = authorize(http, confidential, **{name: value})
    assert redirected_error(response, svc_sandbox) == "invalid_request"
    assert mentions in query_of(response.headers["Location"])["error_description"]
    assert svc_sandbox.export() == before


def test_login_hint_fills_the_sign_in_form(http: FlaskClient, confidential: Client) -> None:
    page = authorize(http, confidential, login_hint="tigist")
    assert 'name="login" autocomplete="username" required value="tigist"' in page.text
    assert dict(hidden_fields(page.text))["login_hint"] == "tigist"


@pytest.mark.parametrize(("consented", "answer"), [(True, "code"), (False, "consent_required")])
def test_the_scripted_authorize_step_keeps_prompt_none(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, consented: bool, answer: str
) -> None:
    """The scripted step is the user signing in and deciding (prompt=login, consent and
    max_age are met); prompt=none still shows no consent page."""
    if consented:
        remembered(http, svc_sandbox, confidential)
    result = authorize_as(http, confidential, user_id(svc_sandbox), prompt="none")
    assert result.get("error", "code") == answer
    login = authorize_as(http, confidential, user_id(svc_sandbox), prompt="login", max_age="0")
    assert "code" in login
