"""POST /checkout (spec §4): both body shapes, collection modes, customers, metadata, links,
fields, and bad input that answers 400 naming the field and creates nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.commerce import checkout_input as rules
from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import BUYER, checkout, events, org_id, published, status_of

# --- collection modes (§4 table) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("product_fields", "request_fields"),
    [
        ({"pricingModel": "free", "price": None}, {}),
        # Nothing to pay either: no provider is asked for 0 ETB (docs/spec-gaps.md).
        ({"pricingModel": "fixed", "price": {"amount": 0}}, {"gateway": "cbe"}),
        ({"pricingModel": "fixed", "price": {"amount": 0}}, {}),
        ({"pricingModel": "pwyw", "price": {"minimumAmount": 0}}, {"amount": 0}),
        ({"pricingModel": "pwyw", "price": {"minimumAmount": 0}}, {"amount": 0, "gateway": "cbe"}),
    ],
    ids=["free", "fixed-0-push", "fixed-0-link", "pwyw-0-link", "pwyw-0-push"],
)
def test_nothing_to_pay_gives_session_and_order_at_once(
    svc_http: FlaskClient,
    auth: dict[str, str],
    svc_sandbox: Sandbox,
    product_fields: dict[str, Any],
    request_fields: dict[str, Any],
) -> None:
    product = published(svc_http, auth, **product_fields)
    result = checkout(svc_http, auth, productId=product["_id"], customer=BUYER, **request_fields)
    assert set(result) == {"sessionId", "orderId"}
    status = status_of(svc_http, result["sessionId"])
    assert status["status"] == "completed"
    assert status["orderId"] == result["orderId"]
    assert [e.type for e in events(svc_sandbox)] == ["order.created", "order.completed"]


def test_production_gateway_gives_direct_push(
    svc_http: FlaskClient, live_auth: dict[str, str]
) -> None:
    product = published(svc_http, live_auth)
    result = checkout(
        svc_http,
        live_auth,
        productId=product["checkoutToken"],
        gateway="telebirr",
        customer=BUYER,
    )
    assert result == {"sessionId": result["sessionId"], "checkoutUrl": None, "mode": "direct"}


def test_sandbox_gateway_redirects_to_the_simulator(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth)
    result = checkout(svc_http, auth, productId=product["_id"], gateway="mpesa", customer=BUYER)
    simulate = svc_sandbox.settings.root("simulate_url")
    assert result["checkoutUrl"] == f"{simulate}/{result['sessionId']}"
    assert result["mode"] == "redirect"


@pytest.mark.parametrize("customer", [None, {"name": "Abebe"}], ids=["no-customer", "no-email"])
def test_token_without_gateway_gives_a_payment_link(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, customer: Any
) -> None:
    product = published(svc_http, auth)
    body: dict[str, Any] = {"productId": product["_id"]}
    if customer is not None:
        body["customer"] = customer
    result = checkout(svc_http, auth, **body)
    pay = svc_sandbox.settings.root("pay_url")
    assert result == {
        "sessionId": result["sessionId"],
        "checkoutUrl": f"{pay}/cs_{result['sessionId']}",
        "mode": "redirect",
    }
    status = status_of(svc_http, result["sessionId"])
    assert status["attempt"] == {"inFlight": False, "lastFailure": None}
    assert status["amount"] == 5000


@pytest.mark.parametrize(
    ("environment", "root"), [("sandbox", "simulate_url"), ("production", "provider_url")]
)
def test_no_token_no_gateway_gives_the_providers_hosted_page(
    svc_http: FlaskClient,
    auth: dict[str, str],
    live_auth: dict[str, str],
    svc_sandbox: Sandbox,
    environment: str,
    root: str,
) -> None:
    """§4: without a token no payment link; the gateway defaults to telebirr and the buyer
    goes to the provider's page (the simulator in the sandbox)."""
    owner = auth if environment == "sandbox" else live_auth
    product = published(svc_http, owner)
    result = checkout(svc_http, None, productId=product["checkoutToken"], customer=BUYER)
    page = svc_sandbox.settings.root(root)
    assert result == {
        "sessionId": result["sessionId"],
        "checkoutUrl": f"{page}/{result['sessionId']}",
        "mode": "redirect",
    }
    session = svc_sandbox.checkout.get(result["sessionId"])
    assert (session.mode.value, session.gateway) == ("hosted", "telebirr")
    status = status_of(svc_http, result["sessionId"])
    assert status["status"] == "open" and "attempt" not in status
    assert svc_http.get(f"/pay/cs_{result['sessionId']}").status_code == 404


