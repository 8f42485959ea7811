"""Fixtures of the identity tests: the Flask test client with the §8 limits off (the rate
limit tests switch them on), and the seeded apps."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import Client, public_app, wallet_app


@pytest.fixture
def http(svc_sandbox: Sandbox, svc_http: FlaskClient) -> FlaskClient:
    svc_sandbox.settings.rate_limits = False
    return svc_http


@pytest.fixture
def confidential(svc_sandbox: Sandbox) -> Client:
    return wallet_app(svc_sandbox)


@pytest.fixture
def public(svc_sandbox: Sandbox) -> Client:
    return public_app(svc_sandbox)
