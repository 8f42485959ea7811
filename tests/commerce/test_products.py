"""Products API, spec §2-§4: each rule of the tables, through HTTP."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from svc_sandbox.sandbox import Sandbox
from tests.helpers import create_product

PAGE_URL = "http://127.0.0.1:8700/p/"


# --- create ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pricing", "price", "expected_price"),
    [
        ("fixed", {"amount": 5000}, {"type": "fixed", "currency": "ETB", "amount": 5000}),
        (
            "pwyw",
            {"minimumAmount": 1000, "defaultAmount": 2500},
            {"type": "pwyw", "currency": "ETB", "minimumAmount": 1000, "defaultAmount": 2500},
        ),
        ("free", None, {"type": "free", "currency": "ETB", "amount": 0}),
    ],
)
def test_create_answers_201_product_response(
    svc_http: FlaskClient,
    auth: dict[str, str],
    pricing: str,
    price: dict[str, int] | None,
    expected_price: dict[str, Any],
) -> None:
    body: dict[str, Any] = {"title": "Course", "pricingModel": pricing}
    if price is not None:
        body["price"] = price
    response = svc_http.post("/api/products", json=body, headers=auth)
    assert response.status_code == 201
    result = response.json
    assert result is not None
    product = result["product"]
    assert len(product["_id"]) == 24 and int(product["_id"], 16) >= 0
    assert product["checkoutToken"].startswith("p_")
    assert product["status"] == "draft"  # §3: status omitted -> draft
    assert product["productType"] == "one_time"
    assert product["pricingModel"] == pricing
    assert result["price"] == expected_price
    assert result["url"] is None  # a draft has no public page


def test_published_product_url_is_product_page_of_its_token(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    result = create_product(svc_http, auth, status="published")
    token = result["product"]["checkoutToken"]
    assert result["url"] == f"{PAGE_URL}{token}"


@pytest.mark.parametrize("status", ["draft", "published"])
def test_create_with_given_status(svc_http: FlaskClient, auth: dict[str, str], status: str) -> None:
    assert create_product(svc_http, auth, status=status)["product"]["status"] == status


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"pricingModel": "fixed", "price": {"amount": 1}}, "title"),
        ({"title": "", "pricingModel": "fixed", "price": {"amount": 1}}, "title"),
        ({"title": "x" * 121, "pricingModel": "fixed", "price": {"amount": 1}}, "title"),
        ({"title": 7, "pricingModel": "fixed", "price": {"amount": 1}}, "title"),
        ({"title": "T"}, "pricingModel"),
        ({"title": "T", "pricingModel": "subscription"}, "pricingModel"),
        ({"title": "T", "pricingModel": "fixed"}, "price.amount"),
        ({"title": "T", "pricingModel": "fixed", "price": {"amount": -1}}, "price.amount"),
        ({"title": "T", "pricingModel": "fixed", "price": {"amount": 10.5}}, "price.amount"),
        ({"title": "T", "pricingModel": "fixed", "price": {"amount": "100"}}, "price.amount"),
        ({"title": "T", "pricingModel": "fixed", "price": {"amount": True}}, "price.amount"),
        ({"title": "T", "pricingModel": "pwyw"}, "price.minimumAmount"),
        (
            {
                "title": "T",
                "pricingModel": "pwyw",
                "price": {"minimumAmount": 500, "defaultAmount": 1},
            },
            "price.defaultAmount",
        ),
        (
            {"title": "T", "pricingModel": "free", "description": "d" * 5001},
            "description",
        ),
        ({"title": "T", "pricingModel": "free", "media": ["ftp://x"]}, "media[0]"),
        ({"title": "T", "pricingModel": "free", "metadata": {"k": 1}}, "metadata.k"),
        ({"title": "T", "pricingModel": "free", "metadata": {"k": {"a": "b"}}}, "metadata.k"),
        ({"title": "T", "pricingModel": "free", "status": "archived"}, "status"),
        ({"title": "T", "pricingModel": "free", "color": "red"}, "color"),
    ],
)
def test_create_validation_names_the_field_and_creates_nothing(
    svc_http: FlaskClient, auth: dict[str, str], body: dict[str, Any], field: str
) -> None:
    response = svc_http.post("/api/products", json=body, headers=auth)
    assert response.status_code == 400
    assert response.json is not None
    assert response.json["error"].startswith(field), response.json
    assert svc_http.get("/api/products", headers=auth).json["total"] == 0  # type: ignore[index]


@pytest.mark.parametrize(
    ("raw", "content_type", "status"),
    [
        ("{", "application/json", 400),
        ("[1, 2]", "application/json", 400),
        ('"title"', "application/json", 400),
        ("", "application/json", 400),
        ("title=x", "application/x-www-form-urlencoded", 415),
        ('{"title": "x"}', "text/plain", 415),
    ],
)
def test_malformed_or_wrongly_typed_bodies_are_refused(
    svc_http: FlaskClient, auth: dict[str, str], raw: str, content_type: str, status: int
) -> None:
    response = svc_http.post(
        "/api/products", data=raw, headers={**auth, "Content-Type": content_type}
    )
    assert response.status_code == status
    assert "error" in response.json  # type: ignore[operator]
    assert svc_http.get("/api/products", headers=auth).json["total"] == 0  # type: ignore[index]


# --- read ---------------------------------------------------------------------------------


def test_get_by_token_or_hex_id(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    created = create_product(svc_http, auth)["product"]
    by_id = svc_http.get(f"/api/products/{created['_id']}", headers=auth)
    by_token = svc_http.get(f"/api/products/{created['checkoutToken']}", headers=auth)
    assert by_id.status_code == by_token.status_code == 200
    assert by_id.json == by_token.json
    assert by_id.json["product"] == created  # type: ignore[index]


@pytest.mark.parametrize("ref", ["ABCDEF0123456789abcdef01", "123", "p_", "p_bad$char", "x" * 24])
def test_ids_of_the_wrong_shape_answer_400_naming_id(
    svc_http: FlaskClient, auth: dict[str, str], ref: str
) -> None:
    response = svc_http.get(f"/api/products/{ref}", headers=auth)
    assert response.status_code == 400
    assert response.json["error"].startswith("id ")  # type: ignore[index]


@pytest.mark.parametrize("ref", ["0123456789abcdef01234567", "p_doesNotExist"])
def test_unknown_product_is_404(svc_http: FlaskClient, auth: dict[str, str], ref: str) -> None:
    for method in ("get", "patch", "delete"):
        kwargs: dict[str, Any] = {"json": {"title": "x"}} if method == "patch" else {}
        response = getattr(svc_http, method)(f"/api/products/{ref}", headers=auth, **kwargs)
        assert response.status_code == 404
        assert set(response.json) == {"error"}


def test_another_organizations_product_is_indistinguishable_from_absent(
    svc_http: FlaskClient, auth: dict[str, str], live_auth: dict[str, str]
) -> None:
    theirs = create_product(svc_http, live_auth)["product"]
    absent = svc_http.get("/api/products/0123456789abcdef01234567", headers=auth)
    for ref in (theirs["_id"], theirs["checkoutToken"]):
        for method in ("get", "patch", "delete"):
            kwargs: dict[str, Any] = {"json": {"title": "x"}} if method == "patch" else {}
            response = getattr(svc_http, method)(f"/api/products/{ref}", headers=auth, **kwargs)
            assert (response.status_code, response.json) == (absent.status_code, absent.json)
    assert svc_http.get("/api/products", headers=auth).json["total"] == 0  # type: ignore[index]
    assert (
        svc_http.get(f"/api/products/{theirs['_id']}", headers=live_auth).json["product"]["title"]
        == "Book"
    )


def test_list_is_a_page_envelope_newest_first(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    from datetime import timedelta

    titles = []
    for n in range(5):
        titles.append(f"P{n}")
        create_product(svc_http, auth, title=f"P{n}")
        if n == 2:
            svc_sandbox.advance(timedelta(seconds=1))
    page = svc_http.get("/api/products?page=1&limit=2", headers=auth).json
    assert page is not None
    assert set(page) == {"items", "total", "page", "limit"}
    assert (page["total"], page["page"], page["limit"]) == (5, 1, 2)
    assert [p["title"] for p in page["items"]] == ["P4", "P3"]
    rest = svc_http.get("/api/products?page=2&limit=2", headers=auth).json
    last = svc_http.get("/api/products?page=3&limit=2", headers=auth).json
    assert [p["title"] for p in rest["items"]] == ["P2", "P1"]  # type: ignore[index]
    assert [p["title"] for p in last["items"]] == ["P0"]  # type: ignore[index]
    item = page["items"][0]
    assert {"price", "url", "_id", "checkoutToken"} <= set(item)


def test_list_defaults_to_page_1_limit_20(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    for n in range(21):
        create_product(svc_http, auth, title=f"P{n}")
    page = svc_http.get("/api/products", headers=auth).json
    assert (page["page"], page["limit"], len(page["items"]), page["total"]) == (1, 20, 20, 21)  # type: ignore[index]


@pytest.mark.parametrize("status", ["draft", "published", "archived"])
def test_list_filters_by_status(svc_http: FlaskClient, auth: dict[str, str], status: str) -> None:
    ids = {}
    for s in ("draft", "published"):
        ids[s] = create_product(svc_http, auth, status=s)["product"]["_id"]
    ids["archived"] = create_product(svc_http, auth)["product"]["_id"]
    svc_http.delete(f"/api/products/{ids['archived']}", headers=auth)
    page = svc_http.get(f"/api/products?status={status}", headers=auth).json
    assert [p["_id"] for p in page["items"]] == [ids[status]]  # type: ignore[index]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=abc", "page"),
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=2.5", "limit"),
        # The contract's integer: ASCII digits only (int() would take all of these).
        ("page=%201", "page"),
        ("limit=%2020", "limit"),
        ("page=+1", "page"),
        ("limit=1_0", "limit"),
        ("page=%D9%A1", "page"),  # ARABIC-INDIC DIGIT ONE
        ("status=deleted", "status"),
    ],
)
def test_bad_list_parameters_answer_400_naming_them(
    svc_http: FlaskClient, auth: dict[str, str], query: str, field: str
) -> None:
    response = svc_http.get(f"/api/products?{query}", headers=auth)
    assert response.status_code == 400
    assert response.json["error"].startswith(field)  # type: ignore[index]


def test_limit_100_is_accepted(svc_http: FlaskClient, auth: dict[str, str]) -> None:
    assert svc_http.get("/api/products?limit=100", headers=auth).json["limit"] == 100  # type: ignore[index]


# --- update -------------------------------------------------------------------------------


def test_update_changes_only_what_is_sent(
    svc_http: FlaskClient, auth: dict[str, str], svc_sandbox: Sandbox
) -> None:
    from datetime import timedelta

    created = create_product(svc_http, auth, description="old", metadata={"a": "1"})
    svc_sandbox.advance(timedelta(minutes=1))
    product_id = created["product"]["_id"]
    response = svc_http.patch(
        f"/api/products/{product_id}",
        json={"title": "New", "price": {"amount": 9900}, "status": "published"},
        headers=auth,
    )
    assert response.status_code == 200
    updated = response.json
    assert updated is not None
    assert updated["product"]["title"] == "New"
    assert updated["product"]["description"] == "old"
    assert updated["product"]["metadata"] == {"a": "1"}
    assert updated["price"]["amount"] == 9900
    assert updated["url"] is not None
    assert updated["product"]["updatedAt"] > created["product"]["updatedAt"]
    assert updated["product"]["createdAt"] == created["product"]["createdAt"]


@pytest.mark.parametrize("status", ["draft", "published", "archived"])
def test_any_status_may_follow_any(
    svc_http: FlaskClient, auth: dict[str, str], status: str
) -> None:
    for start in ("draft", "published"):
        product_id = create_product(svc_http, auth, status=start)["product"]["_id"]
        response = svc_http.patch(
            f"/api/products/{product_id}", json={"status": status}, headers=auth
        )
        assert response.json["product"]["status"] == status  # type: ignore[index]


@pytest.mark.parametrize(
    "body",
    [
        {"pricingModel": "pwyw"},
        {"productType": "subscription"},
        {"price": {"type": "free"}},
    ],
)
def test_changing_a_locked_field_answers_422_and_changes_nothing(
    svc_http: FlaskClient, auth: dict[str, str], body: dict[str, Any]
) -> None:
    product_id = create_product(svc_http, auth)["product"]["_id"]
    before = svc_http.get(f"/api/products/{product_id}", headers=auth).json
    response = svc_http.patch(
        f"/api/products/{product_id}", json={**body, "title": "Changed"}, headers=auth
    )
    assert response.status_code == 422
    assert set(response.json) == {"error"}  # type: ignore[arg-type]
    assert svc_http.get(f"/api/products/{product_id}", headers=auth).json == before


def test_sending_a_locked_field_unchanged_is_not_a_change(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    product_id = create_product(svc_http, auth)["product"]["_id"]
    response = svc_http.patch(
        f"/api/products/{product_id}",
        json={"pricingModel": "fixed", "productType": "one_time", "price": {"type": "fixed"}},
        headers=auth,
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("pricing", "price", "body", "field"),
    [
        ("pwyw", {"minimumAmount": 100}, {"price": {"amount": 5}}, "price.amount"),
        ("free", None, {"price": {"amount": 5}}, "price.amount"),
        ("fixed", {"amount": 100}, {"price": {"amount": -5}}, "price.amount"),
        ("pwyw", {"minimumAmount": 100}, {"price": {"defaultAmount": 5}}, "price.defaultAmount"),
        ("fixed", {"amount": 100}, {"title": "x" * 121}, "title"),
        ("fixed", {"amount": 100}, {"status": "deleted"}, "status"),
        ("fixed", {"amount": 100}, {"checkoutToken": "p_mine"}, "checkoutToken"),
    ],
)
def test_update_validation_answers_400_and_changes_nothing(
    svc_http: FlaskClient,
    auth: dict[str, str],
    pricing: str,
    price: dict[str, int] | None,
    body: dict[str, Any],
    field: str,
) -> None:
    fields: dict[str, Any] = {"pricingModel": pricing, "price": price}
    product_id = create_product(svc_http, auth, **fields)["product"]["_id"]
    before = svc_http.get(f"/api/products/{product_id}", headers=auth).json
    response = svc_http.patch(f"/api/products/{product_id}", json=body, headers=auth)
    assert response.status_code == 400
    assert response.json["error"].startswith(field)  # type: ignore[index]
    assert svc_http.get(f"/api/products/{product_id}", headers=auth).json == before


# --- price fields and the pricing model (one rule, on create and on update) ----------------

FIXED_ONLY = "price.amount can only be set on fixed products"
PWYW_MINIMUM = "price.minimumAmount can only be set on pwyw products"
PWYW_DEFAULT = "price.defaultAmount can only be set on pwyw products"
#: A product of each model and a price field it does not take (its Price never shows it).
FOREIGN_FIELDS = [
    ("free", None, {"amount": 999}, FIXED_ONLY),
    ("free", None, {"amount": 0, "minimumAmount": 100}, PWYW_MINIMUM),
    ("free", None, {"defaultAmount": 100}, PWYW_DEFAULT),
    ("pwyw", {"minimumAmount": 100}, {"minimumAmount": 100, "amount": 999}, FIXED_ONLY),
    ("pwyw", {"minimumAmount": 100}, {"minimumAmount": 100, "amount": 0}, FIXED_ONLY),
    ("fixed", {"amount": 500}, {"amount": 500, "minimumAmount": 100}, PWYW_MINIMUM),
    ("fixed", {"amount": 500}, {"amount": 500, "defaultAmount": 50}, PWYW_DEFAULT),
]
FOREIGN_IDS = [
    f"{model} " + " ".join(f"{k}={v}" for k, v in sent.items())
    for model, _, sent, _ in FOREIGN_FIELDS
]


@pytest.mark.parametrize("action", ["create", "update"])
@pytest.mark.parametrize(("pricing", "valid", "price", "message"), FOREIGN_FIELDS, ids=FOREIGN_IDS)
def test_a_price_field_the_pricing_model_does_not_take_is_refused(
    svc_http: FlaskClient,
    auth: dict[str, str],
    action: str,
    pricing: str,
    valid: dict[str, int] | None,
    price: dict[str, int],
    message: str,
) -> None:
    """One rule on create and update. It was not: create dropped such fields (a "free"
    product sent with price.amount 999 was created free and published), update refused
    price.amount but dropped a fixed product's minimumAmount (200, nothing changed)."""
    if action == "create":
        path, method = "/api/products", "post"
        body = {"title": "Ebook", "pricingModel": pricing, "price": price, "status": "published"}
    else:
        created = create_product(svc_http, auth, pricingModel=pricing, price=valid)
        path, method = f"/api/products/{created['product']['_id']}", "patch"
        body = {"price": price}
    before = svc_http.get("/_sandbox/state").data
    response = getattr(svc_http, method)(path, json=body, headers=auth)
    assert response.status_code == 400
    assert response.json == {"error": message}
    assert svc_http.get("/_sandbox/state").data == before


