"""Commerce authentication, spec §5: bearer tokens, 401 {message}, 403 {error}, X-Request-Id."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from svc_sandbox.orgs.organizations import Environment
from svc_sandbox.sandbox import Sandbox
from tests.core.test_authorization import STRAY_BYTES
from tests.helpers import token_of

TOKEN_ENDPOINTS = [
    ("get", "/api/products"),
    ("post", "/api/products"),
    ("get", "/api/products/0123456789abcdef01234567"),
    ("patch", "/api/products/0123456789abcdef01234567"),
    ("delete", "/api/products/0123456789abcdef01234567"),
]


@pytest.mark.parametrize(("method", "path"), TOKEN_ENDPOINTS)
def test_no_credentials_at_all_is_403_error(svc_http: FlaskClient, method: str, path: str) -> None:
    response = getattr(svc_http, method)(path, json={})
    assert response.status_code == 403
    assert set(response.json) == {"error"}


@pytest.mark.parametrize(
    "header",
    [
        "Bearer ",
        "Bearer",
        "Basic dXNlcjpwYXNz",
        "Bearer svc_prod_abcdefghijkl",
        "Bearer sk_test_abcdefghijkl",
        "Bearer svc_test_short",
        "Bearer svc_test_abcdefghijklmnopqrstuvwxyz012345",  # well formed, never issued
    ],
)
@pytest.mark.parametrize(("method", "path"), TOKEN_ENDPOINTS)
def test_missing_malformed_or_unknown_token_is_401_message(
    svc_http: FlaskClient, method: str, path: str, header: str
) -> None:
    response = getattr(svc_http, method)(path, json={}, headers={"Authorization": header})
    assert response.status_code == 401
    assert set(response.json) == {"message"}
    assert response.json["message"]
    # RFC 9110 §15.5.2: a 401 carries a challenge; RFC 6750 §3.1: an error code only when a
    # bearer token was presented (another scheme, or none after Bearer, is no token).
    presented = header.startswith("Bearer ") and header.strip() != "Bearer"
    challenge = 'Bearer realm="svc-sandbox"' + (', error="invalid_token"' if presented else "")
    assert response.headers["WWW-Authenticate"] == challenge


def test_revoked_token_is_401(svc_http: FlaskClient, token: str) -> None:
    assert svc_http.delete(f"/_sandbox/tokens/{token}", json={}).status_code == 200
    response = svc_http.get("/api/products", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 401
    assert "revoked" in response.json["message"]  # type: ignore[index]


def test_switching_environment_invalidates_tokens_and_says_create_a_new_one(
    svc_http: FlaskClient, svc_sandbox: Sandbox, token: str
) -> None:
    org_id = svc_sandbox.orgs.authenticate(token).org.id
    svc_http.patch(f"/_sandbox/orgs/{org_id}", json={"environment": "production"})
    response = svc_http.get("/api/products", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 401
    assert "Create a new token" in response.json["message"]  # type: ignore[index]
    new = svc_http.post(f"/_sandbox/orgs/{org_id}/tokens", json={}).json
    assert new["token"].startswith("svc_live_")  # type: ignore[index]
    ok = svc_http.get("/api/products", headers={"Authorization": f"Bearer {new['token']}"})  # type: ignore[index]
    assert ok.status_code == 200


def switch(client: FlaskClient, org_id: str, environment: str) -> None:
    response = client.patch(f"/_sandbox/orgs/{org_id}", json={"environment": environment})
    assert response.status_code == 200, response.json


def answer_for(client: FlaskClient, token: str) -> tuple[int, object]:
    response = client.get("/api/orders", headers={"Authorization": f"Bearer {token}"})
    return response.status_code, response.json


@pytest.mark.parametrize(("first", "other"), [("sandbox", "production"), ("production", "sandbox")])
def test_a_token_stays_dead_after_switching_back(
    svc_http: FlaskClient, svc_sandbox: Sandbox, first: str, other: str
) -> None:
    """Spec §5.2: "A token stops working when its organization switches environment"."""
    old = token_of(svc_sandbox, first)
    org_id = svc_sandbox.orgs.authenticate(old).org.id
    switch(svc_http, org_id, other)
    assert answer_for(svc_http, old) == (
        401,
        {
            "message": f"This token was created for the {first} environment, but the "
            f"organization is now in {other}. Create a new token."
        },
    )
    between = svc_http.post(f"/_sandbox/orgs/{org_id}/tokens", json={}).json["token"]  # type: ignore[index]
    switch(svc_http, org_id, first)
    assert answer_for(svc_http, old) == (
        401,
        {
            "message": "This token was created before the organization switched environment. "
            "Create a new token."
        },
    )
    assert answer_for(svc_http, between)[0] == 401
    new = svc_http.post(f"/_sandbox/orgs/{org_id}/tokens", json={}).json["token"]  # type: ignore[index]
    assert answer_for(svc_http, new)[0] == 200


def test_patching_the_same_environment_retires_nothing(
    svc_http: FlaskClient, svc_sandbox: Sandbox, token: str
) -> None:
    org_id = svc_sandbox.orgs.authenticate(token).org.id
    switch(svc_http, org_id, "sandbox")
    assert answer_for(svc_http, token)[0] == 200


@pytest.mark.parametrize("environment", ["sandbox", "production"])
def test_token_prefix_follows_environment(svc_sandbox: Sandbox, environment: str) -> None:
    org = svc_sandbox.orgs.create("Shop", environment=Environment(environment))
    prefix = "svc_live_" if environment == "production" else "svc_test_"
    assert svc_sandbox.orgs.create_token(org.id).token.startswith(prefix)


def test_no_credentials_status_setting_answers_401_instead() -> None:
    from svc_sandbox.app import create_app

    client = create_app(Sandbox(clock_mode="frozen", no_credentials_status=401)).test_client()
    response = client.get("/api/products")
    assert response.status_code == 401
    assert set(response.json) == {"message"}  # type: ignore[arg-type]
    # No credentials were offered: no error code (RFC 6750 §3.1).
    assert response.headers["WWW-Authenticate"] == 'Bearer realm="svc-sandbox"'


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/api/products"), ("get", "/_sandbox"), ("get", "/nowhere"), ("post", "/api/x")],
)
def test_every_response_carries_a_request_id(
    svc_http: FlaskClient, auth: dict[str, str], method: str, path: str
) -> None:
    response = getattr(svc_http, method)(path, headers=auth)
    assert response.headers["X-Request-Id"].startswith("req_")


def test_request_ids_are_distinct(svc_http: FlaskClient) -> None:
    ids = {svc_http.get("/_sandbox").headers["X-Request-Id"] for _ in range(20)}
    assert len(ids) == 20


def test_unknown_routes_answer_json_404(svc_http: FlaskClient) -> None:
    for path in ("/api/nothing", "/nothing", "/_sandbox/nothing"):
        response = svc_http.get(path)
        assert response.status_code == 404
        assert response.is_json
        assert "error" in response.json  # type: ignore[operator]


def test_wrong_method_answers_json_405(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    response = svc_http.put("/api/products", headers=auth)
    assert response.status_code == 405
    assert response.is_json


@pytest.mark.parametrize("stray", STRAY_BYTES)
@pytest.mark.parametrize("where", ["before", "after"])
def test_a_token_with_a_stray_character_around_it_is_malformed(
    svc_http: FlaskClient, token: str, stray: str, where: str
) -> None:
    """Spec §5.3: a malformed token is 401. str.strip() took "<token>\\xa0" (a Latin-1 byte
    0xA0 of the header) as the token; only HTTP's space and tab are trimmed now."""
    sent = f"{stray}{token}" if where == "before" else f"{token}{stray}"
    response = svc_http.get("/api/balance", headers={"Authorization": f"Bearer {sent}"})
    assert response.status_code == 401
    spaced = svc_http.get("/api/balance", headers={"Authorization": f"Bearer \t{token} "})
    assert spaced.status_code == 200
