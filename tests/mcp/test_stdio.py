"""The tool server over stdio, as an agent host runs it: ``svc-sandbox mcp`` as a subprocess
with SVC_TOKEN (a sandbox token) and SVC_WEBHOOK_SECRET, against a served emulator; every
tool's happy path and error path through the SDK's ClientSession. One process for the module."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from svc_sandbox.contract.validation import commerce_contract
from svc_sandbox.webhooks.signing import verify
from tests.mcp.conftest import SECRET, Served, Session, open_stdio, server_env, text_of

ALL_TOOLS = [
    "svc_create_checkout",
    "svc_create_product",
    "svc_update_product",
    "svc_get_product",
    "svc_list_products",
    "svc_get_checkout_status",
    "svc_wait_for_checkout",
    "svc_list_orders",
    "svc_get_balance",
    "svc_quote_withdrawal",
    "svc_create_withdrawal",
    "svc_get_withdrawal",
    "svc_list_withdrawals",
    "svc_verify_webhook",
    "svc_create_test_webhook",
    "svc_search_docs",
    "svc_read_doc",
]
READ_TOOLS = [
    "svc_get_product",
    "svc_list_products",
    "svc_get_checkout_status",
    "svc_wait_for_checkout",
    "svc_list_orders",
    "svc_get_balance",
    "svc_quote_withdrawal",
    "svc_get_withdrawal",
    "svc_list_withdrawals",
    "svc_verify_webhook",
    "svc_search_docs",
    "svc_read_doc",
]
BUYER_PAYS = {"email": "buyer@example.com", "phone": "251900000001"}
UNKNOWN_HEX = "0" * 24


@pytest.fixture(scope="module")
def mcp(served: Served, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    env = server_env(
        SVC_TOKEN=served.tenant.token,
        SVC_BASE_URL=served.base_url,
        SVC_WEBHOOK_SECRET=SECRET,
    )
    with ExitStack() as stack:
        yield open_stdio(stack, [], env, tmp_path_factory.mktemp("mcp") / "stderr.log")


@pytest.fixture(scope="module")
def product(mcp: Session) -> dict[str, Any]:
    return mcp.ok(
        "svc_create_product",
        {"title": "Book", "pricing_model": "fixed", "amount_minor": 5000, "status": "published"},
    )


# --- what is registered -----------------------------------------------------------------


def test_default_mode_registers_every_tool_but_the_withdrawal(mcp: Session) -> None:
    assert mcp.tool_names() == [t for t in ALL_TOOLS if t != "svc_create_withdrawal"]
    assert mcp.prompts() == ["integrate_svc", "go_live_checklist", "debug_payment"]
    assert mcp.resources() == ["svc://reference"]


def test_money_parameters_end_in_minor_and_are_integers(mcp: Session) -> None:
    money: dict[str, list[str]] = {}
    for tool in mcp.list_tools():
        for name, schema in tool.input_schema["properties"].items():
            if "amount" in name:
                assert name.endswith("_minor"), (tool.name, name)
            if name.endswith("_minor"):
                money.setdefault(tool.name, []).append(name)
                kinds = [s.get("type") for s in schema.get("anyOf", [schema])]
                assert "integer" in kinds and "number" not in kinds, (tool.name, name)
    prices = ["amount_minor", "minimum_amount_minor", "default_amount_minor"]
    assert money == {
        "svc_create_checkout": ["amount_minor"],
        "svc_create_product": prices,
        "svc_update_product": prices,
        "svc_quote_withdrawal": ["amount_minor"],
    }


def test_read_tools_carry_the_read_only_annotation(mcp: Session) -> None:
    tools = mcp.list_tools()
    assert [t.name for t in tools if t.annotations.read_only_hint] == READ_TOOLS
    for tool in tools:
        assert tool.description, tool.name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description") or "$ref" in json.dumps(schema), (tool.name, name)


# --- products ---------------------------------------------------------------------------


def test_product_tools(mcp: Session, product: dict[str, Any], served: Served) -> None:
    token = product["product"]["checkoutToken"]
    assert product["price"] == {"type": "fixed", "amount": 5000, "currency": "ETB"}
    got = mcp.call("svc_get_product", {"product_id": token})
    assert "**Book**" in text_of(got) and "50.00 ETB" in text_of(got)
    assert got.structured_content == product
    rest = httpx.get(
        f"{served.base_url}/products/{token}",
        headers={"Authorization": f"Bearer {served.tenant.token}"},
    )
    assert got.structured_content == rest.json()
    updated = mcp.ok(
        "svc_update_product", {"product_id": product["product"]["_id"], "title": "Big book"}
    )
    assert updated["product"]["title"] == "Big book"
    listed = mcp.ok("svc_list_products", {"status": "published", "limit": 5})
    assert listed["total"] >= 1 and listed["items"][0]["_id"] == product["product"]["_id"]


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("svc_get_product", {"product_id": "p_missing"}, "HTTP 404, code `not_found`"),
        ("svc_create_product", {"title": "X", "pricing_model": "fixed"}, "amount_minor is"),
        ("svc_create_product", {"title": "X", "pricing_model": "pwyw"}, "minimum_amount_minor"),
        ("svc_create_product", {"title": "", "pricing_model": "free"}, "title must not be blank"),
        ("svc_create_product", {"title": "X", "pricing_model": "rental"}, "pricing_model:"),
        ("svc_update_product", {"product_id": "p_missing", "title": "Y"}, "HTTP 404"),
        ("svc_update_product", {"product_id": UNKNOWN_HEX}, "HTTP 404"),  # as PATCH {} answers
        ("svc_list_products", {"limit": 101}, "limit:"),
        ("svc_list_products", {"page": 0}, "page:"),
        ("svc_get_product", {"product_id": 123}, "product_id:"),
        (
            "svc_create_product",
            {"title": "X", "pricing_model": "free", "metadata": {"a": {}}},
            "metadata.a",
        ),
    ],
)
def test_product_errors_name_the_parameter_or_cause(
    mcp: Session, tool: str, arguments: dict[str, Any], says: str
) -> None:
    assert says in mcp.error(tool, arguments)


def test_every_input_schema_refuses_unknown_arguments(mcp: Session) -> None:
    for tool in mcp.list_tools():
        assert tool.input_schema["additionalProperties"] is False, tool.name


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (
            {"amount_minor": 500, "description": "Tip", "customer": {"externalId": "u-1"}},
            "customer.externalId: unknown parameter (got 'u-1'). customer takes: email, phone, "
            "name, external_id",
        ),
        (
            {"amount_minor": 500, "descripton": "Tip", "customer": {"fax": "1"}},
            ". svc_create_checkout takes: product_id, amount_minor, description, customer",
        ),
    ],
    ids=["nested", "top level and nested"],
)
def test_an_unknown_field_of_an_object_parameter_is_named_with_the_fields_it_takes(
    mcp: Session, arguments: dict[str, Any], says: str
) -> None:
    """The spec's wire name ``externalId`` inside ``customer`` is refused with the names the
    tool takes there (it said only "unknown parameter")."""
    said = mcp.error("svc_create_checkout", arguments)
    assert says in said, said
    if "descripton" in arguments:
        assert "descripton: unknown parameter (got 'Tip')" in said
        assert "customer.fax: unknown parameter (got '1')" in said
        assert ". customer takes: email, phone, name, external_id" in said


@pytest.mark.parametrize(
    ("tool", "arguments", "unknown"),
    [
        (
            "svc_update_product",
            {"title": "Renamed", "minimumAmountMinor": 5000},
            "minimumAmountMinor",
        ),
        ("svc_list_orders", {"statuss": "paid", "limit": 1}, "statuss"),
        ("svc_create_product", {"title": "X", "pricing_model": "free", "unknown": 1}, "unknown"),
        (
            "svc_create_checkout",
            {"amount_minor": 1000, "description": "x", "successUrl": "https://a.et"},
            "successUrl",
        ),
        ("svc_quote_withdrawal", {"amount_minor": 10000, "feeRate": "0.05"}, "feeRate"),
        ("svc_search_docs", {"query": "webhook", "max": 3}, "max"),
    ],
)
def test_an_unknown_argument_is_a_tool_error_naming_it(
    mcp: Session,
    product: dict[str, Any],
    served: Served,
    tool: str,
    arguments: dict[str, Any],
    unknown: str,
) -> None:
    if tool == "svc_update_product":
        arguments = {"product_id": product["product"]["_id"], **arguments}
    before = served.sandbox.export()
    said = mcp.error(tool, arguments)
    assert f"{unknown}: unknown parameter" in said and f"{tool} takes: " in said
    assert served.sandbox.export() == before  # nothing was sent


def test_two_unknown_arguments_are_both_named(mcp: Session) -> None:
    said = mcp.error("svc_list_orders", {"statuss": "paid", "pag": 2})
    assert "statuss: unknown parameter" in said and "pag: unknown parameter" in said


def test_api_errors_carry_status_code_and_request_id(mcp: Session) -> None:
    result = mcp.call("svc_get_product", {"product_id": "p_missing"})
    assert result.is_error
    error = result.structured_content["error"]  # type: ignore[index]
    assert error["status"] == 404 and error["code"] == "not_found"
    assert error["requestId"].startswith("req_") and error["requestId"] in text_of(result)


@pytest.mark.parametrize("bad", [-1, 1.5, "100", True, None, [5000]])
def test_money_must_be_a_non_negative_integer(mcp: Session, bad: Any) -> None:
    arguments = {"title": "X", "pricing_model": "fixed", "amount_minor": bad}
    said = mcp.error("svc_create_product", arguments)
    assert "amount_minor" in said
    assert "Invalid arguments" in said or "Invalid argument" in said


# --- checkout, orders, balance ----------------------------------------------------------


def test_a_paid_checkout_from_creation_to_order(
    mcp: Session, product: dict[str, Any], served: Served
) -> None:
    created = mcp.ok(
        "svc_create_checkout",
        {
            "product_id": product["product"]["checkoutToken"],
            "gateway": "telebirr",
            "customer": BUYER_PAYS,
            "metadata": {"cart": "42"},
        },
    )
    assert created["mode"] == "redirect" and created["checkoutUrl"]
    done = mcp.ok("svc_wait_for_checkout", {"session_id": created["sessionId"]})
    assert done["status"] == "completed" and done["orderId"]
    # The payload is the REST answer, to the byte of its JSON.
    rest = httpx.get(f"{served.base_url}/checkout/{created['sessionId']}").json()
    assert done == rest
    status = mcp.call("svc_get_checkout_status", {"session_id": created["sessionId"]})
    assert "**completed**" in text_of(status) and done["orderId"] in text_of(status)
    orders = mcp.ok("svc_list_orders", {"status": "paid"})
    assert done["orderId"] in [o["_id"] for o in orders["items"]]
    assert orders["items"][0]["metadata"]["cart"] == "42"


def test_custom_amount_and_free_checkouts(mcp: Session) -> None:
    custom = mcp.ok("svc_create_checkout", {"amount_minor": 2500, "description": "Consulting hour"})
    assert custom["checkoutUrl"] and custom["mode"] == "redirect"
    free = mcp.ok(
        "svc_create_product", {"title": "Gift", "pricing_model": "free", "status": "published"}
    )
    order = mcp.call(
        "svc_create_checkout",
        {"product_id": free["product"]["_id"], "customer": {"email": "a@b.et"}},
    )
    assert order.structured_content["orderId"]  # type: ignore[index]
    assert "Free order" in text_of(order)


def test_a_rate_limited_call_says_when_to_try_again(mcp: Session, served: Served) -> None:
    """§8: a token's checkout bucket holds 200 (frozen clock: no refill); the 429's
    Retry-After reaches the agent with the REST answer's status, code and message."""
    auth = {"Authorization": f"Bearer {served.tenant.token}"}
    body = {"amount": 500, "description": "Burst"}
    with httpx.Client(base_url=served.base_url, headers=auth) as http:
        while (rest := http.post("/checkout", json=body)).status_code != 429:
            pass
    try:
        result = mcp.call("svc_create_checkout", {"amount_minor": 500, "description": "Burst"})
    finally:
        served.sandbox.clear_controls()  # the module's other tests share the token's bucket
    assert result.is_error
    error = result.structured_content["error"]  # type: ignore[index]
    assert (error["status"], error["code"]) == (429, "rate_limited")
    assert error["message"] == rest.json()["error"]
    assert error["retryAfter"] == float(rest.headers["Retry-After"]) > 0
    assert f"Retry after {error['retryAfter']:g} s." in text_of(result)


