"""What each dashboard section shows, read from the Sandbox's services (no Flask).

Each function takes the Sandbox and returns plain values for one template; amounts are shown
exactly in ETB (santim kept) with ``money``. The actions on these pages call the control plane
(docs/control-plane.md), so a person and a test drive the same Sandbox methods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from svc_sandbox.commerce.checkout import LINK_MODES
from svc_sandbox.commerce.payments import PROVIDER_FAILURE_CODES
from svc_sandbox.commerce.products import Product
from svc_sandbox.contract.document import BY_NAME
from svc_sandbox.control.schemas import JournalQuery
from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.errors import NotFound, ValidationFailed
from svc_sandbox.core.journal import EVERY_ENTRY, JOURNAL_ENTRIES
from svc_sandbox.core.validation import parse, query_integer
from svc_sandbox.identity.users import KYC_STATUSES
from svc_sandbox.pages.views import money
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.wallet.ledger import Transfer

#: The sections, in the order of the navigation: (path, title).
SECTIONS: tuple[tuple[str, str], ...] = (
    ("", "Overview"),
    ("products", "Products"),
    ("checkouts", "Checkouts"),
    ("orders", "Orders"),
    ("payouts", "Balance & withdrawals"),
    ("webhooks", "Webhooks"),
    ("identity", "Users & apps"),
    ("wallets", "Wallets"),
    ("clock", "Clock"),
    ("requests", "Requests"),
    ("conformance", "Conformance"),
)

#: The clock's one-click steps (label, duration for POST /_sandbox/clock/advance).
CLOCK_STEPS = (("+1 min", "1m"), ("+30 min", "30m"), ("+1 h", "1h"), ("+1 day", "1d"))

#: How many of each wallet's transfers and ledger entries its section shows (newest first).
WALLET_ROWS = 10

#: How many rows a list shows (newest first); the control plane's JSON has every row.
ROWS = 200


def org_names(sb: Sandbox) -> dict[str, str]:
    return {o.id: o.name for o in sb.orgs.all()}


def overview(sb: Sandbox) -> dict[str, Any]:
    with sb.lock:
        orgs = []
        for org in sb.orgs.all():
            orgs.append(
                {
                    **org.to_public(),
                    "tokens": [t.to_public() for t in sb.orgs.tokens_of(org.id)],
                }
            )
        return {
            "clock": sb.clock.describe(),
            "roots": sb.settings.roots(),
            "seed": sb.settings.seed,
            "state_seed": sb.ids.seed,
            "orgs": orgs,
            "counts": {
                "products": len(sb.products.products),
                "checkouts": len(sb.checkout.sessions),
                "orders": len(sb.orders.orders),
                "events": len(sb.events.events),
                "scheduled": len(sb.scheduler.pending()),
            },
        }


def price_text(product: Product) -> str:
    """A product's price in the list: a pay-what-you-want one shows its minimum, "from" it."""
    price = product.price()
    if product.pricing_model == "pwyw":
        return f"from {money(price.get('minimumAmount') or 0)}"
    return money(price.get("amount") or 0)


def products(sb: Sandbox) -> dict[str, Any]:
    with sb.lock:
        names = org_names(sb)
        page_root = sb.settings.root("product_page_url")
        rows = []
        for product in sorted(sb.products.products.values(), key=lambda p: p.created_at):
            rows.append(
                {
                    **product.to_public(),
                    "organization": names.get(product.org_id, product.org_id),
                    "price": price_text(product),
                    "pageUrl": sb.products.url_of(product, page_root),
                }
            )
        return {
            "products": rows[-ROWS:][::-1],
            "total": len(rows),
            "createUrl": sb.settings.root("base_url") + "/products",
            "listUrl": sb.settings.root("base_url"),
        }


def session_row(sb: Sandbox, session_id: str) -> dict[str, Any]:
    described = sb.checkout.describe(session_id)
    session = sb.checkout.get(session_id)
    return {
        **described,
        "amountText": money(session.amount),
        "simulateUrl": sb.checkout.simulator_page(session),  # None: not the simulator's
        "isLink": session.mode in LINK_MODES,
        # Any prompt out (a link's attempt, a direct push, the simulator's): the poll's
        # ``attempt`` says it for payment links only (spec §2).
        "promptOut": sb.payments.in_flight_of(session.id) is not None,
    }


