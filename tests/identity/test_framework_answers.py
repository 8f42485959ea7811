"""Answers no identity route gives (app.py ``http_error``): an unknown path, a method the path
does not take, a body over 1 MiB. Under {auth_url} they are RFC 6749 ``{error: <code>,
error_description}`` with ``Cache-Control: no-store``, as every identity error
(docs/spec-gaps.md "Error body format"), so an OAuth client reads a code, not a sentence."""

from __future__ import annotations

import pytest
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import AUTH

FORM = "application/x-www-form-urlencoded"
OVERSIZED = "grant_type=" + "a" * (1 << 20)

#: (method, path under {auth_url}, form body, status, code)
ANSWERS = [
    ("GET", "/oauth2/token", None, 405, "method_not_allowed"),
    ("GET", "/oauth2/revoke", None, 405, "method_not_allowed"),
    ("POST", "/jwks", None, 405, "method_not_allowed"),
    ("GET", "/signin", None, 405, "method_not_allowed"),
    ("GET", "/oauth2/nope", None, 404, "not_found"),
    ("GET", "/", None, 404, "not_found"),
    ("POST", "/oauth2/token", OVERSIZED, 413, "invalid_request"),
    ("POST", "/oauth2/introspect", OVERSIZED, 413, "invalid_request"),
]


@pytest.mark.parametrize(("method", "path", "body", "status", "code"), ANSWERS)
def test_framework_answers_are_oauth_errors(
    svc_http: FlaskClient, method: str, path: str, body: str | None, status: int, code: str
) -> None:
    answer = svc_http.open(AUTH + path, method=method, data=body, content_type=FORM)
    assert answer.status_code == status
    assert answer.json is not None and set(answer.json) == {"error", "error_description"}
    assert answer.json["error"] == code
    assert answer.json["error_description"] and answer.json["error_description"] != code
    assert answer.headers["Cache-Control"] == "no-store"
    if status == 405:  # RFC 9110 §15.5.6: the methods the path takes stay named
        assert answer.headers["Allow"]


def test_an_oauth_client_reads_the_code_of_a_413(svc_http: FlaskClient) -> None:
    answer = svc_http.post(f"{AUTH}/oauth2/token", data=OVERSIZED, content_type=FORM)

    class Answer:  # what authlib reads of a requests response
        status_code = answer.status_code

        def json(self) -> object:
            return answer.json

    with pytest.raises(OAuthError) as raised:
        OAuth2Session(client_id="app").parse_response_token(Answer())
    assert raised.value.error == "invalid_request"
    assert raised.value.description == answer.json["error_description"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("auth_url", "identity"),
    [("/idp/v1", True), ("/api", False), ("/wallet", False), ("", False)],
    ids=["own root", "shared with base_url", "shared with the wallet", "the origin"],
)
def test_a_root_shared_with_another_api_answers_as_that_api(auth_url: str, identity: bool) -> None:
    """Its unknown paths cannot be told from the other API's (as the wallet's root)."""
    sandbox = Sandbox(auth_url="http://127.0.0.1:8700" + auth_url)
    answer = create_app(sandbox).test_client().get(f"{auth_url}/oauth2/nope")
    assert answer.status_code == 404
    assert ("error_description" in answer.json) is identity  # type: ignore[operator]
    assert (answer.headers.get("Cache-Control") == "no-store") is identity


#: (path under a layout with every API inside {auth_url} = /svc, the body's keys)
NESTED = [
    ("/svc/wallet/nope", {"error", "message"}),  # the wallet's shape (spec §7)
    ("/svc/api/nope", {"error"}),  # commerce's
    ("/svc/nope", {"error", "error_description"}),  # the provider's
]


@pytest.mark.parametrize(("path", "keys"), NESTED)
def test_a_root_nested_in_auth_url_answers_as_its_own_api(path: str, keys: set[str]) -> None:
    """A path belongs to the longest root it is under: {auth_url}/wallet is the wallet's."""
    origin = "http://127.0.0.1:8700"
    sandbox = Sandbox(
        auth_url=origin + "/svc",
        wallet_base_url=origin + "/svc/wallet",
        resource_url=origin + "/svc/wallet",
        base_url=origin + "/svc/api",
    )
    answer = create_app(sandbox).test_client().get(path)
    assert answer.status_code == 404
    assert set(answer.json) == keys  # type: ignore[arg-type]
    assert (answer.headers.get("Cache-Control") == "no-store") is ("error_description" in keys)