def test_a_checkout_answers_the_organizations_checkout_fields(mcp: Session, served: Served) -> None:
    shirt = mcp.ok(
        "svc_create_product",
        {"title": "Shirt", "pricing_model": "fixed", "amount_minor": 5000, "status": "published"},
    )
    field = httpx.post(
        f"{served.origin}/_sandbox/orgs/{served.tenant.id}/checkout-fields",
        json={
            "label": "Size",
            "type": "select",
            "options": ["S", "M"],
            "required": True,
            "productIds": [shirt["product"]["_id"]],
        },
    ).json()
    buyer = {"product_id": shirt["product"]["checkoutToken"], "customer": {"email": "a@b.et"}}
    said = mcp.error("svc_create_checkout", buyer)
    assert f"collectedFields.{field['id']} is required (Size)" in said
    opened = mcp.ok("svc_create_checkout", {**buyer, "collected_fields": {field["id"]: "M"}})
    session = served.sandbox.export()
    assert opened["checkoutUrl"] and opened["sessionId"] in json.dumps(session)
    assert '"M"' in json.dumps(session)


@pytest.mark.parametrize("description", ["Gift wrap", "x" * 121])
def test_a_description_with_a_product_gets_the_rest_answer(
    mcp: Session, product: dict[str, Any], served: Served, description: str
) -> None:
    """Whatever its length: the tool's input schema has no bound of its own to answer first."""
    body = {"productId": product["product"]["checkoutToken"], "description": description}
    rest = httpx.post(
        f"{served.base_url}/checkout",
        json={**body, "customer": {"email": "a@b.et"}},
        headers={"Authorization": f"Bearer {served.tenant.token}"},
    )
    assert rest.status_code == 400
    result = mcp.call(
        "svc_create_checkout",
        {
            "product_id": body["productId"],
            "description": description,
            "customer": {"email": "a@b.et"},
        },
    )
    assert result.is_error
    error = result.structured_content["error"]  # type: ignore[index]
    assert (error["status"], error["message"]) == (400, rest.json()["error"])


