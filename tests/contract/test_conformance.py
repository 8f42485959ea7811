"""The conformance report: what a client exercised and every request that broke the
contract, with the schema path and the request id (GET /_sandbox/conformance and
`svc-sandbox conformance`)."""

from __future__ import annotations

import json
from typing import Any
from xml.etree import ElementTree

import pytest
from flask.testing import FlaskClient

from svc_sandbox.app import create_app
from svc_sandbox.cli import main
from svc_sandbox.contract.conformance import MAX_VIOLATIONS, RECORDED_CHARACTERS, Exchange
from svc_sandbox.contract.reports import render
from svc_sandbox.contract.validation import commerce_contract
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from tests.helpers import create_product

HEX = "0123456789abcdef01234567"


def report(client: FlaskClient) -> dict[str, Any]:
    found: dict[str, Any] = client.get("/_sandbox/conformance").json  # type: ignore[assignment]
    return found


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "location", "schema_path"),
    [
        (
            "post",
            "/api/products",
            {"json": {"title": "Book"}},
            "body",
            "#/components/schemas/ProductCreate/required",
        ),
        (
            "post",
            "/api/products",
            {"json": {"title": "x" * 121, "pricingModel": "free"}},
            "body.title",
            "#/components/schemas/ProductCreate/properties/title/pattern",
        ),
        (
            "post",
            "/api/products",
            {"data": '{"title": "Book"}', "content_type": "text/plain"},
            "header.Content-Type",
            "#/paths/~1products/post/requestBody/content",
        ),
        (
            "get",
            "/api/products?limit=500",
            {},
            "query.limit",
            "#/components/parameters/Limit/schema/maximum",
        ),
        (
            "get",
            "/api/products?page=9007199254740992",
            {},
            "query.page",
            "#/components/parameters/Page/schema/maximum",
        ),
        (
            "get",
            "/api/products?page=" + "9" * 4301,  # past int(): named, never a 500
            {},
            "query.page",
            "#/components/parameters/Page/schema",
        ),
        (
            "get",
            "/api/products?status=deleted",
            {},
            "query.status",
            "#/components/schemas/ProductStatus/enum",
        ),
        (
            "get",
            "/api/products/not-a-ref",
            {},
            "path.id",
            "#/components/schemas/ProductRef/pattern",
        ),
        (
            "patch",
            f"/api/products/{HEX}",
            {"json": {"pricingModel": "subscription"}},
            "body.pricingModel",
            "#/components/schemas/PricingModel/enum",
        ),
    ],
)
def test_each_request_that_breaks_the_contract_is_in_the_report(
    svc_http: FlaskClient,
    auth: dict[str, str],
    method: str,
    path: str,
    kwargs: dict[str, Any],
    location: str,
    schema_path: str,
) -> None:
    response = getattr(svc_http, method)(path, headers=auth, **kwargs)
    assert 400 <= response.status_code < 500  # the emulator refuses it too
    violations = report(svc_http)["violations"]
    assert [
        (v["requestId"], v["kind"], v["location"], v["schemaPath"], v["status"]) for v in violations
    ] == [
        (response.headers["X-Request-Id"], "request", location, schema_path, response.status_code)
    ]


def test_a_missing_token_is_reported_against_the_security_requirement(
    svc_http: FlaskClient,
) -> None:
    response = svc_http.get("/api/products")
    assert response.status_code == 403
    (violation,) = report(svc_http)["violations"]
    assert (violation["location"], violation["schemaPath"]) == (
        "header.Authorization",
        "#/security",
    )


