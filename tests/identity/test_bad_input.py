"""Bad input (issue 11 "Bad input"): repeated, missing, over-long or control-character
parameters are invalid_request naming the parameter; never a 500, never a state change."""

from __future__ import annotations

import time
from urllib.parse import urlencode

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import (
    AUTH,
    VERIFIER,
    Client,
    authorize_as,
    authorize_params,
    basic,
    query_of,
    tokens_for,
    user_id,
)

FORM = "application/x-www-form-urlencoded"
BAD_VALUES = {
    "repeated": None,
    "over-long": "x" * 2001,
    "control character": "abc\x00def",
    "newline": "abc\ndef",
}
PROBLEMS = {
    "repeated": "is repeated: send it once",
    "over-long": "is longer than 2000 characters",
    "control character": "contains control characters",
    "newline": "contains control characters",
}


def encoded(fields: dict[str, str], name: str, kind: str) -> str:
    pairs = list(fields.items())
    bad = BAD_VALUES[kind]
    if bad is None:
        pairs += [(name, fields.get(name, "openid"))] * (1 if name in fields else 2)
    else:
        pairs = [(k, v) for k, v in pairs if k != name] + [(name, bad)]
    return urlencode(pairs)


@pytest.fixture
def code_form(http: FlaskClient, svc_sandbox: Sandbox, confidential: Client) -> dict[str, str]:
    code = authorize_as(http, confidential, user_id(svc_sandbox))["code"]
    return {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": confidential.redirect_uri,
        "code_verifier": VERIFIER,
        "resource": svc_sandbox.settings.root("resource_url"),
    }


@pytest.mark.parametrize("kind", list(BAD_VALUES))
@pytest.mark.parametrize("name", ["grant_type", "code", "redirect_uri", "code_verifier", "scope"])
def test_token_parameters(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    code_form: dict[str, str],
    name: str,
    kind: str,
) -> None:
    refused_then_usable(
        http,
        svc_sandbox,
        confidential,
        encoded(code_form, name, kind),
        {"error": "invalid_request", "error_description": f"{name} {PROBLEMS[kind]}"},
        code_form,
    )


def refused_then_usable(
    http: FlaskClient,
    sandbox: Sandbox,
    client: Client,
    sent: str,
    error: dict[str, str],
    good: dict[str, str],
) -> None:
    """The token request ``sent`` (an encoded form) answers 400 ``error`` and changes nothing:
    the request ``good`` still gets tokens (the code or refresh token is not used up)."""
    before = sandbox.export()
    response = http.post(
        f"{AUTH}/oauth2/token", data=sent, content_type=FORM, headers=basic(client)
    )
    assert response.status_code == 400
    assert response.json == error
    assert sandbox.export() == before
    assert http.post(f"{AUTH}/oauth2/token", data=good, headers=basic(client)).status_code == 200


#: ``resource`` values that cannot be the one resource this provider issues tokens for, with
#: what the description says of them (RFC 8707 §2 ``invalid_target``).
BAD_RESOURCES = {
    "repeated": (["{resource}", "{resource}"], "resource is sent more than once"),
    "two resources": (
        ["{resource}", "https://other.example/api"],
        "resource is sent more than once",
    ),
    "over-long": (["{resource}" + "x" * 2001], "resource is longer than 2000 characters"),
    "control character": (["{resource}\x00"], "resource contains control characters"),
    "newline": (["{resource}\n"], "resource contains control characters"),
}