def test_titles_and_descriptions_are_measured_after_trimming(mcp: Session) -> None:
    """The service trims them: 120 characters with spaces around them are taken."""
    padded = " " + "x" * 120 + " "
    created = mcp.ok("svc_create_product", {"title": padded, "pricing_model": "free"})
    assert created["product"]["title"] == "x" * 120
    renamed = mcp.ok(
        "svc_update_product",
        {"product_id": created["product"]["_id"], "title": "\t" + "z" * 120 + "\n"},
    )
    assert renamed["product"]["title"] == "z" * 120
    assert mcp.ok("svc_create_checkout", {"amount_minor": 500, "description": padded})
    too_long = mcp.error("svc_create_product", {"title": "x" * 121, "pricing_model": "free"})
    assert "title must be at most 120 characters after trimming, got 121" in too_long


AMOUNT_REQUIRED = (
    "**Error (HTTP 400, code `invalid_request`)**: amount is required when productId is "
    "omitted: an integer in ETB minor units, at least 100 (1.00 ETB)"
)
DESCRIPTION_REQUIRED = (
    "**Error (HTTP 400, code `invalid_request`)**: description is required when productId is "
    "omitted (what the buyer is paying for)"
)


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        # §7's words to the letter: the tool sends what it is given and the service answers.
        ({"amount_minor": 50, "description": "Tip"}, AMOUNT_REQUIRED),
        ({"description": "Tip"}, AMOUNT_REQUIRED),
        ({"amount_minor": 500}, DESCRIPTION_REQUIRED),
        (
            {"product_id": "p_x", "customer": {"email": "not-an-email"}},
            "HTTP 400, code `invalid_request`)**: customer.email must be a valid email address",
        ),
        ({"product_id": "p_x", "success_url": "not a url"}, "successUrl must be an absolute URI"),
        (
            {"product_id": "p_x", "metadata": {f"k{i}": "v" for i in range(21)}},
            "metadata can have at most 20 keys",
        ),
        ({"product_id": "p_missing"}, "HTTP 404"),
        ({"product_id": "p_x", "gateway": "paypal"}, "gateway:"),
        ({"product_id": "p_x", "customer": {"phone": "123"}}, "customer.phone must be"),
        ({"product_id": "p_x", "customer": {"fax": "1"}}, "customer.fax"),
    ],
)
def test_checkout_errors(mcp: Session, arguments: dict[str, Any], says: str) -> None:
    said = mcp.error("svc_create_checkout", arguments)
    assert says in said, said


