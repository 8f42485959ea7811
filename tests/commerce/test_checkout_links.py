"""A select checkout field's options are trimmed as an answer is (``collect`` strips it with
``str.strip``), so every option can be chosen: ``" L "`` or ``"XL\\u3000"`` was stored as
given and no answer could ever match it (a required field then blocked every checkout)."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.commerce.checkout_helpers import org_id
from tests.helpers import assert_unharmed, create_product

PADDED = {
    "no-break space": ("M\u00a0", "M"),
    "spaces": (" L ", "L"),
    "ideographic space": ("XL\u3000", "XL"),
    "tab and line feed": ("\tS\n", "S"),
}


@pytest.mark.parametrize("update", [False, True], ids=["create", "patch"])
@pytest.mark.parametrize(("option", "stored"), PADDED.values(), ids=PADDED.keys())
def test_a_padded_option_is_stored_trimmed_and_can_be_chosen(
    svc_http: FlaskClient,
    svc_sandbox: Sandbox,
    auth: dict[str, str],
    option: str,
    stored: str,
    update: bool,
) -> None:
    product = create_product(svc_http, auth, status="published")["product"]["checkoutToken"]
    body = {"label": "Size", "type": "select", "required": True, "productIds": [product]}
    org = org_id(svc_sandbox)
    created = svc_http.post(
        f"/_sandbox/orgs/{org}/checkout-fields",
        json={**body, "options": ["other" if update else option]},
    ).json
    field_id = created["id"]  # type: ignore[index]
    if update:
        changed = svc_http.patch(
            f"/_sandbox/checkout-fields/{field_id}", json={"options": [option]}
        )
        assert changed.status_code == 200, changed.json
        assert changed.json["options"] == [stored]  # type: ignore[index]
    else:
        assert created["options"] == [stored]  # type: ignore[index]
    checkout = svc_http.post(
        "/api/checkout",
        json={
            "productId": product,
            "customer": {"email": "a@b.co"},
            "collectedFields": {field_id: option},
        },
        headers=auth,
    )
    assert checkout.status_code == 200, checkout.json


@pytest.mark.parametrize("blank", [" ", "\u3000", "\t\n"])
def test_a_blank_option_is_refused_naming_it(
    svc_http: FlaskClient, svc_sandbox: Sandbox, blank: str
) -> None:
    before = svc_http.get("/_sandbox/state").data
    response = svc_http.post(
        f"/_sandbox/orgs/{org_id(svc_sandbox)}/checkout-fields",
        json={"label": "Size", "type": "select", "options": ["S", blank]},
    )
    assert response.status_code == 400
    assert response.json["error"] == "options[1] must not be blank"  # type: ignore[index]
    assert_unharmed(svc_http, before)


TYPED_ANSWERS = [
    # (field type, answer, refusal or None when taken)
    ("email", "buyer@example.com", None),
    ("email", "not-an-email", "must be a valid email address"),
    ("phone", "0911223344", None),
    ("phone", "251911223344", None),
    ("phone", "12", "must be a phone number like"),
    ("number", "42", None),
    ("number", 3.5, None),
    ("number", "-1e3", None),
    ("number", "abc", "must be a number"),
    ("number", "NaN", "must be a number"),
    ("number", True, "must be a number"),
    ("text", "anything at all", None),
]


@pytest.mark.parametrize(("type_", "answer", "refusal"), TYPED_ANSWERS)
def test_a_typed_fields_answer_is_checked_as_the_checkout_checks_such_a_value(
    svc_http: FlaskClient,
    svc_sandbox: Sandbox,
    auth: dict[str, str],
    type_: str,
    answer: object,
    refusal: str | None,
) -> None:
    """An email, phone or number field took any text ("abc" for a number); now the answer
    must be one by the rule customer.email, customer.phone or a JSON number follows, and a
    refused one changes nothing."""
    product = create_product(svc_http, auth, status="published")["product"]["checkoutToken"]
    org = org_id(svc_sandbox)
    field = {"label": "Answer", "type": type_, "required": False, "productIds": [product]}
    field_id = svc_http.post(f"/_sandbox/orgs/{org}/checkout-fields", json=field).json["id"]  # type: ignore[index]
    body = {
        "productId": product,
        "customer": {"email": "a@b.co"},
        "collectedFields": {field_id: answer},
    }
    before = svc_sandbox.export()
    made = svc_http.post("/api/checkout", json=body, headers=auth)
    if refusal is None:
        assert made.status_code == 200, made.json
        return
    assert made.status_code == 400
    message = made.json["error"]  # type: ignore[index]
    assert message.startswith(f"collectedFields.{field_id} {refusal}"), message
    after = svc_sandbox.export()
    assert after["services"]["checkout"] == before["services"]["checkout"]
