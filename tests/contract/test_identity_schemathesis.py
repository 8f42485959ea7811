"""The identity provider checked against its own contract by schemathesis, in process over
WSGI, with the checks of svc_sandbox.contract.harness in strict mode.

positive_data_acceptance also expects 400 on the form and authorize operations: a form that
fits the schema still names a code, token or client this provider never issued (RFC 6749
answers invalid_grant, invalid_request or an error page), which JSON Schema cannot state."""

from __future__ import annotations

from typing import Any

import schemathesis

from svc_sandbox.app import create_app
from svc_sandbox.contract.harness import POSITIVE_BASE, config_dict
from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import tokens_for, wallet_app

FORM_OPERATIONS = ("authorize", "token", "introspect", "revoke", "userinfo", "userinfoPost")


def make_config(token: str) -> schemathesis.Config:
    config: dict[str, Any] = config_dict(token=token, max_examples=25)
    config["operations"] = [
        {
            "include-operation-id": operation,
            "checks": {"positive_data_acceptance": {"expected-statuses": [*POSITIVE_BASE, "400"]}},
        }
        for operation in FORM_OPERATIONS
    ]
    return schemathesis.Config.from_dict(config)


SANDBOX = Sandbox(clock_mode="frozen", seed=1, strict=True, rate_limits=False)
APP = create_app(SANDBOX)
ACCESS = tokens_for(APP.test_client(), SANDBOX, wallet_app(SANDBOX), resource=False)
schema = schemathesis.openapi.from_wsgi(
    "/auth/openapi.json", APP, config=make_config(ACCESS["access_token"])
)


@schema.parametrize()
def test_identity_operation(case: schemathesis.Case) -> None:
    case.call_and_validate()
