"""Referential integrity of a state document (``PUT /_sandbox/state``, ``serve --state``).

state_format.py checks each record's shape; this module checks that every id a record holds
names a record of the document: an order's session, a delivery's event, a scheduler entry's
withdrawal. A document that fails is refused whole (a 400 naming the path of the dangling
field and the id), so nothing answers 404 or skips work later because of it.

``REFERENCES`` is the one table of the references between records. A reference the emulator
itself can leave dangling (retention pruned the event, the endpoint was deleted) is allowed,
exactly there, with the reason beside it: any export of a live sandbox must import again.

A reference marked ``same_org`` must also stay within one organization: an order of one
organization naming another's checkout session, or a delivery another's event, is refused
the same way (the emulator never makes one: every record it creates for an organization
names only that organization's records).

The check is linear in the document: the ids of each target kind (with their organization)
are collected once into a dict, then every reference is one lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from svc_sandbox.commerce.checkout import EXPIRE
from svc_sandbox.commerce.payments import DECIDE, NOTIFY
from svc_sandbox.commerce.payouts import COMPLETE, PROCESS
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.validation import shown
from svc_sandbox.webhooks.delivery import ATTEMPT_KIND

#: Target kinds, by the name a refusal gives them (``TARGETS`` says where their ids are).
ORGANIZATION = "organization"
PRODUCT = "product"
PRODUCT_OR_PLACEHOLDER = "product or placeholder product"
CUSTOMER = "customer"
SESSION = "checkout session"
ORDER = "order"
LINK = "checkout link"
ATTEMPT = "payment attempt"
WITHDRAWAL = "withdrawal"
EVENT = "event"
ENDPOINT = "webhook endpoint"
DELIVERY = "webhook delivery"
USER = "user"
APP = "OAuth app"
GRANT = "grant"
TRANSFER = "wallet transfer"

Services = dict[str, Any]


#: Each id of a target kind, with the organization that owns the record (None: not owned).
Owners = dict[str, str | None]


def _ids(section: str, records: str, key: str = "id") -> Callable[[Services], Owners]:
    return lambda services: {r[key]: r.get("org_id") for r in services[section][records]}


def _products_and_placeholders(services: Services) -> Owners:
    # A custom-amount checkout (no productId) names its organization's placeholder product id,
    # drawn once per organization and kept in ``checkout.placeholders``, never a product record.
    owners = _ids("products", "products")(services)
    placeholders = services["checkout"]["placeholders"]
    return owners | {product: org for org, product in placeholders.items()}


TARGETS: dict[str, Callable[[Services], Owners]] = {
    ORGANIZATION: _ids("orgs", "orgs"),
    PRODUCT: _ids("products", "products"),
    PRODUCT_OR_PLACEHOLDER: _products_and_placeholders,
    CUSTOMER: _ids("customers", "customers"),
    SESSION: _ids("checkout", "sessions"),
    ORDER: _ids("orders", "orders"),
    LINK: _ids("checkoutConfig", "links"),
    ATTEMPT: _ids("payments", "attempts"),
    WITHDRAWAL: _ids("payouts", "withdrawals"),
    EVENT: _ids("events", "events"),
    ENDPOINT: _ids("webhookEndpoints", "endpoints"),
    DELIVERY: _ids("webhookDeliveries", "deliveries"),
    USER: _ids("users", "users"),
    APP: _ids("oauthApps", "apps", "client_id"),
    GRANT: _ids("tokens", "grants"),
    TRANSFER: _ids("wallets", "transfers"),
}


def _settled(record: dict[str, Any]) -> bool:
    return bool(record.get("status", "pending") != "pending")


@dataclass(frozen=True)
class Reference:
    """One field that holds the id of another record.

    ``records`` is where the referring records are: ``services.<service>.<list>`` (each item a
    record), ``scheduler.entries@<kind>`` (the entries of one kind), or a dict/list of ids
    itself with ``field`` ``"{key}"`` (each key) or ``"[]"`` (each item). ``field`` is the
    record's field; ``name[]`` is each item of a list field; ``payload.x`` a nested field.
    ``nullable``: null or absent means "none" (else it is a dangling reference too).
    ``word``: the key is words split by spaces and the id is this one (consents' keys).
    ``dangles``: when the emulator itself leaves this reference dangling, and so an import must
    take it (``True``: always; a callable: for the records it says yes for).
    ``same_org``: the record and the one it names (when the document holds it) belong to the
    same organization.
    """

    records: str
    field: str
    target: str
    nullable: bool = False
    word: int | None = None
    dangles: bool | Callable[[dict[str, Any]], bool] = False
    same_org: bool = False

    def allows(self, record: Any) -> bool:
        if callable(self.dangles):
            return isinstance(record, dict) and self.dangles(record)
        return self.dangles


R = Reference
#: Every reference between records of the export format. A new id field in a record (or a
#: new record kind) that points at another record gets its row here.
REFERENCES: tuple[Reference, ...] = (
    # organizations and their parts
    R("services.orgs.tokens", "org_id", ORGANIZATION),
    R("services.products.products", "org_id", ORGANIZATION),
    R("services.customers.customers", "org_id", ORGANIZATION),
    R("services.checkoutConfig.links", "org_id", ORGANIZATION),
    R("services.checkoutConfig.links", "product_ids[]", PRODUCT, same_org=True),
    R("services.checkoutConfig.fields", "org_id", ORGANIZATION),
    R("services.checkoutConfig.fields", "product_ids[]", PRODUCT, same_org=True),
    R("services.checkout.placeholders", "{key}", ORGANIZATION),
    # checkout, payments, orders
    R("services.checkout.sessions", "org_id", ORGANIZATION),
    R("services.checkout.sessions", "product_id", PRODUCT_OR_PLACEHOLDER, same_org=True),
    R("services.checkout.sessions", "customer_id", CUSTOMER, nullable=True, same_org=True),
    R("services.checkout.sessions", "checkout_link", LINK, nullable=True, same_org=True),
    R("services.checkout.sessions", "order_id", ORDER, nullable=True, same_org=True),
    R("services.payments.attempts", "session_id", SESSION, same_org=True),
    R("services.payments.attempts", "org_id", ORGANIZATION),
    R("services.orders.orders", "org_id", ORGANIZATION),
    R("services.orders.orders", "checkout_session_id", SESSION, same_org=True),
    R("services.orders.orders", "product_id", PRODUCT_OR_PLACEHOLDER, same_org=True),
    R("services.orders.orders", "customer_id", CUSTOMER, nullable=True, same_org=True),
    R("services.notificationFaults.rules", "org_id", ORGANIZATION, nullable=True),
    # The control plane takes a rule for a session id that is not open yet (ids are
    # predictable under a seed), so the rule waits for it: a session rule may name no session.
    R("services.notificationFaults.rules", "session_id", SESSION, nullable=True, dangles=True),
    R("services.latencyFaults.rules", "org_id", ORGANIZATION, nullable=True),
    # payouts
    R("services.payouts.withdrawals", "org_id", ORGANIZATION),
    R("services.payouts.keys", "org_id", ORGANIZATION),
    R("services.payouts.keys", "withdrawal_id", WITHDRAWAL, same_org=True),
    R("services.payouts.ownerWalletShort", "[]", ORGANIZATION),
    # webhooks
    R("services.events.events", "org_id", ORGANIZATION),
    R("services.webhookEndpoints.endpoints", "org_id", ORGANIZATION),
    R("services.webhookDeliveries.deliveries", "org_id", ORGANIZATION),
    # A pending delivery holds its event against retention; a settled one does not, and
    # --events-kept may then drop the event (GET .../deliveries still lists the delivery).
    R("services.webhookDeliveries.deliveries", "event_id", EVENT, dangles=_settled, same_org=True),
    # Deleting an endpoint keeps its deliveries (their history; a pending one settles as
    # "endpoint_deleted" at its next attempt).
    R(
        "services.webhookDeliveries.deliveries",
        "endpoint_id",
        ENDPOINT,
        dangles=True,
        same_org=True,
    ),
    # The original of a redelivery is any delivery of the event, and --deliveries-kept may
    # drop it once settled.
    R(
        "services.webhookDeliveries.deliveries",
        "redelivery_of",
        DELIVERY,
        nullable=True,
        dangles=True,
        same_org=True,
    ),
    # The attempt journal (--webhook-attempts-kept) outlives what it names: settled
    # deliveries pruned by --deliveries-kept, events by --events-kept, deleted endpoints.
    R("services.webhookDeliveries.attempts", "delivery_id", DELIVERY, dangles=True, same_org=True),
    R("services.webhookDeliveries.attempts", "event_id", EVENT, dangles=True, same_org=True),
    R("services.webhookDeliveries.attempts", "endpoint_id", ENDPOINT, dangles=True, same_org=True),
    R("services.webhookDeliveries.attempts", "org_id", ORGANIZATION),
    R("services.webhookDeliveries.due", "delivery_id", DELIVERY),
    # the scheduler's work: each kind's payload names the record it works on
    R(f"scheduler.entries@{EXPIRE}", "payload.sessionId", SESSION),
    R(f"scheduler.entries@{DECIDE}", "payload.attemptId", ATTEMPT),
    R(f"scheduler.entries@{NOTIFY}", "payload.attemptId", ATTEMPT),
    R(f"scheduler.entries@{ATTEMPT_KIND}", "payload.deliveryId", DELIVERY),
    R(f"scheduler.entries@{PROCESS}", "payload.withdrawalId", WITHDRAWAL),
    R(f"scheduler.entries@{COMPLETE}", "payload.withdrawalId", WITHDRAWAL),
    # identity
    R("services.oauthApps.apps", "org_id", ORGANIZATION),
    R("services.oauthApps.seededSecrets", "{key}", APP),
    R("services.tokens.grants", "user_id", USER),
    R("services.tokens.grants", "client_id", APP),
    R("services.tokens.access", "grant_id", GRANT),
    R("services.tokens.access", "client_id", APP),
    R("services.tokens.access", "user_id", USER),
    R("services.tokens.refresh", "grant_id", GRANT),
    R("services.tokens.refresh", "client_id", APP),
    R("services.tokens.refresh", "user_id", USER),
    R("services.authorizations.codes", "client_id", APP),
    R("services.authorizations.codes", "user_id", USER),
    R("services.authorizations.codes", "grant_id", GRANT, nullable=True),
    R("services.authorizations.consents", "{key}", USER, word=0),
    R("services.authorizations.consents", "{key}", APP, word=1),
    R("services.browserSessions.sessions", "user_id", USER),
    # wallet
    R("services.wallets.entries", "user_id", USER),
    R("services.wallets.entries", "transfer_id", TRANSFER, nullable=True),
    R("services.wallets.transfers", "sender_id", USER),
    R("services.wallets.transfers", "recipient_id", USER),
    R("services.wallets.transfers", "client_id", APP),
)


def _walk(document: dict[str, Any], where: str) -> Any:
    node: Any = document
    for part in where.split("."):
        node = node[part]
    return node


def _found(document: dict[str, Any], ref: Reference) -> Iterator[tuple[str, Any, Any]]:
    """Each ``(path, id, record)`` the reference holds in ``document``."""
    where, _, kind = ref.records.partition("@")
    container = _walk(document, where)
    if ref.field == "{key}":
        for key in container:
            value = key
            if ref.word is not None:
                words = key.split(" ")
                value = words[ref.word] if ref.word < len(words) else None
            yield f"{where}[{shown(key)}]", value, None
        return
    if ref.field == "[]":
        for index, value in enumerate(container):
            yield f"{where}[{index}]", value, None
        return
    *parents, name = ref.field.split(".")
    each = name.endswith("[]")
    name = name.removesuffix("[]")
    for index, record in enumerate(container):
        if kind and record["kind"] != kind:
            continue
        holder = record
        for parent in parents:
            holder = holder[parent]
        path = f"{where}[{index}].{ref.field.removesuffix('[]')}"
        value = holder.get(name)
        if each:
            for item_index, item in enumerate(value or []):
                yield f"{path}[{item_index}]", item, record
        else:
            yield path, value, record


def check(document: dict[str, Any]) -> None:
    """Raises ValidationFailed naming the first reference of ``document`` (already valid
    against state_format) whose id names no record of its target kind; then, once every
    reference names a record, the first ``same_org`` one naming another organization's."""
    services = document["services"]
    known: dict[str, Owners] = {}

    def owners_of(target: str) -> Owners:
        if target not in known:
            known[target] = TARGETS[target](services)
        return known[target]

    for ref in REFERENCES:
        if ref.dangles is True:
            continue  # in the table to say so; nothing to look up
        owners = owners_of(ref.target)
        for path, value, record in _found(document, ref):
            if value is None and ref.nullable:
                continue
            if value in owners or ref.allows(record):
                continue
            raise ValidationFailed(
                f"state document: {path} is {shown(value)}, which names no {ref.target} of the "
                "document (every reference must name a record of the import)"
            )
    for ref in REFERENCES:
        if not ref.same_org:
            continue
        owners = owners_of(ref.target)
        for path, value, record in _found(document, ref):
            owner = owners.get(value) if value is not None else None
            holder = record.get("org_id") if record is not None else None
            if owner is not None and holder is not None and owner != holder:
                raise ValidationFailed(
                    f"state document: {path} is {shown(value)}, a {ref.target} of organization "
                    f"{owner}, but the record belongs to organization {holder} (a record "
                    "names only records of its own organization)"
                )
