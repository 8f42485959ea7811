"""GET {auth_url}/oauth2/authorize (issue 11 item 4): what is shown on an error page, what is
redirected, the sign-in and consent pages, remembered consent."""

from __future__ import annotations

import html
import re

import pytest
from flask.testing import FlaskClient
from werkzeug.datastructures import MultiDict

from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import (
    AUTH,
    Client,
    authorize_as,
    authorize_params,
    challenge,
    exchange,
    query_of,
    user_id,
)


def get_authorize(http: FlaskClient, params: dict[str, str]) -> object:
    return http.get(f"{AUTH}/oauth2/authorize", query_string=params)


def signed_in(http: FlaskClient, sandbox: Sandbox, handle: str = "abebe") -> None:
    response = http.post(f"/_sandbox/users/{user_id(sandbox, handle)}/session", json={})
    assert response.status_code == 201
    cookie = response.json["cookie"]  # type: ignore[index]
    http.set_cookie(cookie["name"], cookie["value"], path=cookie["path"])


def hidden_fields(page: str) -> list[tuple[str, str]]:
    found = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page)
    return [(name, html.unescape(value)) for name, value in found]


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"client_id": "0" * 24}, "invalid_client"),
        ({"client_id": None}, "invalid_request"),
        ({"redirect_uri": None}, "invalid_request"),
        ({"redirect_uri": "http://127.0.0.1:8080/callback/"}, "redirect_uri_mismatch"),
        ({"redirect_uri": "http://127.0.0.1:8081/callback"}, "redirect_uri_mismatch"),
        ({"redirect_uri": "https://127.0.0.1:8080/callback"}, "redirect_uri_mismatch"),
        ({"redirect_uri": "http://127.0.0.1:8080/Callback"}, "redirect_uri_mismatch"),
        ({"redirect_uri": "http://127.0.0.2:8080/callback"}, "redirect_uri_mismatch"),
        ({"redirect_uri": "http://127.0.0.1:8080/callback?x=1"}, "redirect_uri_mismatch"),
        ({"redirect_uri": "https://evil.example/callback"}, "redirect_uri_mismatch"),
    ],
)
def test_untrusted_client_or_redirect_is_an_error_page_never_a_redirect(
    http: FlaskClient, confidential: Client, change: dict[str, str | None], code: str
) -> None:
    response = http.get(
        f"{AUTH}/oauth2/authorize", query_string=authorize_params(confidential, **change)
    )
    assert response.status_code == 400
    assert "Location" not in response.headers
    assert response.mimetype == "text/html"
    assert f'<code id="error">{code}</code>' in response.text


