"""The identity limits of spec §8 (issue 11 item 8), per client, on the sandbox clock."""

from __future__ import annotations

import base64
from datetime import timedelta
from typing import Any
from urllib.parse import unquote

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import AUTH, authorize_params, basic, public_app, wallet_app


def request_for(http: FlaskClient, sandbox: Sandbox, endpoint: str) -> Any:
    client = wallet_app(sandbox)
    if endpoint == "authorize":
        return http.get(f"{AUTH}/oauth2/authorize", query_string=authorize_params(client))
    if endpoint == "userinfo":
        return http.get(f"{AUTH}/oauth2/userinfo", headers={"Authorization": "Bearer at_x"})
    form = {"grant_type": "refresh_token", "refresh_token": "rt_x"}
    if endpoint in ("introspect", "revoke"):
        form = {"token": "at_x"}
    return http.post(f"{AUTH}/oauth2/{endpoint}", data=form, headers=basic(client))


@pytest.mark.parametrize(
    ("endpoint", "limit"),
    [("token", 20), ("authorize", 30), ("introspect", 100), ("revoke", 30), ("userinfo", 60)],
)
def test_limit_per_minute_with_retry_after(
    svc_sandbox: Sandbox, svc_http: FlaskClient, endpoint: str, limit: int
) -> None:
    for _ in range(limit):
        assert request_for(svc_http, svc_sandbox, endpoint).status_code != 429
    svc_sandbox.advance(timedelta(seconds=30))
    limited = request_for(svc_http, svc_sandbox, endpoint)
    assert limited.status_code == 429
    assert limited.headers["Retry-After"] == "30"
    if limited.mimetype == "application/json":
        assert limited.json["error"] == "rate_limited"
    svc_sandbox.advance(timedelta(seconds=30))
    assert request_for(svc_http, svc_sandbox, endpoint).status_code != 429


def test_token_limit_counts_per_client(svc_sandbox: Sandbox, svc_http: FlaskClient) -> None:
    for _ in range(20):
        request_for(svc_http, svc_sandbox, "token")
    assert request_for(svc_http, svc_sandbox, "token").status_code == 429
    other = public_app(svc_sandbox)
    response = svc_http.post(
        f"{AUTH}/oauth2/token",
        data={"grant_type": "refresh_token", "refresh_token": "rt_x", "client_id": other.client_id},
    )
    assert response.status_code == 400 and response.json["error"] == "invalid_grant"


def test_per_ip_setting(svc_sandbox: Sandbox, svc_http: FlaskClient) -> None:
    svc_sandbox.settings.identity_rate_limit_key = "ip"
    for _ in range(20):
        request_for(svc_http, svc_sandbox, "token")
    other = public_app(svc_sandbox)
    response = svc_http.post(
        f"{AUTH}/oauth2/token",
        data={"grant_type": "refresh_token", "refresh_token": "rt_x", "client_id": other.client_id},
    )
    assert response.status_code == 429


def test_keys_of_unknown_clients_go_once_their_minute_is_over(
    svc_sandbox: Sandbox, svc_http: FlaskClient
) -> None:
    """A key per client_id a request names, registered or not (it is counted before the client
    is authenticated); each is dropped once its window is empty, on the sandbox clock."""
    windows = svc_sandbox.identity_limits.windows
    for n in range(200):
        answer = svc_http.post(
            f"{AUTH}/oauth2/token",
            data={"grant_type": "authorization_code", "code": "x", "client_id": f"nosuch{n}"},
        )
        assert answer.status_code == 401 and answer.json["error"] == "invalid_client"
        svc_http.get(f"{AUTH}/oauth2/authorize", query_string={"client_id": f"nosuch{n}"})
    assert windows["token"].key_count() == windows["authorize"].key_count() == 200
    svc_sandbox.advance(timedelta(seconds=60))
    request_for(svc_http, svc_sandbox, "token")
    request_for(svc_http, svc_sandbox, "authorize")
    assert windows["token"].key_count() == windows["authorize"].key_count() == 1


@pytest.mark.parametrize(
    ("bad_id", "message"),
    [
        ("c" * 2001, "client_id is longer than 2000 characters"),
        ("c" * 150_000, "client_id is longer than 2000 characters"),
        ("abc%00def", "client_id contains control characters"),
    ],
)
@pytest.mark.parametrize("endpoint", ["token", "introspect", "revoke"])
def test_a_basic_client_id_is_checked_as_the_form_one_before_it_is_counted(
    svc_sandbox: Sandbox, svc_http: FlaskClient, endpoint: str, bad_id: str, message: str
) -> None:
    form = {"grant_type": "refresh_token", "refresh_token": "rt_x", "token": "at_x"}
    credentials = base64.b64encode(f"{bad_id}:secret".encode()).decode()
    before = svc_sandbox.export()
    in_header = svc_http.post(
        f"{AUTH}/oauth2/{endpoint}", data=form, headers={"Authorization": f"Basic {credentials}"}
    )
    assert svc_sandbox.identity_limits.windows[endpoint].key_count() == 0  # nothing kept
    in_form = svc_http.post(
        f"{AUTH}/oauth2/{endpoint}",
        data={**form, "client_id": unquote(bad_id), "client_secret": "secret"},
    )
    assert in_header.status_code == in_form.status_code == 400
    assert (
        in_header.json == in_form.json == {"error": "invalid_request", "error_description": message}
    )
    assert svc_sandbox.export() == before
