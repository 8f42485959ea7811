"""What the hosted pages show, built from the services (no Flask): plain dicts for templates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from svc_sandbox.commerce.checkout import LINK_MODES, CheckoutSession
from svc_sandbox.commerce.checkout_input import MAX_AMOUNT, check_pwyw_bounds
from svc_sandbox.commerce.failures import FAILURE_MESSAGES
from svc_sandbox.commerce.payments import PROVIDER_FAILURE_CODES
from svc_sandbox.commerce.products import Product
from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.errors import NotFound, ValidationFailed
from svc_sandbox.core.numbers import ASCII_WHITESPACE, decimal_text
from svc_sandbox.exposure import origin_of
from svc_sandbox.sandbox import Sandbox

GATEWAYS = ("telebirr", "mpesa", "cbe")
GATEWAY_NAMES = {"telebirr": "telebirr", "mpesa": "M-Pesa", "cbe": "CBE Birr"}


def money(amount: int) -> str:
    """Santim as the buyer reads it: ``5000`` -> ``50.00 ETB``, ``-150`` -> ``-1.50 ETB`` (a
    ledger's debits are negative)."""
    sign = "-" if amount < 0 else ""
    return f"{sign}{abs(amount) // 100:,}.{abs(amount) % 100:02d} ETB"


def santim(etb: str, field: str = "amount") -> int:
    """A form's ETB figure (``50`` or ``50.25``) in santim; 400 naming the field otherwise,
    worded in ETB as the form asks."""
    # ASCII decimal only (core/numbers.py): ``٥٠``, ``5_0`` or ``5e1`` is no amount; the
    # spaces a browser or a hand may leave around the figure are not part of it.
    etb_value = decimal_text(etb.strip(ASCII_WHITESPACE))
    if etb_value is None:
        raise ValidationFailed(f"{field} must be an amount in ETB such as 50.00")
    value = etb_value * 100
    if value != value.to_integral_value():
        raise ValidationFailed(f"{field} must have at most two decimals")
    # Before int(): 1e999997 would be a million-digit integer (seconds of CPU).
    if abs(value) > MAX_AMOUNT:
        raise ValidationFailed(f"{field} must be at most {money(MAX_AMOUNT)}")
    return int(value)


def pwyw_santim(product: Product, etb: str) -> int:
    """The product page's amount of a pay-what-you-want product: santim, checked against the
    product's minimum with the figures in ETB (the service words them in santim)."""
    amount = santim(etb)
    check_pwyw_bounds(amount, product.minimum_amount or 0, money)
    return amount


def session_view(sb: Sandbox, session: CheckoutSession) -> dict[str, Any]:
    """The pay and simulator pages' view of a session (settled first, as a poll would)."""
    with sb.lock:
        sb.checkout.settle(session.id)
        status = sb.checkout.status_of(session)
        in_flight = sb.payments.in_flight_of(session.id)
        return {
            "id": session.id,
            "pay_token": session.pay_token,
            "title": session.title,
            "product_title": session.product_title,
            "description": session.description,
            "amount": money(session.amount),
            "status": session.status,
            "environment": session.environment,
            "mode": session.mode.value,
            "is_link": session.mode in LINK_MODES,
            "expires_at": isoformat(session.expires_at),
            # For a person: the API's timestamp (milliseconds, a "Z") was easy to misread.
            "expires_text": f"{session.expires_at:%d %b %Y, %H:%M} UTC",
            "needs_email": session.customer_id is None,
            "gateway": session.gateway,
            "phone": session.phone,
            "in_flight": in_flight is not None,
            "in_flight_phone": in_flight.phone if in_flight else None,
            "simulate_url": sb.checkout.simulator_waiting(session),
            "pay_url": f"{sb.settings.root('pay_url')}/{session.pay_token}",
            "provider_url": f"{sb.settings.root('provider_url')}/{session.id}",
            "last_failure": status.get("attempt", {}).get("lastFailure"),
            "failure": status["failure"],
            "order_id": status["orderId"],
            "success_url": session.success_url,
            "gateways": GATEWAYS,
            "gateway_names": GATEWAY_NAMES,
            "poll_url": poll_url(sb, session.id),
            "failure_codes": [(c, FAILURE_MESSAGES[c]) for c in PROVIDER_FAILURE_CODES],
            "triggers": trigger_list(sb, session.environment),
        }


def thanked_order(sb: Sandbox, token: str, order_id: str) -> dict[str, Any]:
    """What the thank-you page of a buy with nothing to pay shows: the order, when it is a
    paid order of the product behind ``token``; else 404, as for an unknown order."""
    with sb.lock:
        product = sb.products.find(token)
        order = sb.orders.get(order_id)
        if product is None or order.product_id != product.id or order.status != "paid":
            raise NotFound(f"order {order_id} not found")
        return {"orderId": order.id}


def poll_url(sb: Sandbox, session_id: str) -> str:
    """The session the waiting pages poll (GET {base_url}/checkout/{id}). A path when the API
    is served on the pages' own origin: a page opened through another name of this server
    (``localhost`` for ``127.0.0.1``) then polls its own origin, which CORS would refuse it
    for the roots' name."""
    url = f"{sb.settings.root('base_url')}/checkout/{session_id}"
    page_roots = (sb.settings.root("pay_url"), sb.settings.root("provider_url"))
    origin = origin_of(url)
    return urlsplit(url).path if all(origin_of(r) == origin for r in page_roots) else url


def trigger_list(sb: Sandbox, environment: str) -> list[dict[str, Any]]:
    """The trigger registry's entries of one environment (GET /_sandbox/triggers), as the
    simulator page lists them."""
    return [t for t in sb.triggers.registry() if t["environment"] == environment]


def nothing_to_pay(product: Product, amount: int | None) -> bool:
    """Whether the product page's checkout charges nothing (``amount``: a pwyw buyer's, in
    santim): a free product, a fixed price of 0, a pwyw amount of 0. The checkout then gives
    the order at once (no prompt), so the page neither asks for nor checks a phone."""
    if product.pricing_model == "pwyw":
        return amount == 0
    return not product.amount


def product_view(sb: Sandbox, product: Product) -> dict[str, Any]:
    fields = [f.to_public() for f in sb.checkout_config.fields_of(product.org_id)]
    default = product.default_amount or product.minimum_amount or 0
    simulated = sb.orgs.get(product.org_id).environment == "sandbox"
    may_be_free = product.pricing_model == "pwyw" and not product.minimum_amount
    return {
        "token": product.checkout_token,
        "title": product.title,
        "description": product.description,
        "pricing_model": product.pricing_model,
        # Nothing to pay (free, or a fixed price of 0): the page reads as a free product's.
        "free": nothing_to_pay(product, None),
        # A pwyw minimum of 0: the buyer may pay nothing, and then needs no phone.
        "may_be_free": may_be_free,
        # A sandbox product's checkout goes to the simulator, not the provider's page.
        "simulated": simulated,
        "phone_hint": phone_hint(simulated, may_be_free),
        "price": money(product.amount or 0) if product.pricing_model == "fixed" else None,
        "minimum": money(product.minimum_amount or 0),
        "default_etb": f"{default // 100}.{default % 100:02d}",
        "media": list(product.media),
        "fields": [f for f in fields if not f["productIds"] or product.id in f["productIds"]],
    }


def phone_hint(simulated: bool, may_be_free: bool) -> str | None:
    """The product page's hint under its phone input: when a phone is needed at all, and that
    the provider's page asks again (the simulator asks for none: the page's closing hint says
    where Buy leads)."""
    parts = ["only to pay an amount above 0"] if may_be_free else []
    if not simulated:
        parts.append("you can also enter it on the next page")
    return ("; ".join(parts) + ".").capitalize() if parts else None


def field_labels(view: dict[str, Any]) -> dict[str, str]:
    """The product page's checkout-field inputs and their labels (``field_errors``)."""
    return {f"field_{f['id']}": f["label"] for f in view["fields"]}


def field_errors(
    message: str, names: list[str], labels: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Which form field an error names, so the page shows it next to that field, worded for
    the buyer reading it there.

    The service's messages start with the field's path (``phone must be ...``,
    ``customer.email must ...``, ``collectedFields.<id> is required (<label>)``); the form's
    input for ``customer.email`` is ``email`` and for ``collectedFields.<id>`` it is
    ``field_<id>``. Beside its field, a message names the field by its label when ``labels``
    has one (a checkout field's id means nothing to a buyer), else by the path's last part.
    An error naming no field of the form gives ``{}`` (the page shows it above the form).
    """
    path, _, rest = message.partition(" ")
    name = path
    for prefix, replacement in (("customer.", ""), ("collectedFields.", "field_")):
        if name.startswith(prefix):
            name = replacement + name[len(prefix) :]
    if name not in names:
        return {}
    label = (labels or {}).get(name)
    if label is None:
        return {name: f"{path.rpartition('.')[2]} {rest}"}
    return {name: f"{label} {rest.removesuffix(f' ({label})')}"}