@pytest.mark.parametrize(
    ("pricing", "price"),
    [
        ("fixed", {"amount": 500}),
        ("pwyw", {"minimumAmount": 100}),
        ("pwyw", {"minimumAmount": 100, "defaultAmount": 250}),
        ("free", None),
    ],
)
def test_a_price_echoed_back_is_accepted_on_update_and_create(
    svc_http: FlaskClient, auth: dict[str, str], pricing: str, price: dict[str, int] | None
) -> None:
    """PriceInput takes `type` and `currency` so that a client can send a Price back: the
    whole Price, a free product's `amount` 0 included (that PATCH was a 400)."""
    created = create_product(svc_http, auth, pricingModel=pricing, price=price)
    shown = created["price"]
    path = f"/api/products/{created['product']['_id']}"
    response = svc_http.patch(path, json={"price": shown, "title": "Renamed"}, headers=auth)
    assert response.status_code == 200, response.json
    assert response.json["price"] == shown  # type: ignore[index]
    assert response.json["product"]["title"] == "Renamed"  # type: ignore[index]
    again = create_product(svc_http, auth, pricingModel=pricing, price=shown)
    assert again["price"] == shown


# --- archive --------------------------------------------------------------------------------


def test_delete_archives_and_answers_product_and_url(
    svc_http: FlaskClient, auth: dict[str, str]
) -> None:
    product_id = create_product(svc_http, auth, status="published")["product"]["_id"]
    response = svc_http.delete(f"/api/products/{product_id}", headers=auth)
    assert response.status_code == 200
    assert set(response.json) == {"product", "url"}  # type: ignore[arg-type]
    assert response.json["product"]["status"] == "archived"  # type: ignore[index]
    assert response.json["url"] is None  # type: ignore[index]
    listed = svc_http.get("/api/products?status=archived", headers=auth).json
    assert listed["total"] == 1  # type: ignore[index]