def test_the_report_counts_operations_and_statuses_exercised(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    product_id = create_product(svc_http, auth)["product"]["_id"]
    svc_http.get(f"/api/products/{product_id}", headers=auth)
    svc_http.get(f"/api/products/{HEX}", headers=auth)
    svc_http.get("/api/nowhere", headers=auth)
    found = report(svc_http)
    by_id = {op["operationId"]: op for op in found["operations"]}
    assert by_id["createProduct"]["statuses"] == {"201": 1}
    assert by_id["getProduct"]["statuses"] == {"200": 1, "404": 1}
    assert "400" in by_id["getProduct"]["missingStatuses"]
    assert by_id["listOrders"]["requests"] == 0
    assert found["summary"]["requests"] == 4
    assert found["summary"]["operations"]["exercised"] == 2
    assert found["violations"] == []
    assert [u["path"] for u in found["unmatched"]] == ["/api/nowhere"]


def test_clearing_and_resetting_empty_the_report(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    svc_http.get("/api/products?limit=500", headers=auth)
    assert svc_http.delete("/_sandbox/conformance", json={}).json["summary"]["requests"] == 0  # type: ignore[index]
    svc_http.get("/api/products?limit=500", headers=auth)
    svc_http.post("/_sandbox/reset", json={})
    assert report(svc_http)["summary"]["requestViolations"] == 0


def test_the_cli_shows_the_report_as_text_json_and_junit(
    svc_server: RunningServer,
    auth: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Any,
) -> None:
    import urllib.request

    bad = urllib.request.Request(
        svc_server.url + "/api/products?limit=500", headers=auth, method="GET"
    )
    try:
        urllib.request.urlopen(bad)
    except urllib.error.HTTPError as refused:
        assert refused.code == 400
        request_id = refused.headers["X-Request-Id"]

    assert main(["conformance", "--url", svc_server.url]) == 0
    text = capsys.readouterr().out
    assert "request violations: 1" in text
    assert request_id in text and "#/components/parameters/Limit/schema/maximum" in text

    assert main(["conformance", "--url", svc_server.url, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["violations"][0]["requestId"] == request_id

    out = tmp_path / "reports" / "ci" / "conformance.xml"  # folders made on the way
    code = main(
        [
            "conformance",
            "--url",
            svc_server.url,
            "--format",
            "junit",
            "--output",
            str(out),
            "--fail-on-violation",
        ]
    )
    assert code == 1  # a violation was recorded
    suite = ElementTree.parse(out).getroot().find("testsuite")
    assert suite is not None
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["GET /products"]
    assert request_id in (failed[0].find("failure").text or "")  # type: ignore[union-attr]


def test_the_cli_says_when_it_cannot_write_the_report(
    svc_server: RunningServer, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    (tmp_path / "taken").write_text("a file where a folder should be")
    target = tmp_path / "taken" / "conformance.xml"
    code = main(["conformance", "--url", svc_server.url, "--output", str(target)])
    assert code == 2
    assert capsys.readouterr().err.startswith(f"svc-sandbox: cannot write {target}: ")


def test_the_payment_link_attempt_is_neither_listed_nor_counted(
    svc_http: FlaskClient, svc_sandbox: Sandbox, auth: dict[str, str]
) -> None:
    """docs/contract.md: POST {pay_url}/{payToken} is outside the report, which watches
    {base_url} (it has its own `servers` entry in the contract)."""
    product_id = create_product(svc_http, auth, status="published")["product"]["_id"]
    session = svc_http.post("/api/checkout", json={"productId": product_id}, headers=auth).json
    pay = {"gateway": "cbe", "phone": "0900000001", "email": "a@b.co"}
    assert svc_http.post(f"/pay/cs_{session['sessionId']}", json=pay).status_code == 200  # type: ignore[index]
    found = report(svc_http)
    in_contract = {op.operation_id for op in svc_sandbox.conformance.contract.operations}
    listed = {op["operationId"] for op in found["operations"]}
    assert "payAttempt" in in_contract and "payAttempt" not in listed
    assert found["summary"]["operations"]["total"] == len(in_contract) - 1
    assert found["summary"]["requests"] == 2  # the product and the checkout


def test_the_text_report_shows_fields_that_had_no_effect(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    body = {"amount": 500, "description": "Tip", "checkoutLink": "cl_old"}
    assert svc_http.post("/api/checkout", json=body, headers=auth).status_code == 200
    found = report(svc_http)
    assert found["summary"]["notices"] == 1
    assert found["summary"]["requestViolations"] == 0
    text = render(found, "text")
    assert "Notices (allowed, but without effect):" in text and "body.checkoutLink" in text


#: Spec-following requests the emulator accepts: the report must not flag them (§4 "1..120
#: characters after trimming"; phones trimmed, docs/spec-gaps.md).
FOLLOWING_THE_SPEC = [
    ("post", "/api/checkout", {"amount": 1000, "description": "  " + "d" * 120 + "  "}, 200),
    ("post", "/api/products", {"title": " " + "t" * 120 + " ", "pricingModel": "free"}, 201),
    (
        "post",
        "/api/checkout",
        {
            "amount": 1000,
            "description": "d",
            "gateway": "telebirr",
            "customer": {"email": " a@b.co ", "phone": " 0911223344 "},
        },
        200,
    ),
]


@pytest.mark.parametrize(("method", "path", "body", "status"), FOLLOWING_THE_SPEC)
def test_what_the_spec_allows_is_accepted_and_not_flagged(
    svc_http: FlaskClient, auth: dict[str, str], method: str, path: str, body: Any, status: int
) -> None:
    response = svc_http.open(path, method=method, json=body, headers=auth)
    assert response.status_code == status, response.json
    assert report(svc_http)["violations"] == []


def test_a_withdrawal_account_with_surrounding_spaces_fits_the_contract() -> None:
    contract = commerce_contract()
    body = b'{"amount": 10000, "gateway": "cbe", "account": " 0911223344 "}'
    operation = contract.operation("createWithdrawal")
    sent = {"Authorization": "Bearer svc_test_x"}
    assert contract.validate_request(operation, {}, {}, sent, "application/json", body) == []


# --- the size of an entry ---------------------------------------------------------------------
# Each list keeps at most MAX_VIOLATIONS entries, and each entry is small whatever the request
# sent: a violation's message shows a value cut to 80 characters (as every message does), and
# every string of an entry is cut to RECORDED_CHARACTERS.

MEGABYTE = 1_000_000


def recorded_after(*requests: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """The three reports after ``requests`` (method, path, client kwargs) sent with the seeded
    token to a fresh emulator (the same seed each time: the same request ids)."""
    sandbox = Sandbox(clock_mode="frozen", seed=7, rate_limits=False)
    client = create_app(sandbox).test_client()
    info: dict[str, Any] = client.get("/_sandbox").json  # type: ignore[assignment]
    token = info["organizations"][0]["tokens"][0]["token"]
    for method, path, kwargs in requests:
        response = getattr(client, method)(
            path, headers={"Authorization": f"Bearer {token}"}, **kwargs
        )
        assert 400 <= response.status_code < 500
    return {
        name: client.get(f"/_sandbox/conformance?contract={name}").json
        for name in ("commerce", "identity", "wallet")
    }


def cut_value(character: str) -> str:
    """How a message shows a long string of ``character``: its repr's first 79 characters."""
    return "'" + character * 78 + "…"


def test_a_megabyte_value_is_recorded_as_a_value_just_past_the_cut_is() -> None:
    def checkout(description: str) -> tuple[str, str, dict[str, Any]]:
        return "post", "/api/checkout", {"json": {"amount": 500, "description": description}}

    huge = recorded_after(*[checkout("x" * MEGABYTE)] * 5)
    assert huge == recorded_after(*[checkout("x" * 121)] * 5)  # both shown cut to 80 characters
    (violation, *_) = huge["commerce"]["violations"]
    assert violation["location"] == "body.description"
    assert violation["message"].startswith(cut_value("x") + " does not match '^")
    assert violation["schemaPath"].endswith("/properties/description/pattern")
    assert len(json.dumps(huge["commerce"])) < 20_000  # five entries; 5 MB before the cut


def test_an_unexpected_property_with_a_huge_name_is_named_cut() -> None:
    product = {"title": "Book", "pricingModel": "free", "k" * MEGABYTE: 1}
    (violation,) = recorded_after(("post", "/api/products", {"json": product}))["commerce"][
        "violations"
    ]
    assert violation["message"] == (
        f"Additional properties are not allowed ({cut_value('k')} was unexpected)"
    )


@pytest.mark.parametrize(
    ("contract", "root"), [("commerce", "/api"), ("identity", "/auth"), ("wallet", "/wallet")]
)
def test_a_huge_unmatched_path_is_kept_to_the_recorded_length(contract: str, root: str) -> None:
    path = f"{root}/nowhere/" + "y" * 100_000
    reports = recorded_after(("get", path, {}))
    (unmatched,) = reports[contract]["unmatched"]
    assert unmatched["path"] == path[: RECORDED_CHARACTERS - 1] + "…"
    assert reports == recorded_after(("get", path[: RECORDED_CHARACTERS + 10], {}))


def test_short_values_are_worded_as_jsonschema_words_them(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    product = {"title": "Book", "pricingModel": "free", "tags": ["a"]}
    svc_http.post("/api/products", headers=auth, json=product)
    svc_http.get("/api/products?status=deleted", headers=auth)
    statuses = commerce_contract().node("#/components/schemas/ProductStatus")["enum"]
    assert [v["message"] for v in report(svc_http)["violations"]] == [
        "Additional properties are not allowed ('tags' was unexpected)",
        f"'deleted' is not one of {statuses}",
    ]


def test_the_report_of_a_thousand_megabyte_values_stays_small() -> None:
    """The audit's case: 1,000 checkouts with a 1,000,000-character description held 1 GB."""
    sandbox = Sandbox(clock_mode="frozen", seed=7, rate_limits=False)
    contract = sandbox.conformance.contract
    operation = contract.operation("createCheckout")
    body = json.dumps({"amount": 500, "description": "x" * MEGABYTE}).encode()
    violations = contract.validate_request(operation, {}, {}, {}, "application/json", body)
    for number in range(MAX_VIOLATIONS + 10):
        exchange = Exchange(f"req_{number}", "POST", "/api/checkout", 400)
        sandbox.conformance.record(exchange, operation, violations)
    found = sandbox.conformance.report()
    assert len(found["violations"]) == MAX_VIOLATIONS
    assert found["summary"]["violationsDropped"] == 10
    assert len(json.dumps(found)) < MAX_VIOLATIONS * 1_500