def test_checkout_status_errors(mcp: Session) -> None:
    assert "HTTP 404" in mcp.error("svc_get_checkout_status", {"session_id": UNKNOWN_HEX})
    assert "session_id:" in mcp.error("svc_get_checkout_status", {"session_id": "cs_1"})
    assert "session_id:" in mcp.error("svc_wait_for_checkout", {"session_id": 7})


def test_wait_gives_up_with_poll_timeout(mcp: Session) -> None:
    open_session = mcp.ok("svc_create_checkout", {"amount_minor": 1000, "description": "Wait"})
    said = mcp.error(
        "svc_wait_for_checkout",
        {"session_id": open_session["sessionId"], "timeout_seconds": 0.6, "interval_seconds": 0.2},
    )
    assert "poll_timeout" in said and "still open" in said
    # Every poll was answered: "gave up", not the "no answer" of an unreachable server; and
    # what was done, not the whole timeout (it said "after 0.6 s of polling" at 0.4 s).
    assert said.startswith("**Error (gave up, code `poll_timeout`)**")
    assert re.search(r"after \d+ polls? over \d+\.\d s: the next poll would pass the 0\.6 s", said)


@pytest.mark.parametrize("value", ["3", True])
@pytest.mark.parametrize("name", ["timeout_seconds", "interval_seconds"])
def test_wait_takes_only_numbers_for_its_seconds(mcp: Session, name: str, value: object) -> None:
    """The schema says number: "3" and true were read as 3 and 1."""
    said = mcp.error("svc_wait_for_checkout", {"session_id": UNKNOWN_HEX, name: value})
    assert f"{name}:" in said