@pytest.mark.parametrize("kind", list(BAD_RESOURCES))
@pytest.mark.parametrize("grant", ["authorization_code", "refresh_token"])
def test_a_resource_this_provider_cannot_issue_for_is_invalid_target(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    code_form: dict[str, str],
    grant: str,
    kind: str,
) -> None:
    """RFC 8707 §2: a client may send several ``resource`` parameters; this provider issues a
    token for one resource, so it answers ``invalid_target`` naming it, and nothing changes."""
    resource = svc_sandbox.settings.root("resource_url")
    form = {k: v for k, v in code_form.items() if k != "resource"}
    if grant == "refresh_token":
        good = http.post(f"{AUTH}/oauth2/token", data=code_form, headers=basic(confidential))
        form = {"grant_type": grant, "refresh_token": good.json["refresh_token"]}
    values, problem = BAD_RESOURCES[kind]
    pairs = [*form.items(), *(("resource", v.format(resource=resource)) for v in values)]
    description = f"{problem}: this provider issues a token for one resource, {resource}"
    refused_then_usable(
        http,
        svc_sandbox,
        confidential,
        urlencode(pairs),
        {"error": "invalid_target", "error_description": description},
        {**form, "resource": resource},
    )


@pytest.mark.parametrize("kind", list(BAD_VALUES))
@pytest.mark.parametrize("name", ["client_id", "client_secret"])
def test_client_credentials_in_the_form(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    code_form: dict[str, str],
    name: str,
    kind: str,
) -> None:
    fields = {
        **code_form,
        "client_id": confidential.client_id,
        "client_secret": str(confidential.secret),
    }
    before = svc_sandbox.export()
    response = http.post(
        f"{AUTH}/oauth2/token", data=encoded(fields, name, kind), content_type=FORM
    )
    assert response.status_code == 400
    assert response.json["error"] == "invalid_request"
    assert response.json["error_description"].startswith(name)
    assert svc_sandbox.export() == before


@pytest.mark.parametrize("endpoint", ["introspect", "revoke"])
@pytest.mark.parametrize(
    "body", ["token=at_x&token=at_y", "token=at_x&token=at_x", "token=&token=at_x"]
)
def test_a_token_sent_twice_is_invalid_request(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, endpoint: str, body: str
) -> None:
    """Which of two tokens to introspect or revoke would be a guess."""
    before = svc_sandbox.export()
    response = http.post(
        f"{AUTH}/oauth2/{endpoint}", data=body, content_type=FORM, headers=basic(confidential)
    )
    assert response.status_code == 400
    assert response.json == {
        "error": "invalid_request",
        "error_description": "token is repeated: send it once",
    }
    assert svc_sandbox.export() == before


