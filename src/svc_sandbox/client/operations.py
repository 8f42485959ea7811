"""The commerce operations (spec §4) as requests to make: each function checks its arguments
(``ValueError`` naming the parameter) and returns the ``Call``, the same for the sync and the
async client, which only send it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from svc_sandbox.client import arguments as check
from svc_sandbox.client.models import (
    ArchivedProduct,
    Balance,
    CheckoutResult,
    CheckoutStatus,
    Order,
    Page,
    ProductListItem,
    ProductResponse,
    Withdrawal,
)

M = TypeVar("M", bound=BaseModel)

PRODUCT_STATUSES = ("draft", "published", "archived")
ORDER_STATUSES = ("pending", "paid", "failed")
WITHDRAWAL_STATUSES = ("pending", "reviewing", "approved", "rejected", "processing", "completed")


@dataclass(frozen=True)
class Call(Generic[M]):
    """One request: where to, what to send, and the model of a 2xx answer."""

    method: str
    path: str
    model: type[M]
    json_body: Any = None
    params: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: False: sent without the token (polling needs none).
    auth: bool = True
    #: Set when the call cannot go without a token: the ValueError's message.
    needs_token: str | None = None

    @property
    def where(self) -> str:
        """The operation as the spec names it, for error messages: ``GET /balance``."""
        return f"{self.method} {self.path}"


# --- products ---------------------------------------------------------------------------


def create_product(
    title: str,
    pricing_model: str,
    *,
    amount: int | None = None,
    minimum_amount: int | None = None,
    default_amount: int | None = None,
    description: str | None = None,
    media: list[str] | None = None,
    metadata: Mapping[str, str] | None = None,
    status: str | None = None,
) -> Call[ProductResponse]:
    """POST /products. ``amount`` is required for fixed, ``minimum_amount`` for pwyw; a price
    argument the pricing model does not take is a ValueError."""
    model = check.choice("pricing_model", pricing_model, ("fixed", "pwyw", "free"))
    if model == "fixed" and amount is None:
        raise ValueError("amount is required for a fixed product")
    if model == "pwyw" and minimum_amount is None:
        raise ValueError("minimum_amount is required for a pwyw product")
    body: dict[str, Any] = {
        "title": check.trimmed_text("title", title, 120),
        "pricingModel": model,
    }
    price = check.price_for(model, amount, minimum_amount, default_amount)
    if price:
        body["price"] = price
    body.update(_product_fields(description, media, metadata))
    if status is not None:
        body["status"] = check.choice("status", status, ("draft", "published"))
    return Call("POST", "/products", ProductResponse, json_body=body)


def list_products(
    *, page: int = 1, limit: int = 20, status: str | None = None
) -> Call[Page[ProductListItem]]:
    query = check.page_query(page, limit, status, PRODUCT_STATUSES)
    return Call("GET", "/products", Page[ProductListItem], params=query)


def get_product(product_id: str) -> Call[ProductResponse]:
    ref = check.product_ref("product_id", product_id)
    return Call("GET", f"/products/{ref}", ProductResponse)


def update_product(
    product_id: str,
    *,
    title: str | None = None,
    description: str | None = None,
    media: list[str] | None = None,
    metadata: Mapping[str, str] | None = None,
    status: str | None = None,
    amount: int | None = None,
    minimum_amount: int | None = None,
    default_amount: int | None = None,
) -> Call[ProductResponse]:
    """PATCH /products/{id}: sends only the arguments given (None means unchanged); with none,
    PATCH ``{}``, which answers the product as it stands (404 for an unknown one), as the
    API does."""
    ref = check.product_ref("product_id", product_id)
    body: dict[str, Any] = {}
    if title is not None:
        body["title"] = check.trimmed_text("title", title, 120)
    body.update(_product_fields(description, media, metadata))
    if status is not None:
        body["status"] = check.choice("status", status, PRODUCT_STATUSES)
    price = check.price(amount, minimum_amount, default_amount)
    if price:
        body["price"] = price
    return Call("PATCH", f"/products/{ref}", ProductResponse, json_body=body)


def archive_product(product_id: str) -> Call[ArchivedProduct]:
    ref = check.product_ref("product_id", product_id)
    return Call("DELETE", f"/products/{ref}", ArchivedProduct)


def _product_fields(
    description: str | None, media: list[str] | None, metadata: Mapping[str, str] | None
) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if description is not None:
        body["description"] = check.text("description", description, 0, 5000)
    if media is not None:
        body["media"] = check.media(media)
    if metadata is not None:
        body["metadata"] = check.string_map("metadata", metadata)
    return body


# --- checkout ---------------------------------------------------------------------------


def create_checkout(
    product_id: str,
    *,
    customer: Mapping[str, Any] | None = None,
    gateway: str | None = None,
    success_url: str | None = None,
    metadata: Mapping[str, str | int | float | bool] | None = None,
    amount: int | None = None,
    collected_fields: Mapping[str, Any] | None = None,
    checkout_link: str | None = None,
    description: str | None = None,
) -> Call[CheckoutResult]:
    """POST /checkout for a product (``amount`` only for pay-what-you-want). ``description``
    is sent as given: the service takes one only for a custom amount and answers 400 here
    (a front such as the tool server passes the caller's through, so the answer is the
    service's)."""
    body: dict[str, Any] = {"productId": check.product_ref("product_id", product_id)}
    if description is not None:
        body["description"] = description
    body.update(_checkout_fields(customer, gateway, success_url, metadata))
    if amount is not None:
        body["amount"] = check.integer("amount", amount)
    if collected_fields is not None:
        if not isinstance(collected_fields, Mapping):
            raise ValueError("collected_fields must be a mapping keyed by checkout-field id")
        body["collectedFields"] = dict(collected_fields)
    if checkout_link is not None:
        body["checkoutLink"] = check.pattern(
            "checkout_link",
            checkout_link,
            check.CHECKOUT_LINK,
            "a cl_... token (a string starting cl_)",
        )
    return Call("POST", "/checkout", CheckoutResult, json_body=body)


def create_custom_checkout(
    amount: int,
    description: str,
    *,
    customer: Mapping[str, Any] | None = None,
    gateway: str | None = None,
    success_url: str | None = None,
    metadata: Mapping[str, str | int | float | bool] | None = None,
) -> Call[CheckoutResult]:
    """POST /checkout for an arbitrary amount (needs a token; at least 100 santim)."""
    body: dict[str, Any] = {
        "amount": check.integer("amount", amount, minimum=100),
        "description": check.trimmed_text("description", description, 120),
    }
    body.update(_checkout_fields(customer, gateway, success_url, metadata))
    return Call(
        "POST",
        "/checkout",
        CheckoutResult,
        json_body=body,
        needs_token="token is required for a custom-amount checkout",
    )


def create_checkout_as_given(
    *,
    product_id: str | None = None,
    amount: Any = None,
    description: Any = None,
    customer: Mapping[str, Any] | None = None,
    gateway: Any = None,
    success_url: Any = None,
    metadata: Any = None,
    checkout_link: Any = None,
    collected_fields: Any = None,
) -> Call[CheckoutResult]:
    """POST /checkout with each argument given sent as it is, under its wire name, unchecked:
    for a front that passes its caller's arguments through (the tool server), so that every
    refusal is the service's own, worded as §7 words it (``create_checkout`` and
    ``create_custom_checkout`` check first, and say it in the client's words)."""
    given = {
        "productId": product_id,
        "amount": amount,
        "description": description,
        "customer": dict(customer) if customer is not None else None,
        "gateway": gateway,
        "successUrl": success_url,
        "metadata": metadata,
        "checkoutLink": checkout_link,
        "collectedFields": collected_fields,
    }
    body = {name: value for name, value in given.items() if value is not None}
    return Call("POST", "/checkout", CheckoutResult, json_body=body)


def _checkout_fields(
    customer: Mapping[str, Any] | None,
    gateway: str | None,
    success_url: str | None,
    metadata: Mapping[str, Any] | None,
) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if customer is not None:
        body["customer"] = check.customer(customer)
    if gateway is not None:
        body["gateway"] = check.gateway("gateway", gateway)
    if success_url is not None:
        body["successUrl"] = check.uri("success_url", success_url)
    if metadata is not None:
        body["metadata"] = check.string_map("metadata", metadata, scalars=True)
    return body


def get_checkout(session_id: str) -> Call[CheckoutStatus]:
    """GET /checkout/{sessionId} (needs no token)."""
    sid = check.hex_id("session_id", session_id)
    return Call("GET", f"/checkout/{sid}", CheckoutStatus, auth=False)


# --- orders, balance, withdrawals -------------------------------------------------------


def list_orders(*, page: int = 1, limit: int = 20, status: str | None = None) -> Call[Page[Order]]:
    query = check.page_query(page, limit, status, ORDER_STATUSES)
    return Call("GET", "/orders", Page[Order], params=query)


def get_balance() -> Call[Balance]:
    return Call("GET", "/balance", Balance)


def create_withdrawal(
    amount: int,
    gateway: str,
    account: str,
    *,
    idempotency_key: str | None = None,
) -> Call[Withdrawal]:
    """POST /withdrawals; a repeated ``idempotency_key`` returns the first withdrawal."""
    body = {
        "amount": check.integer("amount", amount, minimum=10000),
        "gateway": check.gateway("gateway", gateway),
        "account": check.phone("account", account),
    }
    headers: dict[str, str] = {}
    if idempotency_key is not None:
        headers["Idempotency-Key"] = check.idempotency_key(idempotency_key)
    return Call("POST", "/withdrawals", Withdrawal, json_body=body, headers=headers)


def list_withdrawals(
    *, page: int = 1, limit: int = 20, status: str | None = None
) -> Call[Page[Withdrawal]]:
    query = check.page_query(page, limit, status, WITHDRAWAL_STATUSES)
    return Call("GET", "/withdrawals", Page[Withdrawal], params=query)


def get_withdrawal(withdrawal_id: str) -> Call[Withdrawal]:
    wid = check.hex_id("withdrawal_id", withdrawal_id)
    return Call("GET", f"/withdrawals/{wid}", Withdrawal)