def test_disabled_client_is_an_error_page(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    http.post(f"/_sandbox/apps/{confidential.client_id}/disable", json={})
    response = http.get(f"{AUTH}/oauth2/authorize", query_string=authorize_params(confidential))
    assert response.status_code == 400
    assert '<code id="error">invalid_client</code>' in response.text


@pytest.mark.parametrize(
    ("change", "code", "mentions"),
    [
        ({"code_challenge": None}, "invalid_request", "code_challenge"),
        ({"code_challenge_method": None}, "invalid_request", "code_challenge_method"),
        ({"code_challenge_method": "plain"}, "invalid_request", "S256"),
        ({"code_challenge": challenge()[:42]}, "invalid_request", "43"),
        ({"code_challenge": challenge()[:42] + "="}, "invalid_request", "base64url"),
        ({"response_type": "token"}, "unsupported_response_type", "code"),
        ({"response_type": "code id_token"}, "unsupported_response_type", "code"),
        ({"response_type": None}, "invalid_request", "response_type"),
        ({"scope": "profile email"}, "invalid_scope", "openid"),
        ({"scope": None}, "invalid_scope", "openid"),
        ({"scope": "openid payments:admin"}, "invalid_scope", "payments:admin"),
    ],
)
def test_other_errors_redirect_with_error_state_and_iss(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    change: dict[str, str | None],
    code: str,
    mentions: str,
) -> None:
    response = http.get(
        f"{AUTH}/oauth2/authorize", query_string=authorize_params(confidential, **change)
    )
    assert response.status_code == 302
    location = response.headers["Location"]
    assert location.startswith(confidential.redirect_uri + "?")
    answer = query_of(location)
    assert answer["error"] == code
    assert mentions in answer["error_description"]
    assert answer["state"] == "state-123"
    assert answer["iss"] == svc_sandbox.settings.issuer


@pytest.mark.parametrize("state", [None, ""], ids=["missing", "empty"])
def test_an_authorize_request_without_state_redirects_invalid_request(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, state: str | None
) -> None:
    """§4 lists ``state`` (only ``nonce`` is optional) and the callback carries it: a request
    without one is told so, with nothing to echo."""
    params = authorize_params(confidential, state=state)
    response = http.get(f"{AUTH}/oauth2/authorize", query_string=params)
    assert response.status_code == 302
    answer = query_of(response.headers["Location"])
    assert answer == {
        "error": "invalid_request",
        "error_description": "state is missing: send a fresh random state with each "
        "authorization request (the callback carries it back)",
        "iss": svc_sandbox.settings.issuer,
    }


def test_wallet_send_only_for_approved_confidential_clients(
    http: FlaskClient, svc_sandbox: Sandbox, public: Client
) -> None:
    answer = authorize_as(http, public, user_id(svc_sandbox), scope="openid wallet:send")
    assert answer["error"] == "invalid_scope"
    created = http.post(
        "/_sandbox/apps",
        json={
            "name": "Unapproved",
            "redirectUris": ["https://unapproved.example/cb"],
            "scopes": ["openid", "wallet:read", "wallet:send"],
        },
    ).json
    unapproved = Client(created["clientId"], created["clientSecret"], created["redirectUris"][0])  # type: ignore[index]
    answer = authorize_as(http, unapproved, user_id(svc_sandbox), scope="openid wallet:send")
    assert answer["error"] == "invalid_scope"
    http.post(f"/_sandbox/apps/{unapproved.client_id}/approve-wallet-send", json={})
    answer = authorize_as(http, unapproved, user_id(svc_sandbox), scope="openid wallet:send")
    assert "code" in answer


def test_signed_out_browser_sees_the_sign_in_page(http: FlaskClient, confidential: Client) -> None:
    response = http.get(f"{AUTH}/oauth2/authorize", query_string=authorize_params(confidential))
    assert response.status_code == 200
    assert "<h1>Sign in</h1>" in response.text
    assert 'name="csrf_token"' in response.text
    assert "<script" not in response.text  # usable without JavaScript


def test_sign_in_with_a_wrong_password_is_refused(http: FlaskClient, confidential: Client) -> None:
    page = http.get(f"{AUTH}/oauth2/authorize", query_string=authorize_params(confidential))
    fields = dict(hidden_fields(page.text))
    response = http.post(
        f"{AUTH}/signin", data={**fields, "login": "abebe", "password": "wrong-password"}
    )
    assert response.status_code == 401
    assert "Wrong handle, email or password" in response.text


@pytest.mark.parametrize("csrf", [None, "0" * 64])
def test_forms_without_the_right_csrf_token_are_refused(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, csrf: str | None
) -> None:
    page = http.get(f"{AUTH}/oauth2/authorize", query_string=authorize_params(confidential))
    fields = dict(hidden_fields(page.text))
    fields.pop("csrf_token")
    if csrf is not None:
        fields["csrf_token"] = csrf
    response = http.post(
        f"{AUTH}/signin", data={**fields, "login": "abebe", "password": "abebe-sandbox-pass"}
    )
    assert response.status_code == 400
    assert "csrf_token" in response.text
    signed_in(http, svc_sandbox)
    consent = dict(authorize_params(confidential), decision="approve")
    if csrf is not None:
        consent["csrf_token"] = csrf
    response = http.post(f"{AUTH}/oauth2/authorize", data=consent)
    assert response.status_code == 400
    assert "csrf_token" in response.text


def test_consent_page_lists_each_scope_and_the_app(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    signed_in(http, svc_sandbox)
    page = http.get(f"{AUTH}/oauth2/authorize", query_string=authorize_params(confidential))
    assert page.status_code == 200
    text = page.text
    assert '<bdi id="app-name">Sandbox Wallet App</bdi>' in text
    assert 'href="https://app.sandbox.test"' in text
    assert "<img" not in text  # the seeded app registers no logo
    for scope in ("openid", "profile", "email", "offline_access", "wallet:read", "wallet:send"):
        assert f"<code>{scope}</code>" in text
    assert "Send money from your wallet to other users" in text
    assert re.search(r'value="openid" checked disabled', text)  # openid cannot be declined


def consent_page_of_new_app(http: FlaskClient, svc_sandbox: Sandbox, **registered: str) -> str:
    """The consent page a signed-in user sees for a new openid-only app registered with
    ``registered`` (name, website, logoUrl, ...)."""
    created = http.post(
        "/_sandbox/apps",
        json={"redirectUris": ["https://x.example/cb"], "scopes": ["openid"], **registered},
    ).json
    client = Client(created["clientId"], created["clientSecret"], "https://x.example/cb")  # type: ignore[index]
    signed_in(http, svc_sandbox)
    return http.get(
        f"{AUTH}/oauth2/authorize", query_string=authorize_params(client, scope="openid")
    ).text


def test_consent_page_shows_the_logo_an_app_registered(
    http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    text = consent_page_of_new_app(
        http, svc_sandbox, name="Shop", logoUrl="https://x.example/logo.png"
    )
    assert '<img src="https://x.example/logo.png" alt="" width="64" height="64">' in text


def test_consent_page_escapes_what_the_app_registered(
    http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    text = consent_page_of_new_app(
        http,
        svc_sandbox,
        name="<script>alert(1)</script>",
        # A quote is an RFC 3986 character (sub-delims); a double quote is refused outright.
        website="https://x.example/'onmouseover='alert(1)",
    )
    assert "<script>alert(1)</script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "'onmouseover='" not in text


def test_a_direction_override_in_an_apps_name_ends_with_the_name(
    http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    """An unclosed U+202E in the name ran on over the page's own words: the heading read
    "ruoy ssecca ot stnaw Bank App". The name is isolated (<bdi>), never changed."""
    text = consent_page_of_new_app(http, svc_sandbox, name="\u202eppA knaB")
    assert '<bdi id="app-name">\u202eppA knaB</bdi> wants to access' in text
    # The title is plain text: isolated there (FSI ... PDI).
    assert "<title>Authorize \u2068\u202eppA knaB\u2069 · svc-sandbox</title>" in text


def test_per_scope_decline_narrows_the_grant_but_keeps_openid(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    signed_in(http, svc_sandbox)
    page = http.get(f"{AUTH}/oauth2/authorize", query_string=authorize_params(confidential))
    fields = hidden_fields(page.text)
    response = http.post(
        f"{AUTH}/oauth2/authorize",
        data=MultiDict([*fields, ("grant", "email"), ("decision", "approve")]),
    )
    assert response.status_code == 303
    answer = query_of(response.headers["Location"])
    assert answer["iss"] == svc_sandbox.settings.issuer and answer["state"] == "state-123"
    tokens = exchange(http, confidential, answer["code"]).json
    assert tokens["scope"] == "openid email"  # type: ignore[index]
    assert "refresh_token" not in tokens  # type: ignore[operator]


def test_remembered_consent_skips_the_page_for_the_same_or_fewer_scopes(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    signed_in(http, svc_sandbox)
    authorize_as(http, confidential, user_id(svc_sandbox), scope="openid profile email")
    for scope in ("openid profile email", "openid email", "openid"):
        response = http.get(
            f"{AUTH}/oauth2/authorize", query_string=authorize_params(confidential, scope=scope)
        )
        assert response.status_code == 302, scope
        assert "code" in query_of(response.headers["Location"])
    wider = http.get(
        f"{AUTH}/oauth2/authorize",
        query_string=authorize_params(confidential, scope="openid profile wallet:read"),
    )
    assert wider.status_code == 200 and "wallet:read" in wider.text


def test_a_scope_unticked_on_the_consent_page_is_taken_back_from_the_consent(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    """Spec §5 "Users may decline individual scopes": the user's latest answer for a scope
    stands. The remembered consent kept a scope the user had just unticked, and the next
    authorization asking for it was granted without the page."""
    signed_in(http, svc_sandbox)
    authorize_as(http, confidential, user_id(svc_sandbox), scope="openid profile email")
    asked = authorize_params(confidential, scope="openid profile email", prompt="consent")
    page = http.get(f"{AUTH}/oauth2/authorize", query_string=asked)
    assert page.status_code == 200
    decided = http.post(
        f"{AUTH}/oauth2/authorize",
        data=MultiDict([*hidden_fields(page.text), ("grant", "profile"), ("decision", "approve")]),
    )
    assert decided.status_code == 303
    answer = query_of(decided.headers["Location"])
    assert exchange(http, confidential, answer["code"]).json["scope"] == "openid profile"  # type: ignore[index]
    consents = svc_sandbox.oauth.consents_of(user_id(svc_sandbox))
    assert consents == {confidential.client_id: ["openid", "profile"]}
    again = http.get(
        f"{AUTH}/oauth2/authorize",
        query_string=authorize_params(confidential, scope="openid profile email"),
    )
    assert again.status_code == 200 and "email" in again.text  # asked again
    kept = http.get(
        f"{AUTH}/oauth2/authorize", query_string=authorize_params(confidential, scope="openid")
    )
    assert kept.status_code == 302 and "code" in query_of(kept.headers["Location"])


def test_a_scope_not_asked_about_stays_consented(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    """Approving a narrower request takes nothing back: only what the page asked about is the
    user's answer. Denying the whole request leaves the consent as it was."""
    signed_in(http, svc_sandbox)
    user = user_id(svc_sandbox)
    authorize_as(http, confidential, user, scope="openid profile email")
    authorize_as(http, confidential, user, scope="openid email")
    authorize_as(http, confidential, user, scope="openid profile", decision="deny")
    consents = svc_sandbox.oauth.consents_of(user)
    assert consents == {confidential.client_id: ["openid", "profile", "email"]}


def test_control_plane_decision_deny(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    answer = authorize_as(http, confidential, user_id(svc_sandbox), decision="deny")
    assert answer["error"] == "access_denied"
    assert answer["state"] == "state-123"
    assert answer["iss"] == svc_sandbox.settings.issuer


def test_viewing_the_pages_changes_no_state(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client
) -> None:
    before = svc_sandbox.export()
    page = http.get(f"{AUTH}/oauth2/authorize", query_string=authorize_params(confidential))
    assert page.status_code == 200 and "csrf_token" in page.text
    assert svc_sandbox.export() == before  # the CSRF cookie draws no seeded id


#: OpenID Connect Core §6.1, §6.2: the request as a request object, by value or by reference,
#: and the error a provider that does not support it must send back.
REQUEST_OBJECTS = {
    "by value": ({"request": "eyJhbGciOiJub25lIn0.eyJzdGF0ZSI6InMifQ."}, "request_not_supported"),
    "by reference": (
        {"request_uri": "https://app.sandbox.test/request.jwt"},
        "request_uri_not_supported",
    ),
    "pushed (RFC 9126)": (
        {"request_uri": "urn:ietf:params:oauth:request_uri:abc"},
        "request_uri_not_supported",
    ),
    "both": ({"request": "x", "request_uri": "urn:x"}, "request_not_supported"),
    # The other parameters may ride in the object: their absence is not what is reported.
    "the rest inside": (
        {"request": "x", "code_challenge": None, "scope": None, "response_type": None},
        "request_not_supported",
    ),
}


@pytest.mark.parametrize("kind", list(REQUEST_OBJECTS))
def test_a_request_object_is_refused_by_redirect_as_not_supported(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, kind: str
) -> None:
    change, code = REQUEST_OBJECTS[kind]
    name = code.removesuffix("_not_supported")
    meta = http.get(f"{AUTH}/.well-known/openid-configuration").json
    assert meta[f"{name}_parameter_supported"] is False  # type: ignore[index]
    signed_in(http, svc_sandbox)  # a code would be issued at once without the refusal
    authorize_as(http, confidential, user_id(svc_sandbox))
    before = svc_sandbox.export()
    response = get_authorize(http, authorize_params(confidential, **change))
    assert response.status_code == 302  # type: ignore[attr-defined]
    location = response.headers["Location"]  # type: ignore[attr-defined]
    assert location.startswith(confidential.redirect_uri + "?")
    assert query_of(location) == {
        "error": code,
        "error_description": (
            f"{name} is not supported by this provider ({name}_parameter_supported is false): "
            "send the authorization request's parameters themselves"
        ),
        "state": "state-123",
        "iss": svc_sandbox.settings.issuer,
    }
    assert svc_sandbox.export() == before
    scripted = authorize_as(http, confidential, user_id(svc_sandbox), **change)
    assert scripted["error"] == code and "code" not in scripted


def test_a_request_object_of_an_untrusted_client_is_an_error_page(
    http: FlaskClient, confidential: Client
) -> None:
    params = authorize_params(confidential, client_id="0" * 24, request="x")
    response = http.get(f"{AUTH}/oauth2/authorize", query_string=params)
    assert response.status_code == 400 and "Location" not in response.headers
    assert '<code id="error">invalid_client</code>' in response.text


def test_an_empty_request_parameter_is_no_request_object(
    http: FlaskClient, confidential: Client
) -> None:
    """RFC 6749 §3.1: a parameter without a value is as if omitted."""
    params = authorize_params(confidential, request="", request_uri="")
    response = http.get(f"{AUTH}/oauth2/authorize", query_string=params)
    assert response.status_code == 200 and "<h1>Sign in</h1>" in response.text
