"""The contract states the emulator's input rules where JSON Schema can: every value below is
judged the same by the emulator's rule, by jsonschema and by jsonschema_rs (the two
validators of svc_sandbox.contract.validation), so a spec-following client is never flagged
for what the emulator accepts, nor let through for what it refuses."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable
from typing import Any

import jsonschema
import jsonschema_rs
import pytest

from svc_sandbox.commerce.checkout_input import check_checkout_link, check_email, normalize_phone
from svc_sandbox.commerce.products import REQUEST_PRICE, foreign_price_field, price_problem
from svc_sandbox.commerce.schemas import PriceBody
from svc_sandbox.contract.document import load_contract
from svc_sandbox.contract.validation import commerce_contract
from svc_sandbox.core.validation import http_url_problem, success_url_problem
from tests.core.test_url_characters import ACCEPTED as ASCII_URIS
from tests.core.test_url_characters import REFUSED as NOT_URIS

SCHEMAS = load_contract()["components"]["schemas"]
TRIMMED_TITLE = SCHEMAS["ProductCreate"]["properties"]["title"]
DESCRIPTION = SCHEMAS["CustomAmountCheckout"]["properties"]["description"]
#: Every character Python's str.strip() removes, and a few it keeps.
WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
NOT_WHITESPACE = ["\x00", "\x1b", "\x7f", "\u180e", "\u200b", "\ufeff", "x", "é"]


def verdicts(schema: dict[str, Any], value: Any) -> tuple[bool, bool]:
    checker = jsonschema.FormatChecker()
    python = jsonschema.Draft202012Validator(schema, format_checker=checker).is_valid(value)
    return python, jsonschema_rs.validator_for(schema).is_valid(value)


def accepts(rule: Callable[[str], object], value: str) -> bool:
    """Whether a rule that raises ValueError on a refusal takes ``value``."""
    try:
        rule(value)
    except ValueError:
        return False
    return True


def trimmed_1_to_120(value: str) -> bool:
    return 1 <= len(value.strip()) <= 120


def phone_rule(value: str) -> bool:
    return accepts(normalize_phone, value)


def email_rule(value: str) -> bool:
    return accepts(check_email, value)


def media_rule(value: str) -> bool:
    return http_url_problem(value) is None


def success_url_rule(value: str) -> bool:
    return success_url_problem(value) is None


def checkout_link_rule(value: str) -> bool:
    return accepts(check_checkout_link, value)


def around(*middles: str) -> list[str]:
    """Each middle alone and between each kind of whitespace (and non-whitespace)."""
    return [c + middle + c for middle in middles for c in ["", *WHITESPACE, *NOT_WHITESPACE]]


CASES = [
    (
        TRIMMED_TITLE,
        trimmed_1_to_120,
        around("x", "x" * 120, "x" * 121, "a b", "", "x" * 119 + " y"),
    ),
    (DESCRIPTION, trimmed_1_to_120, around("d" * 120, "d" * 121, "é" * 120)),
    (SCHEMAS["Phone"], phone_rule, around("0911223344", "251911223344", "911223344", "09 11")),
    (
        SCHEMAS["Email"],
        email_rule,
        around("a@b.co", "a@b", '"a b"@x.co', "a@@b.co", "@b.co", "a@b.", "ü@ß.de", "a.b@c"),
    ),
    (
        SCHEMAS["Media"]["items"],
        media_rule,
        [
            "https://",
            "https://a b/c.png",
            "http://x:99999/a.png",
            "http://x:0/",
            "http://x:00080/a",
            "http://x:/a",
            "HTTP://X/a",
            "https://a.b/c?d=e#f",
            "http://u:p@h/",
            "http://[::1]/",
            "http://[::1/",
            "http://x\t/",
            "ftp://x/",
            "http:/x",
            "http://x/%zz",
            "http://x/a b",
            "http://h:65535",
            "http://h:65536",
            "http://x/a[b]",
            "http://x/?a[b]",
            "http://a@b@c/",
            "http://u:p@/x",
            *NOT_URIS.values(),
            *ASCII_URIS,
        ],
    ),
    (
        SCHEMAS["SuccessUrl"],
        success_url_rule,
        [
            "https://exa mple.com/",
            "http://x:99999/",
            "https://shop.example/paid?s={CHECKOUT_ID}",
            "myapp://paid",
            "myapp://paid?id={CHECKOUT_ID}",
            "javascript:alert(1)",
            "JavaScript:x",
            "data:text/html,x",
            "filesystem:https://x/temporary/a",
            "View-Source:https://example.com",
            "chrome://settings",
            "chrome-extension://abc/x",
            "feed:javascript:alert(1)",
            "jar:https://x/a.jar!/b",
            "chromex://x",
            "mailto:a@b.co",
            "x:",
            "urn:a",
            "myapp://p aid",
            "myapp://p%20aid",
            "myapp://p%2",
            "https://e.com/#a#b",
            "https://e.com/{x}",
            "tel:+251911",
            "http://x/%zz",
            "http://x/a[b]",
            *NOT_URIS.values(),
            *ASCII_URIS,
        ],
    ),
    (
        SCHEMAS["CheckoutLinkToken"],
        checkout_link_rule,
        [
            *around("cl_abc", "cl_" + "a" * 100, "cl_" + "a" * 101, "cl_", "xx_1", "p_abc"),
            "cl_a-b_C9",
            "cl_a b",
            "cl_é",
            "CL_abc",
            "cl_abc\n",
        ],
    ),
]


@pytest.mark.parametrize(
    ("schema", "rule", "values"),
    CASES,
    ids=["title", "description", "phone", "email", "media", "successUrl", "checkoutLink"],
)
def test_the_contract_and_the_emulator_agree(
    schema: dict[str, Any], rule: Callable[[str], bool], values: list[str]
) -> None:
    disagreements = [
        (value, rule(value), verdicts(schema, value))
        for value in values
        if verdicts(schema, value) != (rule(value), rule(value))
    ]
    assert disagreements == []


def product_bodies() -> list[dict[str, Any]]:
    """Every pricing model with every price field absent, 0 or 500 (and a default of 900)."""
    values: list[int | None] = [None, 0, 500]
    bodies = []
    for model in ("fixed", "pwyw", "free"):
        for amount, minimum, default in itertools.product(values, values, [None, 0, 900]):
            price = {"type": model, "currency": "ETB"}
            given = {"amount": amount, "minimumAmount": minimum, "defaultAmount": default}
            price.update({k: v for k, v in given.items() if v is not None})
            bodies.append({"title": "Book", "pricingModel": model, "price": price})
    return bodies


@pytest.mark.parametrize("body", product_bodies(), ids=lambda b: json.dumps(b["price"]))
def test_the_contract_and_the_emulator_agree_on_price_fields_per_pricing_model(
    body: dict[str, Any],
) -> None:
    """ProductCreate's oneOf says which price fields each pricing model takes, as the
    emulator's one rule (commerce/products.py: foreign_price_field, then price_problem)."""
    price = PriceBody.model_validate(body["price"])
    model = body["pricingModel"]
    # A pwyw default below the minimum compares two fields: the harness's allowance (the
    # contract cannot say it), so the emulator's rule is taken without that comparison.
    emulator = (
        foreign_price_field(model, price)
        or price_problem(model, price.amount, price.minimumAmount, None, REQUEST_PRICE)
    ) is None
    found = commerce_contract().check("#/components/schemas/ProductCreate", body, "request", "body")
    assert (found == []) == emulator, found
