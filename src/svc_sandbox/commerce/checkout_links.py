"""Checkout links (``cl_...``) and checkout-field definitions: the checkout configuration the
spec's dashboard creates; here the control plane creates them (§4 ``checkoutLink``,
``collectedFields``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from svc_sandbox.commerce.checkout_input import (
    CHECKOUT_LINK_PREFIX,
    check_email,
    normalize_phone,
    stringify,
)
from svc_sandbox.commerce.products import ProductService
from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import ValidationFailed, found
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, snapshot
from svc_sandbox.core.validation import one_of
from svc_sandbox.orgs.organizations import OrganizationService

FIELD_TYPES = ("text", "email", "phone", "number", "select")
FIELD_VALUE_MAX = 500
#: Choices of a ``select`` field, and products a field is shown for.
MAX_FIELD_OPTIONS = 100
MAX_FIELD_PRODUCTS = 100


@dataclass
class CheckoutLink:
    id: str
    org_id: str
    product_ids: list[str]
    created_at: datetime
    metadata: dict[str, str] = field(default_factory=dict)
    success_url: str | None = None
    active: bool = True
    name: str | None = None

    def includes(self, product_id: str) -> bool:
        return product_id in self.product_ids

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "organizationId": self.org_id,
            "name": self.name,
            "productIds": list(self.product_ids),
            "metadata": dict(self.metadata),
            "successUrl": self.success_url,
            "active": self.active,
            "createdAt": isoformat(self.created_at),
        }


@dataclass
class CheckoutField:
    id: str
    org_id: str
    label: str
    type: str
    required: bool
    created_at: datetime
    #: Products the field is asked on; empty means every product of the organization.
    product_ids: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)

    def applies_to(self, product_id: str) -> bool:
        return not self.product_ids or product_id in self.product_ids

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "organizationId": self.org_id,
            "label": self.label,
            "type": self.type,
            "required": self.required,
            "productIds": list(self.product_ids),
            "options": list(self.options),
            "createdAt": isoformat(self.created_at),
        }


#: A number field's answer: a decimal number, as a JSON number is written (no NaN or infinity).
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
NUMBER_MESSAGE = "must be a number"


def check_typed_answer(type_: str, text: str, name: str) -> None:
    """An email, phone or number field's answer by the rule the checkout applies to that
    kind of value (``customer.email``'s, ``customer.phone``'s three formats, a decimal
    number); a text field takes any text."""
    try:
        if type_ == "email":
            check_email(text)
        elif type_ == "phone":
            normalize_phone(text)
        elif type_ == "number" and not _NUMBER.fullmatch(text):
            raise ValueError(NUMBER_MESSAGE)
    except ValueError as problem:
        raise ValidationFailed(f"{name} {problem}") from None


def check_field_shape(type_: str, options: list[str]) -> list[str]:
    """A known type; a select field offers at least one option. The options as stored:
    trimmed as ``collect`` trims an answer (``" L "`` could never be chosen), none blank."""
    one_of(type_, FIELD_TYPES, "type")
    trimmed = [option.strip() for option in options]
    for index, option in enumerate(trimmed):
        if not option:
            raise ValidationFailed(f"options[{index}] must not be blank")
    if type_ == "select" and not trimmed:
        raise ValidationFailed("options is required for a select field")
    return trimmed


class CheckoutConfigService(Service):
    """Owns checkout links and checkout fields of every organization."""

    def __init__(
        self, ctx: ServiceContext, orgs: OrganizationService, products: ProductService
    ) -> None:
        super().__init__(ctx)
        self.orgs = orgs
        self.products = products
        self.links: dict[str, CheckoutLink] = {}
        self.fields: dict[str, CheckoutField] = {}

    def _product_ids(self, org_id: str, refs: list[str]) -> list[str]:
        """Product ids or ``p_`` tokens, each a product of the organization (400 otherwise)."""
        found = []
        for index, ref in enumerate(refs):
            product = self.products.find(ref)
            if product is None or product.org_id != org_id:
                raise ValidationFailed(f"productIds[{index}] is not a product of this organization")
            found.append(product.id)
        return found

    # --- links ---------------------------------------------------------------------------

    @locked
    def create_link(
        self,
        org_id: str,
        product_refs: list[str],
        *,
        metadata: dict[str, str] | None = None,
        success_url: str | None = None,
        active: bool = True,
        name: str | None = None,
    ) -> CheckoutLink:
        """A link for products of ``org_id`` (given as ids or ``p_`` tokens)."""
        self.orgs.get(org_id)
        product_ids = self._product_ids(org_id, product_refs)
        link = CheckoutLink(
            id=self.ids.secret(CHECKOUT_LINK_PREFIX, 20, self.links),
            org_id=org_id,
            product_ids=product_ids,
            created_at=self.clock.now(),
            metadata=dict(metadata or {}),
            success_url=success_url,
            active=active,
            name=name,
        )
        self.links[link.id] = link
        return link

    @locked
    def update_link(
        self,
        link_id: str,
        *,
        active: bool | None = None,
        metadata: dict[str, str] | None = None,
        success_url: str | None | bool = False,
        product_refs: list[str] | None = None,
    ) -> CheckoutLink:
        """Changes what is given; ``success_url=None`` removes it, ``False`` leaves it as is."""
        link = found(self.links.get(link_id), f"checkout link {link_id} not found")
        product_ids = None if product_refs is None else self._product_ids(link.org_id, product_refs)
        if active is not None:
            link.active = active
        if metadata is not None:
            link.metadata = dict(metadata)
        if not isinstance(success_url, bool):
            link.success_url = success_url
        if product_ids is not None:
            link.product_ids = product_ids
        return link

    @locked
    def links_of(self, org_id: str) -> list[CheckoutLink]:
        return [link for link in self.links.values() if link.org_id == org_id]

    @locked
    def applicable_link(self, ref: str | None, org_id: str, product_id: str) -> CheckoutLink | None:
        """The link when it is active, owned by ``org_id`` and includes the product; a stale
        or foreign token is ignored, never an error (§4)."""
        if ref is None:
            return None
        link = self.links.get(ref)
        if link is None or not link.active or link.org_id != org_id:
            return None
        return link if link.includes(product_id) else None

    # --- fields --------------------------------------------------------------------------

    @locked
    def create_field(
        self,
        org_id: str,
        label: str,
        type_: str = "text",
        *,
        required: bool = False,
        product_refs: list[str] | None = None,
        options: list[str] | None = None,
    ) -> CheckoutField:
        self.orgs.get(org_id)
        options = check_field_shape(type_, options or [])
        product_ids = self._product_ids(org_id, product_refs or [])
        checkout_field = CheckoutField(
            id=self.ids.secret("cf_", 16, self.fields),
            org_id=org_id,
            label=label,
            type=type_,
            required=required,
            created_at=self.clock.now(),
            product_ids=product_ids,
            options=options,
        )
        self.fields[checkout_field.id] = checkout_field
        return checkout_field

    @locked
    def update_field(
        self,
        field_id: str,
        *,
        label: str | None = None,
        type_: str | None = None,
        required: bool | None = None,
        product_refs: list[str] | None = None,
        options: list[str] | None = None,
    ) -> CheckoutField:
        """Changes what is given, all or nothing. Sessions keep the answers they collected: a
        change applies to the checkouts created after it."""
        definition = self.field(field_id)
        trimmed = check_field_shape(
            definition.type if type_ is None else type_,
            definition.options if options is None else options,
        )
        product_ids = (
            None if product_refs is None else self._product_ids(definition.org_id, product_refs)
        )
        if label is not None:
            definition.label = label
        if type_ is not None:
            definition.type = type_
        if required is not None:
            definition.required = required
        if product_ids is not None:
            definition.product_ids = product_ids
        if options is not None:
            definition.options = trimmed
        return definition

    @locked
    def delete_field(self, field_id: str) -> CheckoutField:
        """Removes a definition: later checkouts neither ask nor take it; sessions keep the
        answers they collected."""
        return self.fields.pop(self.field(field_id).id)

    @locked
    def field(self, field_id: str) -> CheckoutField:
        return found(self.fields.get(field_id), f"checkout field {field_id} not found")

    @locked
    def fields_of(self, org_id: str) -> list[CheckoutField]:
        return [f for f in self.fields.values() if f.org_id == org_id]

    @locked
    def collect(self, org_id: str, product_id: str, answers: dict[str, Any]) -> dict[str, str]:
        """Checks ``collectedFields`` against the organization's definitions for the product:
        known ids only, string/number/boolean values, select answers among the options, an
        email, phone or number field's answer one by the checkout's own rule for such a
        value, and every required field answered. Values are stored as strings, as sent."""
        fields = {f.id: f for f in self.fields_of(org_id) if f.applies_to(product_id)}
        stored: dict[str, str] = {}
        for field_id, value in answers.items():
            name = f"collectedFields.{field_id}"
            definition = fields.get(field_id)
            if definition is None:
                raise ValidationFailed(f"{name} is not a checkout field of this product")
            if not isinstance(value, str | int | float | bool):
                raise ValidationFailed(f"{name} must be a string, number or boolean")
            text = stringify(value).strip()
            if len(text) > FIELD_VALUE_MAX:
                raise ValidationFailed(f"{name} must be at most {FIELD_VALUE_MAX} characters")
            if definition.type == "select" and text:
                one_of(text, definition.options, name)
            elif text:
                check_typed_answer(definition.type, text, name)
            stored[field_id] = text
        for definition in fields.values():
            if definition.required and not stored.get(definition.id):
                raise ValidationFailed(
                    f"collectedFields.{definition.id} is required ({definition.label})"
                )
        return stored

    def export(self) -> dict[str, Any]:
        return {
            "links": [snapshot(link) for link in self.links.values()],
            "fields": [snapshot(f) for f in self.fields.values()],
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.links = {x["id"]: from_json(CheckoutLink, x) for x in data["links"]}
        self.fields = {x["id"]: from_json(CheckoutField, x) for x in data["fields"]}
