"""The emulator checked against its own contract by schemathesis, in process over WSGI.

Every operation, with the checks of svc_sandbox.contract.harness, a fixed seed and a bounded
number of examples; the emulator runs in strict mode, so a response that breaks the contract
fails with its schema path even where no check looks.
"""

from __future__ import annotations

import schemathesis
from flask import Flask

from svc_sandbox.app import create_app
from svc_sandbox.contract.harness import load_config
from svc_sandbox.contract.validation import commerce_contract
from svc_sandbox.sandbox import Sandbox
from tests.helpers import BASE_URL_OPERATIONS, token_of

IMPLEMENTED = BASE_URL_OPERATIONS


def make_app() -> tuple[Flask, str]:
    sandbox = Sandbox(clock_mode="frozen", seed=1, strict=True)
    return create_app(sandbox), token_of(sandbox)


APP, TOKEN = make_app()
NOT_YET = tuple(
    o.operation_id for o in commerce_contract().operations if o.operation_id not in IMPLEMENTED
)
schema = schemathesis.openapi.from_wsgi(
    "/api/openapi.json",
    APP,
    config=load_config(token=TOKEN, max_examples=25, skip_operations=NOT_YET),
)


@schema.parametrize()
def test_operation(case: schemathesis.Case) -> None:
    case.call_and_validate()


ProductLifecycle = schema.as_state_machine()
TestProductLifecycle = ProductLifecycle.TestCase
