"""Products: create, list, get, update, archive (spec §2 Product/Price, §3, §4)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from svc_sandbox.commerce.schemas import PriceBody, ProductCreateBody, ProductUpdateBody
from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import NotFound, Unprocessable, ValidationFailed
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, snapshot
from svc_sandbox.core.validation import optional_one_of

PRODUCT_REF = re.compile(r"^(p_[A-Za-z0-9_-]+|[0-9a-f]{24})$")
STATUSES = ("draft", "published", "archived")


@dataclass(slots=True)
class Product:
    id: str
    org_id: str
    checkout_token: str
    title: str
    pricing_model: str
    status: str
    created_at: datetime
    updated_at: datetime
    description: str | None = None
    media: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    amount: int | None = None
    minimum_amount: int | None = None
    default_amount: int | None = None
    seq: int = 0

    @property
    def published(self) -> bool:
        return self.status == "published"

    def to_public(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "_id": self.id,
            "checkoutToken": self.checkout_token,
            "title": self.title,
            "pricingModel": self.pricing_model,
            "productType": "one_time",
            "status": self.status,
            "media": list(self.media),
            "metadata": dict(self.metadata),
            "createdAt": isoformat(self.created_at),
            "updatedAt": isoformat(self.updated_at),
        }
        if self.description is not None:
            body["description"] = self.description
        return body

    def price(self) -> dict[str, Any]:
        return price_view(self.pricing_model, self.amount, self.minimum_amount, self.default_amount)


def price_view(
    pricing_model: str, amount: int | None, minimum: int | None, default: int | None
) -> dict[str, Any]:
    """The Price a product of ``pricing_model`` shows (a free one: ``amount`` 0)."""
    price: dict[str, Any] = {"type": pricing_model, "currency": "ETB"}
    if pricing_model == "fixed":
        price["amount"] = amount
    elif pricing_model == "pwyw":
        price["minimumAmount"] = minimum
        if default is not None:
            price["defaultAmount"] = default
    else:
        price["amount"] = 0
    return price


def validate_product_ref(ref: str, field_name: str = "id") -> str:
    if not PRODUCT_REF.match(ref):
        raise ValidationFailed(f"{field_name} must be a p_ token or 24 lowercase hex characters")
    return ref


#: A price's field names in a request body (``price.amount``) and in a record (an import).
REQUEST_PRICE = {
    "amount": "price.amount",
    "minimum": "price.minimumAmount",
    "default": "price.defaultAmount",
}
RECORD_PRICE = {"amount": "amount", "minimum": "minimum_amount", "default": "default_amount"}

#: The price fields (request names) each pricing model takes: §4 "`amount` for fixed products
#: only"; a pwyw product has a minimum and a default; a free one none.
PRICE_FIELDS: dict[str, tuple[str, ...]] = {
    "fixed": ("amount",),
    "pwyw": ("minimumAmount", "defaultAmount"),
    "free": (),
}


def foreign_price_field(pricing_model: str, price: PriceBody) -> str | None:
    """The one rule, on create and update, for a price field that ``pricing_model`` does not
    take: refused, naming it, unless it holds what the product's own Price shows for that
    field (an echo of the Price: a free product's ``amount`` 0). Silently dropping it hid a
    client's mistake (a "free" product sent with a price)."""
    shown = price_view(pricing_model, None, None, None)
    for name in ("amount", "minimumAmount", "defaultAmount"):
        value = getattr(price, name)
        if value is None or name in PRICE_FIELDS[pricing_model] or shown.get(name) == value:
            continue
        takers = " or ".join(m for m, names in PRICE_FIELDS.items() if name in names)
        return f"price.{name} can only be set on {takers} products"
    return None


def price_problem(
    pricing_model: str,
    amount: int | None,
    minimum: int | None,
    default: int | None,
    names: dict[str, str],
) -> str | None:
    """What a price of ``pricing_model`` lacks or breaks, in ``names``' words, or None: a
    fixed price has an amount, pay-what-you-want a minimum, and a default not below it."""
    if pricing_model == "fixed" and amount is None:
        return f"{names['amount']} is required for fixed products"
    if pricing_model == "pwyw" and minimum is None:
        return f"{names['minimum']} is required for pwyw products"
    if minimum is not None and default is not None and default < minimum:
        return f"{names['default']} must be at least {names['minimum']}"
    return None


class ProductService(Service):
    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        self.products: dict[str, Product] = {}
        #: Derived index: ``p_`` checkout token -> product id (tokens never change; rebuilt
        #: on import; the first product holding a token wins, as a scan would find it).
        self._by_token: dict[str, str] = {}
        self._seq = 0

    @locked
    def create(self, org_id: str, body: ProductCreateBody) -> Product:
        price = body.price or PriceBody()
        self._check_price_type(body.pricingModel, price)
        problem = foreign_price_field(body.pricingModel, price) or price_problem(
            body.pricingModel, price.amount, price.minimumAmount, None, REQUEST_PRICE
        )
        if problem:
            raise ValidationFailed(problem)
        self._pwyw_bounds(body.pricingModel, None, None, price)  # refuse before drawing ids
        now = self.clock.now()
        self._seq += 1
        product = Product(
            id=self.ids.object_id(self.products),
            org_id=org_id,
            checkout_token=self.ids.product_token(self._by_token),
            title=body.title,
            pricing_model=body.pricingModel,
            status=body.status,
            created_at=now,
            updated_at=now,
            description=body.description,
            media=list(body.media or []),
            metadata=dict(body.metadata or {}),
            seq=self._seq,
        )
        self._apply_price(product, price)
        self.products[product.id] = product
        self._by_token.setdefault(product.checkout_token, product.id)
        return product

    @locked
    def get(self, org_id: str, ref: str) -> Product:
        """A product of ``org_id`` by id or ``p_`` token; another organization's is absent."""
        product = self.find(validate_product_ref(ref))
        if product is None or product.org_id != org_id:
            raise NotFound("Product not found")
        return product

    @locked
    def find(self, ref: str) -> Product | None:
        if ref.startswith("p_"):
            product_id = self._by_token.get(ref)
            return None if product_id is None else self.products.get(product_id)
        return self.products.get(ref)

    @locked
    def list_for(self, org_id: str, status: str | None = None) -> list[Product]:
        optional_one_of(status, STATUSES, "status")
        found = [
            p
            for p in self.products.values()
            if p.org_id == org_id and (status is None or p.status == status)
        ]
        return sorted(found, key=lambda p: (p.created_at, p.seq), reverse=True)

    @locked
    def update(self, org_id: str, ref: str, body: ProductUpdateBody) -> Product:
        product = self.get(org_id, ref)
        self._check_locked(product, body)
        changes = body.model_dump(exclude_unset=True)
        if body.price is not None:
            problem = foreign_price_field(product.pricing_model, body.price)
            if problem:
                raise ValidationFailed(problem)
            self._apply_price(product, body.price)
        for name, attr in (("title", "title"), ("description", "description")):
            if name in changes:
                setattr(product, attr, changes[name])
        if "media" in changes:
            product.media = list(body.media or [])
        if "metadata" in changes:
            product.metadata = dict(body.metadata or {})
        if body.status is not None:
            product.status = body.status
        product.updated_at = self.clock.now()
        return product

    @locked
    def archive(self, org_id: str, ref: str) -> Product:
        product = self.get(org_id, ref)
        product.status = "archived"
        product.updated_at = self.clock.now()
        return product

    def url_of(self, product: Product, product_page_url: str) -> str | None:
        """The public page, which only a published product has."""
        return f"{product_page_url}/{product.checkout_token}" if product.published else None

    @staticmethod
    def _check_price_type(pricing_model: str, price: PriceBody) -> None:
        if price.type is not None and price.type != pricing_model:
            raise ValidationFailed("price.type must equal pricingModel")

    @staticmethod
    def _check_locked(product: Product, body: ProductUpdateBody) -> None:
        if body.pricingModel is not None and body.pricingModel != product.pricing_model:
            raise Unprocessable("pricingModel is locked after creation")
        if body.productType is not None and body.productType != "one_time":
            raise Unprocessable("productType is locked")
        if body.price is not None and body.price.type not in (None, product.pricing_model):
            raise Unprocessable("price.type is locked after creation")

    @staticmethod
    def _pwyw_bounds(
        pricing_model: str, minimum: int | None, default: int | None, price: PriceBody
    ) -> tuple[int | None, int | None]:
        """The pwyw minimum and default after ``price`` applies to the current ones; the
        default may not be below the minimum."""
        if pricing_model != "pwyw":
            return minimum, default
        if price.minimumAmount is not None:
            minimum = price.minimumAmount
        if price.defaultAmount is not None:
            default = price.defaultAmount
        problem = price_problem("pwyw", None, minimum, default, REQUEST_PRICE)
        if problem:
            raise ValidationFailed(problem)
        return minimum, default

    @classmethod
    def _apply_price(cls, product: Product, price: PriceBody) -> None:
        """Checks the whole price first and only then writes it, so a refusal changes nothing."""
        if product.pricing_model == "pwyw":
            product.minimum_amount, product.default_amount = cls._pwyw_bounds(
                "pwyw", product.minimum_amount, product.default_amount, price
            )
        elif product.pricing_model == "fixed" and price.amount is not None:
            product.amount = price.amount

    def export(self) -> dict[str, Any]:
        return {"seq": self._seq, "products": [snapshot(p) for p in self.products.values()]}

    def restore(self, data: dict[str, Any]) -> None:
        self._seq = data["seq"]
        self.products = {p["id"]: from_json(Product, p) for p in data["products"]}
        self._by_token = {}
        for product in self.products.values():
            self._by_token.setdefault(product.checkout_token, product.id)
