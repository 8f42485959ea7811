"""Webhook delivery throughput: signed deliveries per second to a local receiver.

The sandbox (frozen clock) emits N events, then one flush sends them one at a time over real
HTTP, recording each attempt. The baseline in the same run: N plain POSTs of the same bytes
to the same receiver with http.client, one connection each (as the sender does). Rounds
alternate; only the ratio means anything on a noisy machine. Usage:
    .venv/bin/python bench/webhook_delivery.py [events per round] [rounds]
"""

from __future__ import annotations

import http.client
import statistics
import sys
import time
from datetime import timedelta

from _receiver import receiving
from svc_sandbox.sandbox import Sandbox

MAX_EVENTS = 5000


def sandbox_round(url: str, count: int) -> tuple[float, bytes]:
    sandbox = Sandbox(clock_mode="frozen", seed=1, port=0)
    org = sandbox.orgs.all()[0]
    sandbox.webhook_endpoints.create(org.id, url, secret="whsec_bench")
    for _ in range(count):
        sandbox.events.trigger(org.id, "sandbox", "order.completed")
    started = time.perf_counter()
    sandbox.advance(timedelta(0))
    elapsed = time.perf_counter() - started
    made = sandbox.deliveries.attempts
    assert len(made) == count and all(a.succeeded for a in made), "a delivery failed"
    return elapsed, sandbox.events.events[0].body()


def baseline_round(host: str, port: int, body: bytes, count: int) -> float:
    headers = {"Content-Type": "application/json"}
    started = time.perf_counter()
    for _ in range(count):
        connection = http.client.HTTPConnection(host, port, timeout=10)
        connection.request("POST", "/hooks", body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        assert response.status == 200
        connection.close()
    return time.perf_counter() - started


def main(count: int = 300, rounds: int = 5) -> None:
    count = max(1, min(count, MAX_EVENTS))
    ours, base = [], []
    with receiving(200) as (url, port):
        for _ in range(rounds):
            elapsed, body = sandbox_round(url, count)
            ours.append(count / elapsed)
            base.append(count / baseline_round("127.0.0.1", port, body, count))
    ours_median, base_median = statistics.median(ours), statistics.median(base)
    print(f"events per round: {count}, rounds: {rounds}")
    print(f"sandbox webhook deliveries  median {ours_median:8.0f} /s")
    print(f"plain HTTP POSTs (baseline) median {base_median:8.0f} /s")
    print(f"ratio (deliveries / plain POSTs): {ours_median / base_median:.2f}")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    main(*args)
