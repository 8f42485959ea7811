"""The identity limits of spec §8 (issue 11 item 8), per client, on the sandbox clock."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

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
