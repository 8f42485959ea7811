"""Customers: the buyers a checkout names, upserted per organization and environment (§2)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.emails import email_key
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, snapshot


@dataclass
class Customer:
    id: str
    org_id: str
    environment: str
    email: str
    created_at: datetime
    updated_at: datetime
    name: str | None = None
    phone: str | None = None
    external_id: str | None = None

    def to_public(self) -> dict[str, Any]:
        return {"_id": self.id, "email": self.email, "name": self.name}


class CustomerService(Service):
    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        self.customers: dict[str, Customer] = {}

    @locked
    def upsert(
        self,
        org_id: str,
        environment: str,
        email: str,
        *,
        name: str | None = None,
        phone: str | None = None,
        external_id: str | None = None,
    ) -> Customer:
        """The organization's customer with this email (``email_key``: without case, in one
        Unicode form), created or updated: given fields overwrite, omitted ones are kept."""
        key = email_key(email)
        found = next(
            (
                c
                for c in self.customers.values()
                if c.org_id == org_id and c.environment == environment and email_key(c.email) == key
            ),
            None,
        )
        now = self.clock.now()
        if found is None:
            found = Customer(
                id=self.ids.object_id(self.customers),
                org_id=org_id,
                environment=environment,
                email=email,
                created_at=now,
                updated_at=now,
            )
            self.customers[found.id] = found
        for attr, value in (("name", name), ("phone", phone), ("external_id", external_id)):
            if value is not None:
                setattr(found, attr, value)
        found.updated_at = now
        return found

    @locked
    def get(self, customer_id: str) -> Customer | None:
        return self.customers.get(customer_id)

    @locked
    def list_for(self, org_id: str, environment: str) -> list[Customer]:
        return [
            c
            for c in self.customers.values()
            if c.org_id == org_id and c.environment == environment
        ]

    def export(self) -> dict[str, Any]:
        return {"customers": [snapshot(c) for c in self.customers.values()]}

    def restore(self, data: dict[str, Any]) -> None:
        self.customers = {c["id"]: from_json(Customer, c) for c in data["customers"]}