def checkouts(sb: Sandbox) -> dict[str, Any]:
    with sb.lock:
        names = org_names(sb)
        newest = sorted(sb.checkout.sessions.values(), key=lambda s: s.created_at)[-ROWS:][::-1]
        rows = [session_row(sb, s.id) for s in newest]
        for row in rows:
            row["organization"] = names.get(row["organizationId"], row["organizationId"])
        return {"sessions": rows, "total": len(sb.checkout.sessions)}


def checkout_detail(sb: Sandbox, session_id: str) -> dict[str, Any]:
    with sb.lock:
        row = session_row(sb, session_id)
        row["events"] = [e.envelope() for e in sb.events.query(session_id=session_id)]
        return timed(sb, {"session": row, "failure_codes": PROVIDER_FAILURE_CODES})


def orders(sb: Sandbox) -> dict[str, Any]:
    with sb.lock:
        names = org_names(sb)
        found = [o for org in sb.orgs.all() for o in sb.orders.list_for(org.id)]
        found.sort(key=lambda o: (o.created_at, o.seq), reverse=True)
        rows = [
            {
                **o.to_public(),
                "organization": names.get(o.org_id, o.org_id),
                "amountText": money(o.amount),
            }
            for o in found[:ROWS]
        ]
        return {"orders": rows, "total": len(found), "listUrl": sb.settings.root("base_url")}


def payouts(sb: Sandbox) -> dict[str, Any]:
    with sb.lock:
        names = org_names(sb)
        balances = []
        for org in sb.orgs.all():
            balance = sb.payouts.balance(org.id)
            balances.append(
                {
                    "organization": org.name,
                    "organizationId": org.id,
                    "environment": org.environment.value,
                    "eligible": balance.eligible,
                    "balance": money(balance.balance_minor),
                }
            )
        rows = []
        for w in sb.payouts.list_for(None)[:ROWS]:
            rows.append(
                {
                    **w.to_public(),
                    "organization": names.get(w.org_id, w.org_id),
                    "amountText": money(w.amount),
                    "feeText": money(w.fee_amount),
                    "taxText": money(w.tax_amount),
                    "netText": money(w.net_amount),
                }
            )
        return {"balances": balances, "withdrawals": rows}


def webhooks(sb: Sandbox) -> dict[str, Any]:
    with sb.lock:
        names = org_names(sb)
        endpoints = [
            {**e.to_public(), "organization": names.get(e.org_id, e.org_id)}
            for e in sb.webhook_endpoints.list_for()
        ]
        all_events = sb.events.query()
        all_deliveries = sb.deliveries.query({})
        all_attempts = sb.deliveries.query_attempts({})
        events = [
            {**e.envelope(), "organization": names.get(e.org_id, e.org_id)}
            for e in all_events[-ROWS:][::-1]
        ]
        return {
            "endpoints": endpoints,
            "events": events,
            "deliveries": [d.to_public() for d in all_deliveries[-ROWS:][::-1]],
            "attempts": [a.to_public() for a in all_attempts[-ROWS:][::-1]],
            "totals": {
                "events": len(all_events),
                "deliveries": len(all_deliveries),
                "attempts": len(all_attempts),
            },
            "fault": sb.deliveries.fault.to_public(),
            "backlog": sb.deliveries.backlog(),
            "orgs": names,
        }


def identity(sb: Sandbox) -> dict[str, Any]:
    """The identity provider's users (with their sandbox passwords), apps and signing keys."""
    with sb.lock:
        names = org_names(sb)
        apps = [
            {**a.to_public(), "organization": names.get(a.org_id, a.org_id)}
            for a in sb.oauth_apps.all()
        ]
        return {
            "issuer": sb.settings.issuer,
            "users": [u.to_public() for u in sb.users.all()],
            "apps": apps,
            "keys": [k.to_public() for k in sb.signing_keys.keys],
            "kyc_statuses": KYC_STATUSES,
        }


def transfer_row(transfer: Transfer, user_id: str, handles: dict[str, str]) -> dict[str, Any]:
    """A transfer as one wallet sees it: sent or received, and the other user's handle."""
    sent = transfer.sender_id == user_id
    other = transfer.recipient_id if sent else transfer.sender_id
    return {
        **transfer.to_control(),
        "amountText": money(transfer.amount),
        "direction": "sent" if sent else "received",
        "counterparty": handles.get(other, other),
    }