def test_custom_amount_checkout(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    result = checkout(svc_http, auth, amount=100, description="  Consulting, 1 hour  ")
    status = status_of(svc_http, result["sessionId"])
    assert status["amount"] == 100
    assert svc_sandbox.checkout.get(result["sessionId"]).title == "Consulting, 1 hour"


def test_every_checkout_status_field_of_the_spec(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    result = checkout(svc_http, auth, amount=2500, description="Tip")
    assert status_of(svc_http, result["sessionId"]) == {
        "sessionId": result["sessionId"],
        "status": "open",
        "expiresAt": "2026-01-01T00:30:00.000Z",
        "amount": 2500,
        "currency": "ETB",
        "orderId": None,
        "orderStatus": None,
        "failure": None,
        "attempt": {"inFlight": False, "lastFailure": None},
    }


def test_attempt_object_only_for_payment_links(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    product = published(svc_http, auth)
    result = checkout(svc_http, auth, productId=product["_id"], gateway="cbe", customer=BUYER)
    assert "attempt" not in status_of(svc_http, result["sessionId"])


def test_unknown_session_is_404_and_a_malformed_id_400(svc_http: FlaskClient) -> None:
    assert svc_http.get("/api/checkout/" + "a" * 24).status_code == 404
    response = svc_http.get("/api/checkout/nothex")
    assert response.status_code == 400
    assert "sessionId" in response.json["error"]  # type: ignore[index]


# --- pricing ----------------------------------------------------------------------------------


def test_pwyw_charges_the_amount_at_or_above_the_minimum(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    product = published(svc_http, auth, pricingModel="pwyw", price={"minimumAmount": 1000})
    ok = checkout(svc_http, auth, productId=product["_id"], amount=1000)
    assert status_of(svc_http, ok["sessionId"])["amount"] == 1000
    low = checkout(svc_http, auth, 400, productId=product["_id"], amount=999)
    assert low["error"].startswith("amount must be at least 1000")
    missing = checkout(svc_http, auth, 400, productId=product["_id"])
    assert missing["error"].startswith("amount is required")


#: §4 "Ignored for fixed and free": any integer, out of a pwyw amount's range too.
IGNORED_AMOUNTS = [1, 0, None, 10**11, -5, 10**12, 10**30]


@pytest.mark.parametrize("amount", IGNORED_AMOUNTS)
def test_amount_is_ignored_for_fixed_products(
    svc_http: FlaskClient, auth: dict[str, str], amount: int | None
) -> None:
    product = published(svc_http, auth)
    result = checkout(svc_http, auth, productId=product["_id"], amount=amount)
    assert status_of(svc_http, result["sessionId"])["amount"] == 5000


@pytest.mark.parametrize("amount", IGNORED_AMOUNTS)
def test_amount_is_ignored_for_free_products(
    svc_http: FlaskClient, auth: dict[str, str], amount: int | None
) -> None:
    product = published(svc_http, auth, pricingModel="free", price=None)
    result = checkout(svc_http, auth, productId=product["_id"], amount=amount, customer=BUYER)
    assert set(result) == {"sessionId", "orderId"}  # nothing to pay: an order at once


@pytest.mark.parametrize("amount", ["lots", "500", 1.5, True, [500], {"minor": 500}])
def test_an_ignored_amount_that_is_not_an_integer_is_refused_with_its_message(
    svc_http: FlaskClient, auth: dict[str, str], amount: object
) -> None:
    product = published(svc_http, auth, pricingModel="free", price=None)
    result = checkout(svc_http, auth, 400, productId=product["_id"], amount=amount)
    assert result == {
        "error": "amount must be an integer in ETB minor units (ignored for fixed and free "
        "products)"
    }


# --- custom-amount messages of §7, to the letter ----------------------------------------------

CUSTOM_CASES: list[tuple[str, bool, dict[str, Any], str]] = [
    ("no token", False, {"amount": 500, "description": "x"}, rules.PRODUCT_ID_REQUIRED),
    ("description missing", True, {"amount": 500}, rules.DESCRIPTION_REQUIRED),
    ("description blank", True, {"amount": 500, "description": "   "}, rules.DESCRIPTION_REQUIRED),
    (
        "description not a string",
        True,
        {"amount": 500, "description": 5},
        rules.DESCRIPTION_REQUIRED,
    ),
    (
        "description too long",
        True,
        {"amount": 500, "description": "x" * 121},
        rules.DESCRIPTION_TOO_LONG,
    ),
    ("amount missing", True, {"description": "x"}, rules.AMOUNT_REQUIRED),
    ("amount float", True, {"description": "x", "amount": 150.0}, rules.AMOUNT_REQUIRED),
    ("amount string", True, {"description": "x", "amount": "150"}, rules.AMOUNT_REQUIRED),
    ("amount boolean", True, {"description": "x", "amount": True}, rules.AMOUNT_REQUIRED),
    ("amount below 100", True, {"description": "x", "amount": 99}, rules.AMOUNT_REQUIRED),
    (
        "metadata list",
        True,
        {"description": "x", "amount": 100, "metadata": ["a"]},
        rules.METADATA_NOT_OBJECT,
    ),
    (
        "metadata string",
        True,
        {"description": "x", "amount": 100, "metadata": "a=b"},
        rules.METADATA_NOT_OBJECT,
    ),
    (
        "metadata 21 keys",
        True,
        {"description": "x", "amount": 100, "metadata": {f"k{i}": "v" for i in range(21)}},
        rules.METADATA_TOO_MANY,
    ),
    (
        "metadata nested",
        True,
        {"description": "x", "amount": 100, "metadata": {"order": {"id": 1}}},
        "metadata.order must be a string, number or boolean",
    ),
    (
        "metadata null value",
        True,
        {"description": "x", "amount": 100, "metadata": {"ref": None}},
        "metadata.ref must be a string, number or boolean",
    ),
]


@pytest.mark.parametrize(
    ("with_token", "body", "message"),
    [c[1:] for c in CUSTOM_CASES],
    ids=[c[0] for c in CUSTOM_CASES],
)
def test_custom_amount_messages_are_exact(
    svc_http: FlaskClient,
    auth: dict[str, str],
    svc_sandbox: Sandbox,
    with_token: bool,
    body: dict[str, Any],
    message: str,
) -> None:
    result = checkout(svc_http, auth if with_token else None, 400, **body)
    assert result == {"error": message}
    assert svc_sandbox.checkout.sessions == {}
    assert svc_sandbox.orders.orders == {}


def test_the_quoted_amount_message() -> None:
    assert rules.AMOUNT_REQUIRED == (
        "amount is required when productId is omitted: an integer in ETB minor units, "
        "at least 100 (1.00 ETB)"
    )


# --- other bad input: 400 naming the field, nothing created -----------------------------------

BAD_PRODUCT_BODIES: list[tuple[str, dict[str, Any], str]] = [
    ("unknown gateway", {"gateway": "paypal", "customer": BUYER}, "gateway"),
    # Ignored for a fixed product (§4), but §2 types it: an integer.
    ("amount a string", {"amount": "lots", "customer": BUYER}, "amount"),
    ("amount a float", {"amount": 5000.5, "customer": BUYER}, "amount"),
    (
        "bad phone",
        {"gateway": "telebirr", "customer": {**BUYER, "phone": "12345"}},
        "customer.phone",
    ),
    ("bad email", {"customer": {"email": "not-an-email"}}, "customer.email"),
    ("email not a string", {"customer": {"email": 5}}, "customer.email"),
    (
        "phone missing for a push",
        {"gateway": "telebirr", "customer": {"email": "a@b.co"}},
        "customer.phone",
    ),
    ("both shapes mixed", {"description": "Tip", "customer": BUYER}, "description"),
    ("unknown field", {"customer": BUYER, "coupon": "X"}, "coupon"),
    ("successUrl not a URI", {"customer": BUYER, "successUrl": "done"}, "successUrl"),
    (
        "metadata too large",
        {"customer": BUYER, "metadata": {f"k{i}": 1 for i in range(21)}},
        "metadata",
    ),
    ("metadata key too long", {"customer": BUYER, "metadata": {"k" * 41: "v"}}, "metadata"),
    ("metadata value too long", {"customer": BUYER, "metadata": {"k": "v" * 501}}, "metadata.k"),
    ("productId malformed", {"customer": BUYER, "productId": "nope!"}, "productId"),
    (
        "collectedFields not an object",
        {"customer": BUYER, "collectedFields": []},
        "collectedFields",
    ),
    # §4: checkoutLink is a "string starting cl_"; any other value is refused.
    *(
        (f"checkoutLink {name}", {"customer": BUYER, "checkoutLink": value}, "checkoutLink")
        for name, value in [
            ("of another prefix", "xx_1"),
            ("empty", ""),
            ("blank", " "),
            ("a product token", "p_8odNXR1yHnGA3cCc"),
            ("in capitals", "CL_abc"),
            ("after a space", " cl_abc"),
            ("not a string", 5),
        ]
    ),
]


@pytest.mark.parametrize(
    ("body", "field"), [c[1:] for c in BAD_PRODUCT_BODIES], ids=[c[0] for c in BAD_PRODUCT_BODIES]
)
def test_bad_input_is_400_naming_the_field_and_creates_nothing(
    svc_http: FlaskClient,
    auth: dict[str, str],
    svc_sandbox: Sandbox,
    body: dict[str, Any],
    field: str,
) -> None:
    product = published(svc_http, auth)
    before = svc_sandbox.export()["services"]
    result = checkout(svc_http, auth, 400, **{"productId": product["_id"], **body})
    assert result["error"].startswith(field), result
    assert svc_sandbox.export()["services"] == before


def test_a_checkout_link_of_another_shape_is_refused_on_a_custom_amount_too(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    """Ignored there when well-formed, but the field's shape is one rule for both bodies."""
    before = svc_sandbox.export()["services"]
    result = checkout(svc_http, auth, 400, amount=500, description="x", checkoutLink="xx_1")
    assert result["error"].startswith("checkoutLink must be a checkout link token"), result
    assert svc_sandbox.export()["services"] == before


@pytest.mark.parametrize(
    "extra",
    [{"checkoutLink": "cl_x"}, {"collectedFields": {"cf_x": "A7"}}],
    ids=["checkoutLink", "collectedFields"],
)
def test_product_only_fields_on_a_custom_amount_are_ignored_and_reported(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, extra: dict[str, Any]
) -> None:
    """§4: they "do not apply" to a custom amount: ignored, and the conformance report says
    the client sent them."""
    result = checkout(svc_http, auth, amount=500, description="x", **extra)
    session = svc_sandbox.checkout.get(result["sessionId"])
    assert (session.checkout_link, session.collected_fields) == (None, {})
    (name,) = extra
    notices = svc_http.get("/_sandbox/conformance").json["notices"]  # type: ignore[index]
    assert [(n["operationId"], n["location"]) for n in notices] == [
        ("createCheckout", f"body.{name}")
    ]
    assert "does not apply" in notices[0]["message"]


def test_metadata_needs_a_token(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    product = published(svc_http, auth)
    result = checkout(svc_http, None, 400, productId=product["_id"], customer=BUYER, metadata={})
    assert result["error"].startswith("metadata")


def test_non_json_body_is_rejected(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    response = svc_http.post(
        "/api/checkout", data="[1]", headers={**auth, "Content-Type": "application/json"}
    )
    assert response.status_code == 400


def test_a_bad_token_is_401(svc_http: FlaskClient) -> None:
    response = svc_http.post(
        "/api/checkout",
        json={"amount": 500, "description": "x"},
        headers={"Authorization": "Bearer svc_test_nope1234"},
    )
    assert response.status_code == 401
    assert "message" in response.json  # type: ignore[operator]


# --- products that cannot be checked out: 404 -------------------------------------------------


@pytest.mark.parametrize("case", ["unknown", "draft", "archived", "other organization"])
@pytest.mark.parametrize("with_token", [True, False], ids=["token", "no-token"])
def test_products_that_cannot_be_checked_out_are_404(
    svc_http: FlaskClient,
    auth: dict[str, str],
    live_auth: dict[str, str],
    svc_sandbox: Sandbox,
    case: str,
    with_token: bool,
) -> None:
    if case == "unknown":
        ref = "f" * 24
    elif case == "draft":
        ref = published(svc_http, auth, status="draft")["_id"]
    elif case == "archived":
        ref = published(svc_http, auth)["_id"]
        svc_http.delete(f"/api/products/{ref}", headers=auth)
    else:
        ref = published(svc_http, live_auth)["_id"]
        if not with_token:  # without a token any organization's published product is fine
            return
    result = checkout(svc_http, auth if with_token else None, 404, productId=ref, customer=BUYER)
    assert result == {"error": "Product not found"}
    assert svc_sandbox.checkout.sessions == {}


# --- customers ----------------------------------------------------------------------------------


def test_customers_are_upserted_per_organization(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth)
    checkout(svc_http, auth, productId=product["_id"], customer={"email": "a@b.co"})
    checkout(
        svc_http,
        auth,
        productId=product["_id"],
        customer={"email": "A@b.co", "name": "Abebe", "externalId": "u-1"},
    )
    customers = svc_sandbox.customers.list_for(org_id(svc_sandbox), "sandbox")
    assert len(customers) == 1
    assert (customers[0].name, customers[0].external_id) == ("Abebe", "u-1")


@pytest.mark.parametrize("phone", ["251911223344", "0911223344", "911223344"])
def test_the_three_phone_formats(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, phone: str
) -> None:
    product = published(svc_http, auth)
    result = checkout(
        svc_http,
        auth,
        productId=product["_id"],
        gateway="telebirr",
        customer={"email": "a@b.co", "phone": phone},
    )
    assert svc_sandbox.checkout.get(result["sessionId"]).phone == "251911223344"


# --- metadata: merge order, stored as strings -------------------------------------------------


def test_metadata_merges_product_then_link_then_request(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth, metadata={"a": "product", "b": "product", "c": "product"})
    link = svc_http.post(
        f"/_sandbox/orgs/{org_id(svc_sandbox)}/checkout-links",
        json={"productIds": [product["_id"]], "metadata": {"b": "link", "c": "link"}},
    ).json
    result = checkout(
        svc_http,
        auth,
        productId=product["_id"],
        customer=BUYER,
        checkoutLink=link["id"],  # type: ignore[index]
        metadata={"c": "request", "n": 1.5, "t": True},
    )
    svc_sandbox.payments.approve(result["sessionId"])
    order = svc_http.get("/api/orders", headers=auth).json["items"][0]  # type: ignore[index]
    assert order["metadata"] == {
        "a": "product",
        "b": "link",
        "c": "request",
        "n": "1.5",
        "t": "true",
    }
    completed = events(svc_sandbox, "order.completed")[0]
    assert completed.data["metadata"] == order["metadata"]


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        # As JSON.stringify writes the number (checked against node once): Python's str()
        # wrote 100.0, 1000.0, -0.0 and 1.5e-07.
        ("1e2", "100"),
        ("1E3", "1000"),
        ("1.50", "1.5"),
        ("-0.0", "0"),
        ("1.5e-7", "1.5e-7"),
        ("0.000001", "0.000001"),
        ("1e21", "1e+21"),
        ("123456789012345680000", "123456789012345680000"),
        ("12", "12"),
        ("-7", "-7"),
    ],
)
def test_a_number_in_metadata_is_stored_as_json_writes_it(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, sent: str, stored: str
) -> None:
    product = published(svc_http, auth)
    # The number as sent: a JSON text, not a Python value (1e2 and 100 decode alike).
    fields = json.dumps({"productId": product["_id"], "customer": BUYER})
    body = fields[:-1] + ', "metadata": {"n": ' + sent + "}}"
    response = svc_http.post(
        "/api/checkout", data=body, headers={**auth, "Content-Type": "application/json"}
    )
    assert response.status_code == 200, response.json
    svc_sandbox.payments.approve(response.json["sessionId"])  # type: ignore[index]
    order = svc_http.get("/api/orders", headers=auth).json["items"][0]  # type: ignore[index]
    assert order["metadata"] == {"n": stored}


# --- checkout links ---------------------------------------------------------------------------


def _link(client: FlaskClient, sandbox: Sandbox, **body: Any) -> str:
    response = client.post(f"/_sandbox/orgs/{org_id(sandbox)}/checkout-links", json=body)
    assert response.status_code == 201, response.json
    return str(response.json["id"])  # type: ignore[index]


@pytest.mark.parametrize("stale", ["inactive", "other product", "unknown", "other organization"])
def test_a_stale_checkout_link_is_ignored(
    svc_http: FlaskClient,
    auth: dict[str, str],
    live_auth: dict[str, str],
    svc_sandbox: Sandbox,
    stale: str,
) -> None:
    product = published(svc_http, auth)
    other = published(svc_http, auth)
    if stale == "inactive":
        link = _link(
            svc_http, svc_sandbox, productIds=[product["_id"]], metadata={"l": "1"}, active=False
        )
    elif stale == "other product":
        link = _link(svc_http, svc_sandbox, productIds=[other["_id"]], metadata={"l": "1"})
    elif stale == "unknown":
        link = "cl_doesnotexist"
    else:
        live_product = published(svc_http, live_auth)
        live_org = org_id(svc_sandbox, "production")
        link = svc_http.post(
            f"/_sandbox/orgs/{live_org}/checkout-links",
            json={"productIds": [live_product["_id"]], "metadata": {"l": "1"}},
        ).json["id"]  # type: ignore[index]
    result = checkout(svc_http, auth, productId=product["_id"], customer=BUYER, checkoutLink=link)
    session = svc_sandbox.checkout.get(result["sessionId"])
    assert session.metadata == {} and session.checkout_link is None


#: Strings starting cl_ that no link the sandbox makes could have (it makes cl_ and 20
#: letters, digits, - or _): the spec's one shape, so a token, stale, and ignored (§4).
UNMADE_LINK_TOKENS = {
    "bare prefix": "cl_",
    "with a dot": "cl_a.b",
    "with a space": "cl_a b",
    "non-ASCII": "cl_\u00e9",
    "of 5000 characters": "cl_" + "x" * 4997,
}


@pytest.mark.parametrize("link", UNMADE_LINK_TOKENS.values(), ids=UNMADE_LINK_TOKENS.keys())
def test_any_string_starting_cl_is_a_token_and_one_naming_no_link_is_ignored(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, link: str
) -> None:
    product = published(svc_http, auth)
    result = checkout(svc_http, auth, productId=product["_id"], customer=BUYER, checkoutLink=link)
    session = svc_sandbox.checkout.get(result["sessionId"])
    assert session.metadata == {} and session.checkout_link is None


def test_link_success_url_applies_and_checkout_id_is_replaced(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth)
    link = _link(
        svc_http,
        svc_sandbox,
        productIds=[product["_id"]],
        successUrl="https://shop.example/ok?s={CHECKOUT_ID}",
    )
    result = checkout(svc_http, auth, productId=product["_id"], checkoutLink=link)
    session = svc_sandbox.checkout.get(result["sessionId"])
    assert session.success_url == f"https://shop.example/ok?s={result['sessionId']}"


# --- successUrl --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("with_token", "registered", "honored"),
    [(True, False, True), (False, True, True), (False, False, False)],
    ids=["token", "no-token-registered-host", "no-token-foreign-host"],
)
def test_success_url_rules(
    svc_http: FlaskClient,
    auth: dict[str, str],
    svc_sandbox: Sandbox,
    with_token: bool,
    registered: bool,
    honored: bool,
) -> None:
    if registered:
        svc_sandbox.orgs.update(org_id(svc_sandbox), redirect_urls=["https://shop.example/back"])
    product = published(svc_http, auth)
    result = checkout(
        svc_http,
        auth if with_token else None,
        productId=product["_id"],
        customer=BUYER,
        successUrl="https://shop.example/thanks/{CHECKOUT_ID}",
    )
    expected = f"https://shop.example/thanks/{result['sessionId']}" if honored else None
    assert svc_sandbox.checkout.get(result["sessionId"]).success_url == expected


@pytest.mark.parametrize(
    "url",
    [
        "myapp://paid?session={CHECKOUT_ID}",
        "com.shop.app:/checkout/{CHECKOUT_ID}/done",
        "https://shop.example/thanks/{CHECKOUT_ID}",
    ],
    ids=["deep-link", "reverse-domain-scheme", "https"],
)
def test_success_url_is_any_absolute_uri_an_app_deep_link_included(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox, url: str
) -> None:
    """§2 types successUrl as a URI string: a mobile app's own scheme is one."""
    product = published(svc_http, auth)
    result = checkout(svc_http, auth, productId=product["_id"], customer=BUYER, successUrl=url)
    session_id = result["sessionId"]
    assert svc_sandbox.checkout.get(session_id).success_url == url.replace(
        "{CHECKOUT_ID}", session_id
    )


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("javascript:alert(1)", "must not use the javascript: scheme"),
        ("JavaScript:alert(1)", "must not use the javascript: scheme"),
        ("vbscript:msgbox(1)", "must not use the vbscript: scheme"),
        ("data:text/plain,paid", "must not use the data: scheme"),
        ("file:///etc/passwd", "must not use the file: scheme"),
        ("filesystem:https://x/temporary/a", "must not use the filesystem: scheme"),
        ("view-source:https://example.com", "must not use the view-source: scheme"),
        ("chrome://settings", "must not use the chrome: scheme"),
        ("feed:javascript:alert(1)", "must not use the feed: scheme"),
        ("done", "must be an absolute URI"),
        ("/thanks", "must be an absolute URI"),
        ("myapp://pa id", "must be an absolute URI"),
        ("http://[::1", "must be an absolute URI"),
        ("https://shop.example:99999/", "must be an absolute http(s) URL"),
        ("myapp://" + "x" * 2048, "must be at most 2048 characters"),
    ],
)
def test_success_url_refusals_name_the_field_and_change_nothing(
    svc_http: FlaskClient, auth: dict[str, str], url: str, says: str
) -> None:
    product = published(svc_http, auth)
    before = svc_http.get("/_sandbox/state").data
    body = {"productId": product["_id"], "customer": BUYER, "successUrl": url}
    refused = checkout(svc_http, auth, 400, **body)
    assert refused["error"].startswith("successUrl ")
    assert says in refused["error"]
    assert svc_http.get("/_sandbox/state").data == before


@pytest.mark.parametrize(
    ("customer", "says"),
    [
        ({"name": "N" * 121}, "customer.name must have at most 120 characters"),
        ({"externalId": "u" * 201}, "customer.externalId must have at most 200"),
        ({"externalId": ""}, "customer.externalId must have at least 1 character"),
    ],
)
def test_customer_name_and_external_id_are_bounded(
    svc_http: FlaskClient, auth: dict[str, str], customer: dict[str, str], says: str
) -> None:
    """Bounds §2 does not give (docs/spec-gaps.md): the longest accepted values pass."""
    product = published(svc_http, auth)
    refused = checkout(
        svc_http, auth, 400, productId=product["_id"], customer={**BUYER, **customer}
    )
    assert refused["error"].startswith(says)
    longest = {**BUYER, "name": "N" * 120, "externalId": "u" * 200}
    checkout(svc_http, auth, productId=product["_id"], customer=longest)


# --- collected fields --------------------------------------------------------------------------


def test_collected_fields_are_checked_and_saved_on_the_order(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    product = published(svc_http, auth)
    org = org_id(svc_sandbox)
    size = svc_http.post(
        f"/_sandbox/orgs/{org}/checkout-fields",
        json={"label": "Size", "type": "select", "options": ["S", "M"], "required": True},
    ).json["id"]  # type: ignore[index]
    note = svc_http.post(f"/_sandbox/orgs/{org}/checkout-fields", json={"label": "Note"}).json["id"]  # type: ignore[index]
    missing = checkout(svc_http, auth, 400, productId=product["_id"], customer=BUYER)
    assert missing["error"].startswith(f"collectedFields.{size} is required")
    wrong = checkout(
        svc_http,
        auth,
        400,
        productId=product["_id"],
        customer=BUYER,
        collectedFields={size: "XL"},
    )
    assert wrong["error"].startswith(f"collectedFields.{size}")
    unknown = checkout(
        svc_http,
        auth,
        400,
        productId=product["_id"],
        customer=BUYER,
        collectedFields={size: "S", "cf_x": "1"},
    )
    assert unknown["error"].startswith("collectedFields.cf_x")
    assert svc_sandbox.checkout.sessions == {}
    result = checkout(
        svc_http,
        auth,
        productId=product["_id"],
        customer=BUYER,
        collectedFields={size: "M", note: 7},
    )
    svc_sandbox.payments.approve(result["sessionId"])
    order = svc_http.get("/api/orders", headers=auth).json["items"][0]  # type: ignore[index]
    assert order["collectedFields"] == {size: "M", note: "7"}