#: The most a token can be: the whole 1 MiB body but its field name (``token=``).
WHOLE_BODY = 1024 * 1024 - len("token=")
#: Tokens this provider could never have issued, as the encoded field: each is unknown.
UNKNOWN_TOKENS = {
    "over-long": "token=" + "x" * 2001,
    "control character": "token=at_x%00y",
    "newline": "token=at_x%0Ay",
    "1 MiB": "token=" + "x" * WHOLE_BODY,
    "1 MiB shaped as a JWT": "token=" + ".".join(["e" * (WHOLE_BODY // 3 - 1)] * 3),
    "1 MiB of control characters": "token=" + "%01" * (WHOLE_BODY // 3),
    "an encoded surrogate": "token=at_%ED%A0%80",
}


@pytest.mark.parametrize("endpoint", ["introspect", "revoke"])
@pytest.mark.parametrize("body", UNKNOWN_TOKENS.values(), ids=list(UNKNOWN_TOKENS))
def test_a_token_this_provider_never_issued_is_unknown_whatever_it_holds(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, endpoint: str, body: str
) -> None:
    """RFC 7662 §2.2: an unknown token is ``active: false``; RFC 7009 §2.2: an invalid token
    is answered 200. The value is only hashed and looked up (no JWT parsing), in linear
    time: a 1 MiB token answers at once, however shaped."""
    before = svc_sandbox.export()
    started = time.perf_counter()
    response = http.post(
        f"{AUTH}/oauth2/{endpoint}", data=body, content_type=FORM, headers=basic(confidential)
    )
    assert time.perf_counter() - started < 5  # about 0.3 s for the slowest; quadratic: hours
    assert response.status_code == 200, response.json
    assert response.headers["Cache-Control"] == "no-store"
    assert response.get_data() == (b"" if endpoint == "revoke" else b'{"active":false}\n')
    assert svc_sandbox.export() == before


@pytest.mark.parametrize("suffix", ["\x01", "\n", "x" * 2000])
def test_an_issued_token_made_malformed_is_not_that_token(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, suffix: str
) -> None:
    tokens = tokens_for(http, svc_sandbox, confidential)
    for token in (tokens["access_token"], tokens["refresh_token"]):
        changed = {"token": token + suffix}
        answer = http.post(f"{AUTH}/oauth2/introspect", data=changed, headers=basic(confidential))
        assert answer.json == {"active": False}
        revoked = http.post(f"{AUTH}/oauth2/revoke", data=changed, headers=basic(confidential))
        assert revoked.status_code == 200
        kept = http.post(
            f"{AUTH}/oauth2/introspect", data={"token": token}, headers=basic(confidential)
        )
        assert kept.json["active"] is True  # nothing revoked


@pytest.mark.parametrize("kind", list(BAD_VALUES))
@pytest.mark.parametrize(
    "name", ["response_type", "scope", "code_challenge", "code_challenge_method", "nonce"]
)
def test_authorize_parameters_redirect_invalid_request(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, name: str, kind: str
) -> None:
    before = svc_sandbox.export()
    query = encoded(authorize_params(confidential), name, kind)
    response = http.get(f"{AUTH}/oauth2/authorize?{query}")
    assert response.status_code == 302
    answer = query_of(response.headers["Location"])
    assert answer["error"] == "invalid_request"
    assert answer["error_description"].startswith(f"{name} ")
    assert answer["state"] == "state-123"
    assert svc_sandbox.export() == before


@pytest.mark.parametrize("kind", list(BAD_VALUES))
@pytest.mark.parametrize("name", ["client_id", "redirect_uri"])
def test_authorize_client_and_redirect_problems_are_an_error_page(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, name: str, kind: str
) -> None:
    before = svc_sandbox.export()
    query = encoded(authorize_params(confidential), name, kind)
    response = http.get(f"{AUTH}/oauth2/authorize?{query}")
    assert response.status_code == 400 and "Location" not in response.headers
    assert '<code id="error">invalid_request</code>' in response.text
    assert f'<span id="error-description">{name} ' in response.text
    assert svc_sandbox.export() == before


def test_a_bad_state_is_named_and_not_echoed(http: FlaskClient, confidential: Client) -> None:
    query = encoded(authorize_params(confidential), "state", "control character")
    answer = query_of(http.get(f"{AUTH}/oauth2/authorize?{query}").headers["Location"])
    assert answer["error"] == "invalid_request"
    assert answer["error_description"] == "state contains control characters"
    assert "state" not in answer


@pytest.mark.parametrize(
    "header",
    [
        "Basic",
        "Basic !!!",
        "Basic " + "Zm9v",
        "Digest abc",
        "Basic " + "OnNlY3JldA==",
        "Basic \u00e9t\u00e9",
        "Basic " + "/w==",
    ],
    ids=[
        "empty",
        "not base64",
        "no colon",
        "other scheme",
        "no client id",
        "not ascii",
        "not utf-8",
    ],
)
def test_malformed_basic_credentials(
    http: FlaskClient, svc_sandbox: Sandbox, code_form: dict[str, str], header: str
) -> None:
    before = svc_sandbox.export()
    response = http.post(f"{AUTH}/oauth2/token", data=code_form, headers={"Authorization": header})
    assert response.status_code == 401 and response.json["error"] == "invalid_client"
    assert svc_sandbox.export() == before


def test_non_ascii_redirect_uri_is_a_mismatch_not_a_crash(
    http: FlaskClient, confidential: Client
) -> None:
    params = authorize_params(confidential, redirect_uri="http://127.0.0.1:8080/callbäck")
    response = http.get(f"{AUTH}/oauth2/authorize", query_string=params)
    assert response.status_code == 400
    assert "redirect_uri_mismatch" in response.text


@pytest.mark.parametrize(
    "body",
    [b"&&&=&=", b"%%%", b"grant_type=%FF%FE", b"a" * 5000, b"grant_type=refresh_token&=x&=y"],
)
def test_odd_forms_are_4xx_never_500(http: FlaskClient, svc_sandbox: Sandbox, body: bytes) -> None:
    before = svc_sandbox.export()
    for endpoint in ("token", "introspect", "revoke"):
        response = http.post(f"{AUTH}/oauth2/{endpoint}", data=body, content_type=FORM)
        assert 400 <= response.status_code < 500
        assert response.json["error"] in (
            "invalid_request",
            "invalid_client",
            "unsupported_grant_type",
        )
        assert response.json["error_description"][0] != " "
    assert svc_sandbox.export() == before


@pytest.mark.parametrize("endpoint", ["token", "introspect", "revoke"])
@pytest.mark.parametrize(
    "body",
    [b"token=\xff", b"grant_type=refresh_token&refresh_token=rt_\xe9t\xe9", b"\xc3(=x"],
    ids=["lone byte", "latin-1 value", "broken sequence in a name"],
)
def test_a_form_that_is_not_utf8_is_named_as_such(
    http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    endpoint: str,
    body: bytes,
) -> None:
    """werkzeug reads such a body as an empty form: the request was refused for a field it
    did send (client_id or grant_type "missing")."""
    form = body + b"&client_id=" + confidential.client_id.encode()
    form += b"&client_secret=" + str(confidential.secret).encode()
    before = svc_sandbox.export()
    response = http.post(f"{AUTH}/oauth2/{endpoint}", data=form, content_type=FORM)
    assert response.status_code == 400
    assert response.json["error"] == "invalid_request"
    assert response.json["error_description"].startswith("the body is not valid UTF-8")
    assert response.headers["Cache-Control"] == "no-store"
    assert svc_sandbox.export() == before


@pytest.mark.parametrize("path", ["/signin", "/oauth2/authorize"])
def test_a_page_form_that_is_not_utf8_is_an_error_page(
    http: FlaskClient, svc_sandbox: Sandbox, path: str
) -> None:
    before = svc_sandbox.export()
    response = http.post(f"{AUTH}{path}", data=b"login=\xff&password=x", content_type=FORM)
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert "the body is not valid UTF-8" in response.text
    assert svc_sandbox.export() == before


@pytest.mark.parametrize("kind", list(BAD_VALUES))
@pytest.mark.parametrize("name", ["foo", "extra", "csrf_token", "request_object"])
def test_an_unknown_token_parameter_is_ignored_whatever_it_holds(
    http: FlaskClient, confidential: Client, code_form: dict[str, str], name: str, kind: str
) -> None:
    """RFC 6749 §3.2: the token endpoint "MUST ignore unrecognized request parameters"."""
    response = http.post(
        f"{AUTH}/oauth2/token",
        data=encoded({**code_form, name: "x"}, name, kind),
        content_type=FORM,
        headers=basic(confidential),
    )
    assert response.status_code == 200, response.json
    assert response.json["token_type"] == "Bearer"


@pytest.mark.parametrize("kind", list(BAD_VALUES))
@pytest.mark.parametrize("name", ["foo", "extra", "ui_locales"])
def test_an_unknown_authorize_parameter_is_ignored_whatever_it_holds(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, name: str, kind: str
) -> None:
    """RFC 6749 §3.1: the authorization endpoint "MUST ignore unrecognized request
    parameters": the request goes on to the sign-in page, and the scripted step gives a code."""
    query = encoded({**authorize_params(confidential), name: "x"}, name, kind)
    response = http.get(f"{AUTH}/oauth2/authorize?{query}")
    assert response.status_code == 200, response.headers.get("Location")
    assert "<h1>Sign in</h1>" in response.text
    url = f"http://127.0.0.1:8700{AUTH}/oauth2/authorize?{query}"
    scripted = http.post(
        "/_sandbox/identity/authorize", json={"userId": user_id(svc_sandbox), "url": url}
    )
    assert scripted.status_code == 200 and "code" in scripted.json, scripted.json