def wallets(sb: Sandbox) -> dict[str, Any]:
    """Each user's wallet: balances, and its newest transfers and ledger entries (the control
    plane's GET /_sandbox/wallets/<user>/transfers and /ledger have them all)."""
    with sb.lock:
        handles = {u.id: u.handle for u in sb.users.all()}
        rows = []
        for user in sb.users.all():
            balance = sb.wallets.balance(user.id)
            transfers = sb.wallets.transfers_of(user.id)[-WALLET_ROWS:][::-1]
            entries = sb.wallets.ledger(user.id)[-WALLET_ROWS:][::-1]
            rows.append(
                {
                    "userId": user.id,
                    "handle": user.handle,
                    "name": user.name,
                    "available": money(balance.available),
                    "total": money(balance.total),
                    "transfers": [transfer_row(t, user.id, handles) for t in transfers],
                    "ledger": [{**e.to_public(), "amountText": money(e.amount)} for e in entries],
                }
            )
        return {"wallets": rows, "rows": WALLET_ROWS}


def clock(sb: Sandbox) -> dict[str, Any]:
    with sb.lock:
        return {
            "clock": sb.clock.describe(),
            "steps": CLOCK_STEPS,
            "scheduled": [e.to_json() for e in sb.scheduler.pending()],
        }


#: What a journal entry may hold beyond its line, as the Requests page labels it.
REQUEST_DETAILS = (
    ("query", "Query"),
    ("authorization", "Authorization"),
    ("idempotencyKey", "Idempotency-Key"),
    ("svcKey", "X-Svc-Key"),
    ("delaySeconds", "Delayed (seconds)"),
    ("contentType", "Content-Type"),
    ("form", "Form"),
    ("body", "Body"),
    ("bodyBase64", "Body (base64)"),
)


def requests(
    sb: Sandbox, asked: dict[str, str] | None = None, refused: str | None = None
) -> dict[str, Any]:
    """The journal's newest entries matching the filter ``asked`` (the page's query: method,
    status, path; docs/control-plane.md), each with its kept details; a filter refused (here,
    or ``refused`` as the query was read) is said beside the form, with nothing listed."""
    asked = asked or {}
    view: dict[str, Any] = {"asked": asked, "refusal": refused, "requests": []}
    if refused is not None:
        return view
    try:
        query = parse(JournalQuery, asked)
        only, limit = query.only(), query_integer(query.limit, "limit", ROWS, JOURNAL_ENTRIES)
    except ValidationFailed as refusal:
        view["refusal"] = refusal.message
        return view
    for entry in sb.journal.recent(limit, only):
        shown = [(label, entry[name]) for name, label in REQUEST_DETAILS if name in entry]
        view["requests"].append({**entry, "details": shown})
    view["filtered"] = only != EVERY_ENTRY
    view["total"] = sb.journal.count(only)
    return view


def conformance(sb: Sandbox) -> dict[str, Any]:
    """Each contract's conformance report (commerce, identity, wallet), by its ``?contract=``
    name on the control plane."""
    return {"reports": [(name, sb.recorders[doc].report()) for name, doc in BY_NAME.items()]}


#: Each section's view, by its path under /_sandbox/ui (Requests has its own route: it reads
#: the page's query).
VIEWS: dict[str, Callable[[Sandbox], dict[str, Any]]] = {
    "": overview,
    "products": products,
    "checkouts": checkouts,
    "orders": orders,
    "payouts": payouts,
    "webhooks": webhooks,
    "identity": identity,
    "wallets": wallets,
    "clock": clock,
    "conformance": conformance,
}


def section(sb: Sandbox, name: str) -> dict[str, Any]:
    """The view of one section; an unknown section is a 404 (the dashboard's 404 page)."""
    view = VIEWS.get(name)
    if view is None:
        raise NotFound(f"No dashboard section {name!r}")
    return timed(sb, view(sb))


def timed(sb: Sandbox, view: dict[str, Any]) -> dict[str, Any]:
    """A page's view with the sandbox time its footer shows (every page's layout has one)."""
    return {**view, "now": isoformat(sb.now())}
