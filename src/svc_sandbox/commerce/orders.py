"""Orders: what a paid (or failed) checkout leaves behind (spec §2 Order).

The checkout module creates and moves orders; this module owns their storage, their
wire shape and the earnings they add up to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import found
from svc_sandbox.core.lifecycle import Lifecycle, Transition
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, snapshot
from svc_sandbox.core.validation import optional_one_of

ORDER_STATUSES = ("pending", "paid", "failed")
CUSTOM_PAYMENT_TITLE = "Custom payment"

#: The order model (spec §3 "Transitions: not shown"; see docs/spec-gaps.md, Orders).
ORDER_LIFECYCLE = Lifecycle(
    "order",
    [
        Transition("none", "pending", "first payment prompt of a paid checkout session"),
        Transition("none", "paid", "checkout of a free product"),
        Transition("pending", "paid", "the provider approves a prompt"),
        Transition("pending", "failed", "a direct push fails, or the session expires unpaid"),
    ],
)


@dataclass(slots=True)
class Order:
    id: str
    org_id: str
    environment: str
    checkout_session_id: str
    product_id: str
    product_title: str
    amount: int
    status: str
    created_at: datetime
    customer_id: str | None = None
    customer_email: str | None = None
    customer_name: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    description: str | None = None
    paid_at: datetime | None = None
    customer_external_id: str | None = None
    collected_fields: dict[str, str] = field(default_factory=dict)
    seq: int = 0

    def to_public(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "_id": self.id,
            "checkoutSessionId": self.checkout_session_id,
            "productId": {"_id": self.product_id, "title": self.product_title},
            "customerId": None
            if self.customer_id is None
            else {
                "_id": self.customer_id,
                "email": self.customer_email,
                "name": self.customer_name,
            },
            "amount": self.amount,
            "currency": "ETB",
            "status": self.status,
            "environment": self.environment,
            "metadata": dict(self.metadata),
            "paidAt": None if self.paid_at is None else isoformat(self.paid_at),
            "createdAt": isoformat(self.created_at),
        }
        if self.description is not None:
            body["description"] = self.description
        if self.collected_fields:
            body["collectedFields"] = dict(self.collected_fields)
        return body


class OrderService(Service):
    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        self.orders: dict[str, Order] = {}
        self._seq = 0

    @locked
    def add(self, order: Order) -> Order:
        self._seq += 1
        order.seq = self._seq
        self.orders[order.id] = order
        return order

    @locked
    def get(self, order_id: str) -> Order:
        return found(self.orders.get(order_id), f"order {order_id} not found")

    @locked
    def move(self, order: Order, target: str) -> Order:
        """Moves an order along ORDER_LIFECYCLE; paying stamps ``paidAt``."""
        ORDER_LIFECYCLE.move(order, target)
        if target == "paid":
            order.paid_at = self.clock.now()
        return order

    @locked
    def list_for(
        self, org_id: str, status: str | None = None, environment: str | None = None
    ) -> list[Order]:
        optional_one_of(status, ORDER_STATUSES, "status")
        found = [
            o
            for o in self.orders.values()
            if o.org_id == org_id
            and (status is None or o.status == status)
            and (environment is None or o.environment == environment)
        ]
        return sorted(found, key=lambda o: (o.created_at, o.seq), reverse=True)

    @locked
    def paid_total(self, org_id: str, environment: str) -> int:
        """What the organization's paid orders in ``environment`` add up to (its earnings)."""
        return sum(
            o.amount
            for o in self.orders.values()
            if o.org_id == org_id and o.environment == environment and o.status == "paid"
        )

    def export(self) -> dict[str, Any]:
        return {"seq": self._seq, "orders": [snapshot(o) for o in self.orders.values()]}

    def restore(self, data: dict[str, Any]) -> None:
        self._seq = data["seq"]
        self.orders = {o["id"]: from_json(Order, o) for o in data["orders"]}
