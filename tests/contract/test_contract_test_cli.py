"""`svc-sandbox contract test`: the schemathesis checks over HTTP against any server."""

from __future__ import annotations

import pytest

from svc_sandbox.cli import main
from svc_sandbox.pytest_plugin import RunningServer
from tests.contract.test_schemathesis import NOT_YET
from tests.helpers import create_product


def contract_test(server: RunningServer, token: str, *extra: str) -> int:
    skips = [arg for op in NOT_YET for arg in ("--skip-operation", op)]
    base_url = server.url + "/api"
    return main(
        ["contract", "test", "--base-url", base_url, "--token", token, "--max-examples", "8"]
        + skips
        + list(extra)
    )


def test_the_emulator_passes_its_own_contract_over_http(
    svc_server: RunningServer, token: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert contract_test(svc_server, token) == 0
    out = capsys.readouterr().out
    assert "PASSED: 0 distinct failures" in out
    for check in ("response_schema_conformance", "negative_data_rejection", "ignored_auth"):
        assert check in out


def test_a_server_that_breaks_the_contract_fails_with_exit_code_1(
    svc_server: RunningServer,
    token: str,
    auth: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A server that lists a product whose title is longer than the contract allows.
    sandbox = svc_server.sandbox
    sandbox.settings.strict = False
    from flask.testing import FlaskClient

    from svc_sandbox.app import create_app

    client: FlaskClient = create_app(sandbox).test_client()
    product_id = create_product(client, auth)["product"]["_id"]
    sandbox.products.products[product_id].title = "x" * 121

    assert contract_test(svc_server, token, "--no-stateful") == 1
    out = capsys.readouterr().out
    assert "FAIL GET /products [response_schema_conformance]" in out
    assert "FAILED" in out


def test_an_unreachable_server_is_exit_code_2(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["contract", "test", "--base-url", "http://127.0.0.1:9/api", "--max-examples", "1"])
    assert code == 2
    assert "cannot reach http://127.0.0.1:9/api" in capsys.readouterr().err
