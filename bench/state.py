"""State costs at 1k, 10k and 100k paid sessions: reset, export (and the part of it under the
lock), import. Usage:
    .venv/bin/python bench/state.py [sizes...]     (default: 1000 10000 100000)

Each figure is a ratio against a baseline taken in the same run (the machines are noisy):
* reset: against reset of a fresh sandbox (1.0 = flat, whatever the state size);
* export under the lock: against ``json.dumps`` of the same document (what encoding costs);
* export and import: against ``json.dumps`` / ``json.loads`` of the same document (the import
  of an already decoded document);
* the reference check (state_references.py): import with it against import without it
  (``--state-references skip``), in alternating rounds; and the check alone against that
  import without it.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from svc_sandbox import state_references
from svc_sandbox.commerce.schemas import CheckoutBody, CustomerBody, PriceBody, ProductCreateBody
from svc_sandbox.sandbox import Sandbox

#: The parts of a document that grow with sessions (cloned to scale a state up).
GROWING = (
    ("checkout", "sessions"),
    ("orders", "orders"),
    ("payments", "attempts"),
    ("events", "events"),
)
OBJECT_ID = re.compile(r"[0-9a-f]{24}")


def scaled(document: dict[str, Any], copies: int) -> dict[str, Any]:
    """``document`` with its session records repeated ``copies`` times under fresh ids (each
    copy renames every id of those records consistently; organizations, products and
    customers stay shared): a 100k-session state in seconds instead of building it."""
    services = document["services"]
    shared = {o["id"] for o in services["orgs"]["orgs"]}
    shared |= {p["id"] for p in services["products"]["products"]}
    shared |= {c["id"] for c in services["customers"]["customers"]}
    shared |= set(services["checkout"]["placeholders"].values())
    grown = json.loads(json.dumps(document))
    for copy in range(1, copies):
        prefix = f"{copy:06x}"

        def rename(match: re.Match[str], prefix: str = prefix) -> str:
            found = match.group(0)
            return found if found in shared else prefix + found[6:]

        for service, records in GROWING:
            text = OBJECT_ID.sub(rename, json.dumps(services[service][records]))
            grown["services"][service][records] += json.loads(text)
    return grown


def paid_sandbox(sessions: int) -> Sandbox:
    """A sandbox with ``sessions`` paid checkouts (session, order, attempt, events each)."""
    sandbox = Sandbox(clock_mode="frozen", seed=1, rate_limits=False)
    token = next(
        t["token"]
        for org in sandbox.info()["organizations"]
        if org["environment"] == "sandbox"
        for t in org["tokens"]
    )
    principal = sandbox.orgs.authenticate(token)
    product = sandbox.products.create(
        principal.org.id,
        ProductCreateBody(
            title="Book", pricingModel="fixed", price=PriceBody(amount=5000), status="published"
        ),
    )
    customer = CustomerBody(email="buyer@example.com", phone="0911223344")
    body = CheckoutBody(productId=product.id, customer=customer, gateway="telebirr")
    for _ in range(sessions):
        created = sandbox.checkout.create(principal, body)
        sandbox.payments.approve(created["sessionId"])
    return sandbox


#: Sessions made through the services; bigger states are copies of these (see ``scaled``).
BUILT = 1000


def best(action: Callable[[], Any], rounds: int = 5) -> float:
    """Median seconds of ``action`` over ``rounds`` runs."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(sizes: list[int]) -> None:
    fresh = Sandbox(clock_mode="frozen", seed=1)
    reset_fresh = best(fresh.reset, 21)
    print(f"baseline: reset of a fresh sandbox {reset_fresh * 1000:.3f} ms")
    print(
        f"{'sessions':>9} {'reset ms':>9} {'reset/fresh':>12} {'lock ms':>9} "
        f"{'lock/dumps':>11} {'export/dumps':>13} {'import/loads':>13} "
        f"{'checked/unchecked':>18} {'check/unchecked':>16}"
    )
    base = paid_sandbox(BUILT)
    template = base.export()
    for size in sizes:
        measure(size, scaled(template, max(1, size // BUILT)), reset_fresh)


def import_times(sandbox: Sandbox, encoded: str, rounds: int) -> tuple[float, float]:
    """Median seconds of an import with the reference check and without it, in alternating
    rounds (so drift of the machine hits both alike); each imports a fresh copy of the
    document, decoded outside the timer."""
    times: dict[str, list[float]] = {"check": [], "skip": []}
    for _ in range(rounds):
        for mode, taken in times.items():
            sandbox.settings.state_references = mode  # type: ignore[assignment]
            document = json.loads(encoded)
            started = time.perf_counter()
            sandbox.restore(document)
            taken.append(time.perf_counter() - started)
    sandbox.settings.state_references = "check"
    return statistics.median(times["check"]), statistics.median(times["skip"])


def measure(size: int, grown: dict[str, Any], reset_fresh: float) -> None:
    sandbox = Sandbox(clock_mode="frozen", seed=1)
    sandbox.restore(grown)
    document = sandbox.export()
    encoded = json.dumps(document)
    rounds = 3 if size < 50_000 else 1  # a 100k-session import takes a while
    dumps = best(lambda: json.dumps(document), rounds)
    loads = best(lambda: json.loads(encoded), rounds)
    under_lock = best(sandbox.snapshot, rounds)
    export = best(sandbox.export, rounds)
    imported, unchecked = import_times(sandbox, encoded, rounds + 2)
    check = best(lambda: state_references.check(document), rounds)
    resets = []
    for _ in range(rounds + 2):
        sandbox.restore(document)  # the big state back (not timed)
        started = time.perf_counter()
        sandbox.reset()
        resets.append(time.perf_counter() - started)
    reset = statistics.median(resets)
    print(
        f"{size:>9} {reset * 1000:>9.3f} {reset / reset_fresh:>12.2f} "
        f"{under_lock * 1000:>9.1f} {under_lock / dumps:>11.2f} {export / dumps:>13.2f} "
        f"{imported / loads:>13.2f} {imported / unchecked:>18.3f} {check / unchecked:>16.3f}"
    )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 10000, 100000])
