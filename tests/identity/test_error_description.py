"""The characters of ``error_description`` (RFC 6749 §4.1.2.1, §5.2: %x20-21 / %x23-5B /
%x5D-7E only), one rule (``errors.description``) for the error redirect, the JSON body and the
Bearer challenge; a client's value echoed in a message is cut to 80 characters."""

from __future__ import annotations

import base64
import re

import pytest
from flask.testing import FlaskClient

from svc_sandbox.identity.errors import bearer_challenge, description
from svc_sandbox.identity.tokens import MALFORMED_JWT
from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import AUTH, Client, authorize_params, query_of, user_id

#: What RFC 6749 allows in an error_description.
ALLOWED = re.compile(r"[\x20-\x21\x23-\x5b\x5d-\x7e]+")

#: A message and its description: the set's edges kept, ``"`` and ``\`` replaced as the
#: challenge always did, everything else outside the set by its code point.
DESCRIPTIONS = {
    "the set's edges": (" !#[]~", " !#[]~"),
    "double quote": ('log"in', "log'in"),
    "backslash": ("a\\b", "a/b"),
    "non-ASCII letter": ("é", "U+00E9"),
    "outside the BMP": ("pay 😀", "pay U+1F600"),
    "C0, DEL, C1": ("a\x00b\x7fc\x85", "aU+0000bU+007FcU+0085"),
    "cut value's ellipsis": ("x…", "x..."),
}


@pytest.mark.parametrize(("message", "expected"), DESCRIPTIONS.values(), ids=list(DESCRIPTIONS))
def test_one_rule_for_every_description(message: str, expected: str) -> None:
    assert description(message) == expected
    assert ALLOWED.fullmatch(description(message))
    challenge = bearer_challenge("invalid_token", message)
    assert (
        challenge
        == f'Bearer realm="svc-sandbox", error="invalid_token", error_description="{expected}"'
    )


LONG = "s" * 500
#: Authorize parameters whose value the redirected error repeats, and its description.
REDIRECTED = {
    "prompt with a double quote": (
        {"prompt": 'log"in'},
        "prompt value log'in is not supported: use none, login, consent, select_account",
    ),
    "scope with a non-ASCII letter": (
        {"scope": "openid é"},
        "scope U+00E9 is not allowed for this app",
    ),
    "scope with a backslash": ({"scope": "openid a\\b"}, "scope a/b is not allowed for this app"),
    "scope with a C1 control": (
        {"scope": "openid x\x85"},
        "scope xU+0085 is not allowed for this app",
    ),
    "a long scope, cut": (
        {"scope": f"openid {LONG}"},
        f"scope {'s' * 79}... is not allowed for this app",
    ),
    "a long prompt, cut": (
        {"prompt": LONG},
        f"prompt value {'s' * 79}... is not supported: use none, login, consent, select_account",
    ),
}


@pytest.mark.parametrize("kind", list(REDIRECTED))
def test_an_error_redirect_carries_only_the_allowed_characters(
    http: FlaskClient, svc_sandbox: Sandbox, confidential: Client, kind: str
) -> None:
    change, expected = REDIRECTED[kind]
    params = authorize_params(confidential, **change)
    response = http.get(f"{AUTH}/oauth2/authorize", query_string=params)
    assert response.status_code == 302
    answer = query_of(response.headers["Location"])
    assert answer["error_description"] == expected
    scripted = http.post(
        "/_sandbox/identity/authorize",
        json={"userId": user_id(svc_sandbox), "params": params},
    )
    assert scripted.json["error_description"] == expected  # type: ignore[index]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/caf%C3%A9", "No route for GET /auth/cafU+00E9"),
        ("/a%22b%5Cc", "No route for GET /auth/a'b/c"),
    ],
)
def test_a_json_error_carries_only_the_allowed_characters(
    http: FlaskClient, path: str, expected: str
) -> None:
    response = http.get(f"{AUTH}{path}")
    assert response.status_code == 404
    assert response.json == {"error": "not_found", "error_description": expected}


@pytest.mark.parametrize(
    "header",
    [b'{"a":"\\q"}', b"\xb7\xff", b"[1]", b"not json"],
    ids=["broken JSON", "not UTF-8", "not an object", "text"],
)
def test_a_header_that_does_not_decode_is_malformed_in_the_body_and_the_challenge(
    http: FlaskClient, header: bytes
) -> None:
    """Said in the words of what a JWT is, never in those of Python's decoders (pyjwt's
    quoted them: "'utf-8' codec can't decode byte 0xb7"); the body and the bearer challenge
    say the same."""
    part = base64.urlsafe_b64encode(header).rstrip(b"=").decode()
    for path in ("/oauth2/userinfo", "/wallet"):
        url = f"{AUTH}{path}" if path.startswith("/oauth2") else path
        response = http.get(url, headers={"Authorization": f"Bearer {part}.e30.c2ln"})
        assert response.status_code == 401, path
        said = response.json.get("error_description") or response.json["message"]
        assert said == MALFORMED_JWT
        assert f'error_description="{said}"' in response.headers["WWW-Authenticate"]