def test_balance_orders_and_withdrawal_reads(mcp: Session) -> None:
    balance = mcp.call("svc_get_balance")
    assert balance.structured_content == {
        "success": True,
        "eligible": False,
        "balanceMinor": 0,
        "currency": "ETB",
    }
    # The answer does not say which condition is unmet: the summary names all three (it
    # said "not in production" to a production organization whose KYC was pending).
    assert text_of(balance).startswith(
        "Balance 0.00 ETB, not eligible to withdraw (a withdrawal needs a production "
        "organization, Developer Mode on and approved KYC)."
    )
    assert mcp.ok("svc_list_withdrawals")["items"] == []
    assert "HTTP 404" in mcp.error("svc_get_withdrawal", {"withdrawal_id": UNKNOWN_HEX})
    assert "withdrawal_id:" in mcp.error("svc_get_withdrawal", {"withdrawal_id": "w1"})
    assert "status:" in mcp.error("svc_list_orders", {"status": "shipped"})
    assert "status:" in mcp.error("svc_list_withdrawals", {"status": "lost"})


# --- quote ------------------------------------------------------------------------------


def test_quote_is_the_emulators_fee_function(mcp: Session) -> None:
    from svc_sandbox.commerce.fees import quote_withdrawal

    for amount in (10000, 12345, 1000000):
        quote = mcp.ok("svc_quote_withdrawal", {"amount_minor": amount})
        expected = quote_withdrawal(amount).to_public()
        assert {k: quote[k] for k in expected} == expected
    custom = mcp.ok("svc_quote_withdrawal", {"amount_minor": 10000, "fee_rate": "0.05"})
    assert custom["feeAmount"] == 500 and custom["feeRate"] == "0.05"
    small = mcp.call("svc_quote_withdrawal", {"amount_minor": 5000})
    assert small.structured_content["belowMinimum"] is True  # type: ignore[index]
    assert "minimum withdrawal" in text_of(small)


