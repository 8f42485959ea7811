"""The emulator checked against its wallet contract by schemathesis, in process over WSGI,
with both factors (a real access token of the seeded wallet app, the owner's API key), the
checks of svc_sandbox.contract.harness and a strict emulator (a response that breaks the
contract fails with its schema path)."""

from __future__ import annotations

import schemathesis
from flask import Flask

from svc_sandbox.app import create_app
from svc_sandbox.contract.harness import load_config
from svc_sandbox.sandbox import Sandbox
from tests.wallet.helpers import owner_key, token_in_process


def make_app() -> tuple[Flask, str, str]:
    sandbox = Sandbox(clock_mode="frozen", seed=1, strict=True)
    app = create_app(sandbox)
    client = app.test_client()
    # Enough money that generated amounts meet the cap (429) rather than only 402.
    client.post("/_sandbox/wallets/abebe/fund", json={"amountMinor": 10**12})
    return app, token_in_process(client, sandbox, "abebe"), owner_key(sandbox)


APP, TOKEN, KEY = make_app()
schema = schemathesis.openapi.from_wsgi(
    "/wallet/openapi.json",
    APP,
    config=load_config(
        token=None,
        max_examples=25,
        schemes={"accessToken": {"bearer": TOKEN}, "svcKey": {"api_key": KEY}},
    ),
)


@schema.parametrize()
def test_operation(case: schemathesis.Case) -> None:
    case.call_and_validate()
