"""Costs that must not grow with the state (issue 9 §4), at 1k, 10k and 100k sessions:

* a poll (``GET /checkout/{id}``) of a session whose payment prompt is in flight,
* a product found by its ``p_`` token (``GET /products/{p_...}``),
* ``GET /_sandbox/clock`` and ``GET /_sandbox`` with one queued entry per session,
* the longest another request waits for the lock while one advance expires every session.

Each request cost is the median of repeated calls through the WSGI app (Flask test client);
each row also shows the ratio to the 1k row (1.00 = flat). Usage:
    .venv/bin/python bench/state_scaling.py [--sessions 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from datetime import timedelta
from typing import Any

from state import best  # bench/state.py: median seconds of a call
from svc_sandbox.app import create_app
from svc_sandbox.commerce.schemas import CheckoutBody, PayBody, ProductCreateBody
from svc_sandbox.sandbox import Sandbox

MAX_SESSIONS = 200_000
REPEAT = 200


def build(sessions: int) -> tuple[Sandbox, str, str, str]:
    """N link sessions each with a prompt in flight, and N products."""
    sandbox = Sandbox(clock_mode="frozen", seed=1, rate_limits=False)
    org = sandbox.orgs.all()[0]
    token = sandbox.orgs.tokens_of(org.id)[0].token
    principal = sandbox.orgs.authenticate(token)
    product_body = ProductCreateBody.model_validate(
        {"title": "Bench", "pricingModel": "fixed", "price": {"amount": 500}, "status": "published"}
    )
    checkout_body = CheckoutBody.model_validate({"amount": 500, "description": "scaling"})
    pay = PayBody.model_validate(
        {"gateway": "telebirr", "phone": "0911223344", "email": "buyer@example.com"}
    )
    session_id = product_token = ""
    for index in range(sessions):
        product = sandbox.products.create(org.id, product_body)
        created = sandbox.checkout.create(principal, checkout_body)
        sandbox.checkout.pay("cs_" + created["sessionId"], pay)
        if index == sessions // 2:
            session_id, product_token = created["sessionId"], product.checkout_token
    return sandbox, token, session_id, product_token


def timed(call: Any, repeat: int = REPEAT) -> float:
    """Median microseconds of one call."""
    return best(call, repeat) * 1e6


def longest_wait(sandbox: Sandbox) -> float:
    """Milliseconds another thread waited for the lock, at worst, during a 1 h advance."""
    waits: list[float] = []
    done = threading.Event()

    def other_request() -> None:
        while not done.is_set():  # ends with the advance below
            started = time.perf_counter()
            with sandbox.lock:
                waits.append(time.perf_counter() - started)
            time.sleep(0.0005)

    thread = threading.Thread(target=other_request)
    thread.start()
    try:
        sandbox.advance(timedelta(hours=1))
    finally:
        done.set()
        thread.join(timeout=60)
    return max(waits) * 1000


def measure(sessions: int) -> dict[str, float]:
    sandbox, token, session_id, product_token = build(sessions)
    client = create_app(sandbox).test_client()
    auth = {"Authorization": f"Bearer {token}"}

    def ok(response: Any) -> None:
        assert response.status_code == 200, response.json

    row = {
        "sessions": sessions,
        "poll_us": timed(lambda: ok(client.get(f"/api/checkout/{session_id}"))),
        "product_by_token_us": timed(
            lambda: ok(client.get(f"/api/products/{product_token}", headers=auth))
        ),
        "clock_us": timed(lambda: ok(client.get("/_sandbox/clock")), 50),
        "info_us": timed(lambda: ok(client.get("/_sandbox")), 50),
    }
    row["advance_longest_wait_ms"] = longest_wait(sandbox)
    return row


def run(sizes: list[int]) -> list[dict[str, float]]:
    rows = []
    for size in sizes:
        rows.append(measure(size))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", default="1000,10000,100000")
    args = parser.parse_args()
    run([max(1, min(int(s), MAX_SESSIONS)) for s in args.sessions.split(",")])


if __name__ == "__main__":
    main()