@pytest.mark.parametrize(
    "arguments",
    [
        {"amount_minor": -1},
        {"amount_minor": 2.5},
        {"amount_minor": "10000"},
        {},
        {"amount_minor": 100_000_000_001},  # above what POST /withdrawals takes
        {"amount_minor": 10**40},  # beyond Decimal's precision: never a bare crash
    ],
)
def test_quote_refuses_bad_amounts(mcp: Session, arguments: dict[str, Any]) -> None:
    assert "amount_minor" in mcp.error("svc_quote_withdrawal", arguments)


def test_quote_refuses_bad_rates(mcp: Session) -> None:
    assert "fee_rate" in mcp.error("svc_quote_withdrawal", {"amount_minor": 1, "fee_rate": "2"})
    said = mcp.error(
        "svc_quote_withdrawal", {"amount_minor": 100, "fee_rate": "0.9", "tax_rate": "0.9"}
    )
    assert "would exceed the amount" in said


# --- webhooks ---------------------------------------------------------------------------


def test_test_webhook_verifies_and_tampering_does_not(mcp: Session) -> None:
    built = mcp.ok("svc_create_test_webhook", {"event_type": "order.completed"})
    assert built["sent"] is False and "$WEBHOOK_URL" in built["curl"]
    valid = mcp.ok(
        "svc_verify_webhook", {"payload": built["body"], "signature": built["signature"]}
    )
    assert valid["valid"] is True and valid["event"]["type"] == "order.completed"
    tampered = built["body"].replace("10000", "1")
    invalid = mcp.call("svc_verify_webhook", {"payload": tampered, "signature": built["signature"]})
    assert not invalid.is_error
    assert invalid.structured_content["reason"] == "signature_mismatch"  # type: ignore[index]
    other = mcp.ok(
        "svc_verify_webhook",
        {"payload": built["body"], "signature": built["signature"], "secret": "whsec_other"},
    )
    assert other["valid"] is False


def test_a_test_webhook_keeps_the_contract_and_takes_an_organization(mcp: Session) -> None:
    built = mcp.ok("svc_create_test_webhook", {"event_type": "checkout.session.expired"})
    event = json.loads(built["body"])
    assert commerce_contract().validate_webhook("checkout.session.expired", event) == []
    org = "0123456789abcdef01234567"
    chosen = mcp.ok(
        "svc_create_test_webhook", {"event_type": "order.created", "organization_id": org}
    )
    assert json.loads(chosen["body"])["organizationId"] == org
    said = mcp.error(
        "svc_create_test_webhook", {"event_type": "order.created", "organization_id": "org_test"}
    )
    assert said.startswith("Invalid arguments for svc_create_test_webhook: organization_id:")


def test_verify_checks_the_replay_window(mcp: Session) -> None:
    built = mcp.ok("svc_create_test_webhook", {"event_type": "order.created", "timestamp": 1000})
    late = mcp.ok("svc_verify_webhook", {"payload": built["body"], "signature": built["signature"]})
    assert late["reason"] == "timestamp_outside_tolerance"
    at_time = {"payload": built["body"], "signature": built["signature"], "now": 1100}
    assert mcp.ok("svc_verify_webhook", at_time)["valid"] is True
    off = {"payload": built["body"], "signature": built["signature"], "tolerance_seconds": None}
    assert mcp.ok("svc_verify_webhook", off)["valid"] is True
    assert "malformed_header" in json.dumps(
        mcp.ok("svc_verify_webhook", {"payload": "{}", "signature": "nonsense"})
    )
    assert "event_type:" in mcp.error("svc_create_test_webhook", {"event_type": "refund.made"})


@pytest.mark.parametrize(
    ("tool", "arguments", "parameter"),
    [
        (
            "svc_create_test_webhook",
            {"event_type": "order.created", "timestamp": 10**12},
            "timestamp",
        ),
        ("svc_verify_webhook", {"payload": "{}", "signature": "t=1,v1=ab", "now": 10**400}, "now"),
    ],
)
def test_timestamps_past_year_9999_are_named(
    mcp: Session, tool: str, arguments: dict[str, Any], parameter: str
) -> None:
    said = mcp.error(tool, arguments)
    assert said.startswith(f"Invalid arguments for {tool}: {parameter}:")
    assert "253402300799" in said


