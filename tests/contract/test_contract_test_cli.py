"""`svc-sandbox contract test`: the schemathesis checks over HTTP against any server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.request import urlopen

import pytest

from svc_sandbox.app import create_app
from svc_sandbox.cli import main
from svc_sandbox.contract.harness import POSITIVE_ALLOWANCES
from svc_sandbox.pytest_plugin import RunningServer
from tests.contract.test_schemathesis import NOT_YET
from tests.helpers import BASE_URL_OPERATIONS, create_product
from tests.identity.helpers import tokens_for, wallet_app
from tests.wallet.helpers import owner_key, token_in_process


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


def test_the_wallet_contract_over_http_with_both_factors(
    svc_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    sandbox = svc_server.sandbox
    http = create_app(sandbox).test_client()
    # Enough money that generated amounts meet the cap (429) rather than only 402.
    http.post("/_sandbox/wallets/abebe/fund", json={"amountMinor": 10**12})
    access = token_in_process(http, sandbox, "abebe")
    code = main(
        ["contract", "test", "--contract", "wallet", "--base-url", svc_server.url + "/wallet"]
        + ["--token", owner_key(sandbox), "--access-token", access, "--max-examples", "8"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 operations tested" in out and "PASSED: 0 distinct failures" in out


def test_the_identity_contract_over_http_with_client_credentials(
    svc_server: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    sandbox = svc_server.sandbox
    sandbox.settings.rate_limits = False  # schemathesis sends more than §8 allows a client
    client = wallet_app(sandbox)
    access = tokens_for(create_app(sandbox).test_client(), sandbox, client, resource=False)
    code = main(
        ["contract", "test", "--contract", "identity", "--base-url", svc_server.url + "/auth"]
        + ["--access-token", access["access_token"], "--client-id", client.client_id]
        + ["--client-secret", client.secret or "", "--max-examples", "8"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "PASSED: 0 distinct failures" in out
    tested = int(out.split("operations tested")[0].rsplit(":", 1)[1])
    assert tested >= 8  # discovery (2), JWKS, authorize, token, userinfo (2), introspect, ...


@pytest.mark.parametrize("given", [["--token", "svc_test_x"], ["--access-token", "a.b.c"], []])
def test_the_wallet_contract_needs_both_factors(
    svc_server: RunningServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    given: list[str],
) -> None:
    """Every wallet call needs both: without one the run would pass on 401s alone, so it
    does not start (exit 2, naming both options)."""
    monkeypatch.delenv("SVC_TOKEN", raising=False)
    monkeypatch.delenv("SVC_ACCESS_TOKEN", raising=False)
    code = main(
        ["contract", "test", "--contract", "wallet", "--base-url", svc_server.url + "/wallet"]
        + given
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "--access-token" in err and "--token" in err


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ([], "the commerce contract needs --token (or env SVC_TOKEN)"),
        (
            ["--token", "svc_test_" + "w" * 32],
            "refused --token (401 on GET /products): give a valid token",
        ),
    ],
    ids=["no-token", "a-refused-token"],
)
def test_the_commerce_contract_needs_a_token_the_server_takes(
    svc_server: RunningServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    given: list[str],
    said: str,
) -> None:
    """A 401 is an answer positive_data_acceptance takes: with no token, or one the server
    refuses, the run would be green having tested nothing (a CI secret left unset)."""
    monkeypatch.delenv("SVC_TOKEN", raising=False)
    base_url = svc_server.url + "/api"
    code = main(["contract", "test", "--base-url", base_url, "--max-examples", "1", *given])
    assert code == 2
    assert said in capsys.readouterr().err
    assert svc_server.sandbox.products.products == {}  # nothing ran


def test_an_unknown_operation_to_skip_is_named(
    svc_server: RunningServer, token: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A misspelt --skip-operation would leave the operation it meant tested (or skipped in
    the one run and not the other): exit 2 naming it, with the contract's ids."""
    code = contract_test(svc_server, token, "--skip-operation", "listProduct")
    assert code == 2
    err = capsys.readouterr().err
    assert "--skip-operation listProduct: the commerce contract has no such operation" in err
    assert "listProducts" in err


def test_every_allowance_is_in_the_docs() -> None:
    """Each narrowed check is explained in docs/contract.md (its table names the operation)."""
    table = (Path(__file__).parents[2] / "docs" / "contract.md").read_text("utf-8")
    named: set[str] = set()
    for row in table.splitlines():
        if row.startswith("| "):  # the first cell names the operations
            named.update(re.split(r"[ ,()]+", row.split("|")[1].strip()))
    for allowance in POSITIVE_ALLOWANCES:
        assert allowance.operation_id in named, allowance.operation_id
    # The reason too, as the harness words it: the table is the whole list of refusals of
    # schema-valid data, and cannot drift from the harness.
    text = " ".join(table.split())
    for allowance in POSITIVE_ALLOWANCES:
        assert allowance.reason in text, allowance.operation_id


def test_the_payment_link_attempt_is_left_out_and_said_so(
    svc_server: RunningServer, token: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """POST /pay/{payToken} is served under {pay_url}: a run against --base-url would send it
    to {base_url}/pay/… (schemathesis's base URL overrides the path-level server) and pass on
    the 404. The run leaves it out, and the summary says so."""
    others = [o for o in BASE_URL_OPERATIONS if o not in ("createProduct", "getBalance")]
    skips = [arg for op in others for arg in ("--skip-operation", op)]
    assert contract_test(svc_server, token, "--no-stateful", *skips) == 0
    out = capsys.readouterr().out
    assert "NOT TESTED POST /pay/{payToken}: Served under {pay_url}" in out
    assert "2 operations tested" in out
    with urlopen(svc_server.url + "/_sandbox/requests?limit=500") as answer:
        paths = {item["path"] for item in json.load(answer)["items"]}
    assert paths and not any("/pay/" in path for path in paths)


def test_with_its_server_url_the_payment_link_attempt_is_tested_at_its_real_root(
    svc_server: RunningServer, token: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--own-server-url names what the path-level server '/' stands for (the emulator's
    origin): the attempt is then sent to {pay_url}/cs_…, the route that exists."""
    others = [o for o in BASE_URL_OPERATIONS if o != "getBalance"]
    skips = [arg for op in others for arg in ("--skip-operation", op)]
    run = ["contract", "test", "--base-url", svc_server.url + "/api", "--token", token]
    own = ["--own-server-url", svc_server.url, "--no-stateful", "--max-examples", "8"]
    assert main(run + own + skips) == 0
    out = capsys.readouterr().out
    assert "NOT TESTED" not in out and "2 operations tested" in out
    with urlopen(svc_server.url + "/_sandbox/requests?limit=500") as answer:
        paths = [item["path"] for item in json.load(answer)["items"]]
    assert any(path.startswith("/pay/") for path in paths)
    assert not any(path.startswith("/api/pay/") for path in paths)
