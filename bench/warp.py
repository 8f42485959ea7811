"""Clock warp: 24 h with N open checkout sessions whose webhook receiver answers 500.

Each session expires after 30 minutes (one ``checkout.session.expired`` event); each event is
delivered with every retry (1 + 5 attempts), all failing. Measured with an in-process receiver
(no socket) for 1k, 10k and 100k sessions (cost per session shows whether the warp is linear),
and over HTTP to a local keep-alive receiver, against plain POSTs of the same bytes in the same
run. Usage:
    .venv/bin/python bench/warp.py [--sessions 1000,10000,100000] [--http-sessions 2000]
"""

from __future__ import annotations

import argparse
import http.client
import json
import time
from datetime import timedelta
from typing import Any

from _receiver import receiving
from svc_sandbox.commerce.schemas import CheckoutBody
from svc_sandbox.sandbox import Sandbox

MAX_SESSIONS = 200_000


def open_sessions(sessions: int, url: str | None) -> Sandbox:
    sandbox = Sandbox(clock_mode="frozen", seed=1, rate_limits=False)
    org = sandbox.orgs.all()[0]
    if url is None:
        sandbox.add_webhook_receiver(org.id, lambda body, headers: 500)
    else:
        sandbox.webhook_endpoints.create(org.id, url)
    principal = sandbox.orgs.authenticate(sandbox.orgs.tokens_of(org.id)[0].token)
    body = CheckoutBody.model_validate({"amount": 500, "description": "warp"})
    for _ in range(sessions):
        sandbox.checkout.create(principal, body)
    return sandbox


def warp(sandbox: Sandbox) -> dict[str, float]:
    started, cpu = time.perf_counter(), time.process_time()
    sandbox.advance(timedelta(hours=24))
    elapsed = time.perf_counter() - started
    made = sandbox.deliveries.attempts_made
    return {
        "seconds": elapsed,
        # CPU time of this process: steadier than wall time on a loaded machine.
        "cpu_seconds": time.process_time() - cpu,
        "attempts": made,
        "attempts_per_s": made / elapsed,
    }


def plain_posts(host: str, port: int, body: bytes, count: int) -> float:
    """The baseline: the same bytes POSTed on one keep-alive connection, per second."""
    connection = http.client.HTTPConnection(host, port, timeout=10)
    started = time.perf_counter()
    for _ in range(count):
        connection.request(
            "POST", "/hooks", body=body, headers={"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        response.read()
    elapsed = time.perf_counter() - started
    connection.close()
    return count / elapsed


def run(sizes: list[int], http_sessions: int) -> dict[str, Any]:
    results: dict[str, Any] = {"inProcess": [], "http": None}
    for size in sizes:
        sandbox = open_sessions(size, None)
        figures = warp(sandbox)
        figures["sessions"] = size
        figures["us_per_session"] = figures["seconds"] / size * 1e6
        results["inProcess"].append(figures)
        print(json.dumps(figures), flush=True)
        del sandbox
    with receiving(500) as (url, port):
        sandbox = open_sessions(http_sessions, url)
        figures = warp(sandbox)
        body = sandbox.events.events[0].body()
        figures["plain_posts_per_s"] = plain_posts("127.0.0.1", port, body, 2000)
        figures["sessions"] = http_sessions
        figures["ratio"] = figures["attempts_per_s"] / figures["plain_posts_per_s"]
        results["http"] = figures
        print(json.dumps(figures), flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", default="1000,10000,100000")
    parser.add_argument("--http-sessions", type=int, default=2000)
    args = parser.parse_args()
    sizes = [max(1, min(int(s), MAX_SESSIONS)) for s in args.sessions.split(",")]
    run(sizes, max(1, min(args.http_sessions, MAX_SESSIONS)))


if __name__ == "__main__":
    main()