def test_the_last_second_of_year_9999_is_signed(mcp: Session) -> None:
    last = mcp.ok(
        "svc_create_test_webhook", {"event_type": "order.created", "timestamp": 253402300799}
    )
    assert last["signature"].startswith("t=253402300799,")


class _Receiver(BaseHTTPRequestHandler):
    got: list[tuple[dict[str, str], bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers["Content-Length"])
        self.got.append((dict(self.headers), self.rfile.read(length)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_over_stdio_the_test_webhook_is_sent_to_url(mcp: Session) -> None:
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{receiver.server_address[1]}/hooks"
    try:
        sent = mcp.ok("svc_create_test_webhook", {"event_type": "order.completed", "url": url})
    finally:
        receiver.shutdown()
        receiver.server_close()
    assert sent["sent"] is True and sent["receiverStatus"] == 204 and url in sent["curl"]
    headers, body = _Receiver.got[-1]
    assert body.decode() == sent["body"]
    assert verify(headers["X-Svc-Signature"], body, SECRET, now=0, tolerance=None).valid


def test_sending_to_a_dead_url_is_a_tool_error(mcp: Session) -> None:
    said = mcp.error(
        "svc_create_test_webhook", {"event_type": "order.created", "url": "http://127.0.0.1:9/x"}
    )
    assert said.startswith("Error executing tool") and "url: could not POST" in said


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://[::1", "url must be an absolute http(s) URL (it cannot be parsed)"),
        ("http://127.0.0.1:99999/x", "url must be an absolute http(s) URL (it cannot be parsed)"),
        ("https://\u00e9xample..com/", "url must be ASCII"),
        ("http://127.0.0.1:0/x", "url must have a port between 1 and 65535"),
    ],
)
def test_a_url_nothing_can_be_sent_to_is_a_tool_error_naming_url(
    mcp: Session, url: str, says: str
) -> None:
    """The pattern ^https?:// let these through and httpx raised past the tool's handling
    (no reason given, a traceback on the server's stderr): the endpoint's URL rule now."""
    said = mcp.error("svc_create_test_webhook", {"event_type": "order.created", "url": url})
    assert said.startswith("Error executing tool") and says in said


@pytest.mark.parametrize("tool", ["svc_verify_webhook", "svc_create_test_webhook"])
def test_an_explicit_empty_secret_is_refused_not_replaced_by_the_environments(
    mcp: Session, tool: str
) -> None:
    arguments = {
        "svc_verify_webhook": {"payload": "{}", "signature": "t=1,v1=00"},
        "svc_create_test_webhook": {"event_type": "order.created"},
    }[tool]
    said = mcp.error(tool, {**arguments, "secret": ""})
    assert "secret must not be empty" in said


# --- docs, prompts, resource ------------------------------------------------------------


def test_search_then_read(mcp: Session) -> None:
    found = mcp.ok("svc_search_docs", {"query": "verify webhook signature", "limit": 3})
    ids = [hit["id"] for hit in found["results"]]
    assert len(ids) == 3 and any(i.startswith("webhooks") for i in ids)
    again = mcp.ok("svc_search_docs", {"query": "verify webhook signature", "limit": 3})
    assert again == found  # stable ids and ranking
    section = mcp.ok("svc_read_doc", {"doc_id": ids[0]})
    assert section["id"] == ids[0] and section["text"]
    assert mcp.ok("svc_search_docs", {"query": "zzzqqqxxy"})["results"] == []


def test_read_doc_pages_and_errors(mcp: Session) -> None:
    first = mcp.ok("svc_read_doc", {"doc_id": "spec-gaps", "max_chars": 1000})
    assert first["nextOffset"] == 1000 and first["totalChars"] > 1000
    second = mcp.ok("svc_read_doc", {"doc_id": "spec-gaps", "offset": 1000, "max_chars": 1000})
    assert second["text"] != first["text"]
    said = mcp.error("svc_read_doc", {"doc_id": "nope"})
    assert "doc_id: no document 'nope'" in said and "reference" in said
    assert "query:" in mcp.error("svc_search_docs", {"query": ""})


def test_the_reference_resource_is_generated_from_the_contract(mcp: Session) -> None:
    text = mcp.read("svc://reference").contents[0].text
    for operation in ("POST /products", "GET /checkout/{sessionId}", "POST /withdrawals"):
        assert f"### {operation}" in text
    assert "`order.completed`" in text
    assert mcp.ok("svc_read_doc", {"doc_id": "reference", "max_chars": 100000})["text"] == text


def test_prompts(mcp: Session) -> None:
    debug = mcp.prompt("debug_payment", {"session_id": "a" * 24})
    assert "a" * 24 in debug.messages[0].content.text
    integrate = mcp.prompt("integrate_svc", {"stack": "Django", "use_case": "custom amounts"})
    assert integrate.messages[0].content.text.startswith(
        "Help me integrate the payments service into my Django application, where I sell "
        "custom amounts.\n"
    )
    plain = mcp.prompt("integrate_svc").messages[0].content.text
    assert plain.startswith("Help me integrate the payments service into my application.\n")
    assert "Write the code for my stack," in plain
    assert "svc_live_" in mcp.prompt("go_live_checklist").messages[0].content.text


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("debug_payment", {}, "Missing required arguments: {'session_id'}"),
        ("svc_refund", {}, "Unknown prompt: svc_refund"),
        (
            "integrate_svc",
            {"stack": "Django", "stak": "Flask"},
            "Invalid arguments for integrate_svc: stak: unknown argument. "
            "integrate_svc takes: stack, use_case",
        ),
        (
            "go_live_checklist",
            {"stack": "Django"},
            "Invalid arguments for go_live_checklist: stack: unknown argument. "
            "go_live_checklist takes: no arguments",
        ),
    ],
)
def test_a_prompt_asked_wrongly_is_invalid_params(
    mcp: Session, name: str, arguments: dict[str, str], message: str
) -> None:
    """MCP's prompts page: -32602 for an unknown prompt or a missing argument (the SDK said
    code 0 and logged a traceback; test_the_server_log_stays_quiet reads that log); an
    unknown argument is named with the prompt's own (the SDK said "Error rendering prompt")."""
    with pytest.raises(MCPError) as refused:
        mcp.prompt(name, arguments)
    assert (refused.value.error.code, refused.value.error.message) == (INVALID_PARAMS, message)


