"""docs/testing.md, "ID tokens and access tokens follow the sandbox clock": the documented
joserfc check, run as written against a served sandbox whose clock has jumped, accepts the
token the same check on this machine's clock refuses, and refuses it once the sandbox clock
passes its ``exp``."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from joserfc import jwt
from joserfc.errors import ExpiredTokenError, JoseError

from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import Client, epoch, tokens_for

TESTING_MD = Path(__file__).parents[2] / "docs" / "testing.md"
BLOCK = re.compile(r"<!-- doc-test: id-token-sandbox-clock -->\n```python\n(.*?)```", re.DOTALL)
NONCE = "nonce-456"  # the nonce tests.identity.helpers.authorize_params sends


def documented() -> dict[str, Any]:
    """The documented code, executed as a module is (its names in a namespace)."""
    found = BLOCK.search(TESTING_MD.read_text(encoding="utf-8"))
    assert found, "docs/testing.md lost its id-token-sandbox-clock example"
    namespace: dict[str, Any] = {"__name__": "documented"}
    exec(compile(found.group(1), str(TESTING_MD), "exec"), namespace)
    return namespace


@pytest.fixture
def served(svc_server: RunningServer) -> RunningServer:
    svc_server.sandbox.settings.rate_limits = False
    return svc_server


@pytest.mark.parametrize("jump", [timedelta(0), timedelta(hours=2), timedelta(days=365 * 50)])
def test_the_documented_check_uses_the_sandbox_clock(
    served: RunningServer,
    svc_http: FlaskClient,
    svc_sandbox: Sandbox,
    confidential: Client,
    jump: timedelta,
) -> None:
    svc_sandbox.advance(jump)
    id_token = tokens_for(svc_http, svc_sandbox, confidential)["id_token"]
    code = documented()
    code["SANDBOX"] = served.url  # the example names the default origin
    assert code["sandbox_now"]() == epoch(svc_sandbox)

    claims = code["check_id_token"](id_token, confidential.client_id, NONCE)
    assert claims["iat"] == epoch(svc_sandbox) and claims["auth_time"] <= claims["iat"]
    assert claims["exp"] == claims["iat"] + 10 * 3600

    # The same check on this machine's clock refuses the token: the frozen clock is far from
    # the wall clock (issued in the future, or expired), which is why the doc says so.
    wall = jwt.JWTClaimsRegistry(leeway=60, exp={"essential": True}, iat={"essential": True})
    with pytest.raises(JoseError):
        wall.validate(claims)

    svc_sandbox.advance(timedelta(hours=10, seconds=61))  # past exp and the leeway
    with pytest.raises(ExpiredTokenError):
        code["check_id_token"](id_token, confidential.client_id, NONCE)
