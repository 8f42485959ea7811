"""Fixtures of the wallet tests: the sandbox's Flask client, real access tokens from its
identity provider (authlib's client, in process), headers with both factors, and a served
sandbox for the tests that need real sockets (races, the flow over HTTP)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask.testing import FlaskClient

from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from tests.wallet.helpers import SEND, access_token, headers, owner_key

Connect = Callable[..., str]


@pytest.fixture
def server(svc_server: RunningServer) -> RunningServer:
    # The token endpoint's 20 per minute (§8) is not what these tests are about.
    svc_server.sandbox.settings.rate_limits = False
    return svc_server


@pytest.fixture
def http(svc_http: FlaskClient, svc_sandbox: Sandbox) -> FlaskClient:
    # The token endpoint's 20 per minute (§8) is not what these tests are about.
    svc_sandbox.settings.rate_limits = False
    return svc_http


@pytest.fixture
def connect(http: FlaskClient, svc_sandbox: Sandbox) -> Connect:
    """``connect(handle, scope=..., app=..., resource=...)``: a real access token."""

    def connect_as(handle: str = "abebe", **options: object) -> str:
        return access_token(http, svc_sandbox, handle, **options)  # type: ignore[arg-type]

    return connect_as


@pytest.fixture
def key(svc_sandbox: Sandbox) -> str:
    return owner_key(svc_sandbox)


@pytest.fixture
def abebe(connect: Connect, key: str) -> dict[str, str]:
    """Both factors for abebe (KYC approved) through the seeded confidential app."""
    return headers(connect("abebe", scope=SEND), key)