# --- response_format --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("svc_get_balance", {}),
        ("svc_list_products", {}),
        ("svc_quote_withdrawal", {"amount_minor": 20000}),
        ("svc_search_docs", {"query": "idempotency"}),
    ],
)
def test_json_format_returns_the_full_payload_as_text(
    mcp: Session, tool: str, arguments: dict[str, Any]
) -> None:
    markdown = mcp.call(tool, arguments)
    as_json = mcp.call(tool, {**arguments, "response_format": "json"})
    assert json.loads(text_of(as_json)) == as_json.structured_content
    assert as_json.structured_content == markdown.structured_content
    assert text_of(markdown) != text_of(as_json)
    assert "response_format:" in mcp.error(tool, {**arguments, "response_format": "xml"})


def test_unknown_tool(mcp: Session) -> None:
    assert "Unknown tool" in mcp.error("svc_refund", {})


def test_the_server_log_stays_quiet(mcp: Session, tmp_path_factory: pytest.TempPathFactory) -> None:
    logs = list(Path(tmp_path_factory.getbasetemp()).glob("mcp*/stderr.log"))
    assert logs and "Traceback" not in logs[0].read_text()


def test_input_schemas_carry_the_servers_bounds(mcp: Session) -> None:
    """A model reads the bounds in the schema before it calls: the same as the server's."""
    tools = {t.name: t.input_schema["properties"] for t in mcp.list_tools()}
    for name in ("svc_list_products", "svc_list_orders"):
        assert tools[name]["page"]["maximum"] == 2**53 - 1  # core/pagination.py MAX_PAGE
    link = tools["svc_create_checkout"]["checkout_link"]
    [pattern] = [s["pattern"] for s in link["anyOf"] if "pattern" in s]
    # §4 "string starting cl_": any such string (one naming no link is ignored), no other.
    assert all(re.fullmatch(pattern, v) for v in ("cl_", "cl_a.b", "cl_" + "a" * 101))
    assert not any(re.search(pattern, v) for v in ("CL_a", " cl_a", "xcl_a", "p_abc"))
