"""The identity provider checked against its own contract by schemathesis, in process over
WSGI, with the checks of svc_sandbox.contract.harness in strict mode.

positive_data_acceptance also expects 400 on the form and authorize operations
(POSITIVE_ALLOWANCES of the harness): a form that fits the schema still names a code, token or
client this provider never issued, which JSON Schema cannot state."""

from __future__ import annotations

import schemathesis

from svc_sandbox.app import create_app
from svc_sandbox.contract.harness import load_config
from svc_sandbox.sandbox import Sandbox
from tests.identity.helpers import tokens_for, wallet_app

SANDBOX = Sandbox(clock_mode="frozen", seed=1, strict=True, rate_limits=False)
APP = create_app(SANDBOX)
ACCESS = tokens_for(APP.test_client(), SANDBOX, wallet_app(SANDBOX), resource=False)
schema = schemathesis.openapi.from_wsgi(
    "/auth/openapi.json", APP, config=load_config(token=ACCESS["access_token"], max_examples=25)
)


@schema.parametrize()
def test_identity_operation(case: schemathesis.Case) -> None:
    case.call_and_validate()
