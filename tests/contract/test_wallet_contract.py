"""The wallet contract document: valid OpenAPI 3.1, shipped in the package, served by the
emulator, with both security schemes on every operation, and covering spec §4's wallet table;
the conformance report covers it."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask.testing import FlaskClient
from openapi_spec_validator import validate

from svc_sandbox.contract.document import WALLET, contract_text, load_contract
from svc_sandbox.sandbox import Sandbox
from tests.wallet.helpers import (
    READ,
    access_token,
    headers,
    owner_key,
    send_body,
    token_in_process,
)

REPO_COPY = Path(__file__).resolve().parents[2] / "contracts" / "wallet.openapi.yaml"


def test_the_wallet_contract_is_valid_openapi_3_1() -> None:
    document = load_contract(WALLET)
    validate(document)
    assert document["openapi"].startswith("3.1")


def test_the_packaged_copy_is_the_repository_copy() -> None:
    assert contract_text(WALLET) == REPO_COPY.read_text("utf-8")


@pytest.mark.parametrize(("method", "path"), [("get", "/"), ("post", "/send")])
def test_every_wallet_operation_needs_both_factors(method: str, path: str) -> None:
    document = load_contract(WALLET)
    operation = document["paths"][path][method]
    assert operation.get("security", document["security"]) == [{"accessToken": [], "svcKey": []}]
    schemes = document["components"]["securitySchemes"]
    assert schemes["accessToken"] == {**schemes["accessToken"], "type": "http", "scheme": "bearer"}
    assert (schemes["svcKey"]["in"], schemes["svcKey"]["name"]) == ("header", "X-Svc-Key")


@pytest.mark.parametrize("url", ["/wallet/openapi.json", "/_sandbox/contract?contract=wallet"])
def test_the_emulator_serves_it_with_its_wallet_base_url(svc_http: FlaskClient, url: str) -> None:
    served = svc_http.get(url).json
    assert served is not None
    assert served["servers"][0]["url"].endswith("/wallet")
    assert served["paths"] == load_contract(WALLET)["paths"]


def test_the_conformance_report_covers_wallet_calls(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    auth = headers(token_in_process(svc_http, svc_sandbox, "abebe"), owner_key(svc_sandbox))
    svc_http.get("/wallet", headers=auth)
    svc_http.post("/wallet/send", json=send_body(), headers=auth)
    svc_http.post("/wallet/send", json={**send_body(), "amountMinor": "x"}, headers=auth)
    report = svc_http.get("/_sandbox/conformance?contract=wallet").json
    assert report is not None
    assert report["contract"]["title"] == "Payments service wallet API"
    statuses = {o["operationId"]: o["statuses"] for o in report["operations"]}
    assert statuses == {"getWalletBalance": {"200": 1}, "sendFromWallet": {"201": 1, "400": 1}}
    assert report["summary"]["requestViolations"] == 1
    assert report["violations"][0]["location"] == "body.amountMinor"
    assert report["summary"]["responseViolations"] == 0
    commerce = svc_http.get("/_sandbox/conformance").json
    assert commerce is not None and commerce["summary"]["requests"] == 0
    assert svc_http.get("/_sandbox/conformance?contract=nope").status_code == 400


def test_the_challenges_sent_are_the_ones_the_contract_declares(
    svc_http: FlaskClient, svc_sandbox: Sandbox
) -> None:
    """Spec §5: bearer errors (invalid_token, insufficient_scope) carry an RFC 6750
    WWW-Authenticate header; the contract declares it on the 401 and the 403, with the realm
    the emulator sends."""
    document = load_contract(WALLET)
    declared = document["components"]["headers"]
    key = owner_key(svc_sandbox)
    read_only = access_token(svc_http, svc_sandbox, scope=READ)
    scope = svc_http.post("/wallet/send", json=send_body(), headers=headers(read_only, key))
    missing = svc_http.get("/wallet", headers=headers(None, key))
    for answer, status in ((scope, 403), (missing, 401)):
        assert answer.status_code == status
        response = document["components"]["responses"][
            "Forbidden" if status == 403 else "Unauthorized"
        ]
        name = response["headers"]["WWW-Authenticate"]["$ref"].rsplit("/", 1)[-1]
        challenge = answer.headers["WWW-Authenticate"]
        realm = challenge.split(",")[0]  # Bearer realm="..."
        assert realm in declared[name]["description"]
    assert 'error="insufficient_scope"' in scope.headers["WWW-Authenticate"]
    report = svc_http.get("/_sandbox/conformance?contract=wallet").json
    assert report is not None and report["summary"]["responseViolations"] == 0
