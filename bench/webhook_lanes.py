"""Webhook delivery on a flowing clock with several receivers: `--webhook-senders 8` (the
default: up to 8 receivers at once, one attempt at a time each) against `--webhook-senders 1`
(one attempt at a time in all, as before), in alternating rounds of the same run.

Two loads, each on a real clock with its background sender:
* busy: R receivers on their own ports, each taking ``WORK_MS`` to answer (a handler doing
  its work), N events, each delivered to every receiver; figure: deliveries per second until
  every delivery settled.
* one hangs: the same with ``HANG_EVENTS`` events, but the first receiver never answers
  within the timeout (``HANG_TIMEOUT`` s); figure: seconds until the other receivers had
  every delivery.
* one fast receiver: a single receiver answering at once, ``FAST_EVENTS`` events (what
  sending from several threads must not make slower).

Only the ratios mean anything on a noisy machine. Usage:
    .venv/bin/python bench/webhook_lanes.py [receivers] [events] [rounds]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack

from _receiver import receiving
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.webhooks.delivery import DeliveryStatus

WORK_MS = 5.0
HANG_TIMEOUT = 1.0
HANG_EVENTS = 10
FAST_EVENTS = 2000


def settled_within(sandbox: Sandbox, done: Callable[[], bool], limit: float = 300.0) -> float:
    started = time.perf_counter()
    while not done():
        if time.perf_counter() - started > limit:
            raise RuntimeError("deliveries did not settle")
        time.sleep(0.005)
    return time.perf_counter() - started


def one_round(senders: int, urls: list[str], events: int, hang: bool) -> float:
    sandbox = Sandbox(
        clock_mode="real",
        seed=1,
        port=0,
        tick_seconds=0.01,
        webhook_senders=senders,
        webhook_timeout_seconds=HANG_TIMEOUT,
        webhook_retries="1h",
    )
    org = sandbox.orgs.all()[0]
    endpoints = [
        sandbox.webhook_endpoints.create(org.id, url, secret="whsec_bench").id for url in urls
    ]
    prompt = set(endpoints[1:] if hang else endpoints)
    sandbox.start_background()
    try:
        for _ in range(events):
            sandbox.events.trigger(org.id, "sandbox", "order.completed")

        def done() -> bool:
            with sandbox.lock:
                return all(
                    d.status is DeliveryStatus.SUCCEEDED
                    for d in sandbox.deliveries.deliveries.values()
                    if d.endpoint_id in prompt
                ) and len(sandbox.deliveries.deliveries) == events * len(urls)

        return settled_within(sandbox, done)
    finally:
        sandbox.stop()


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    with ExitStack() as running:
        prompt = [running.enter_context(receiving(delay=WORK_MS / 1000)).url for _ in range(count)]
        hanging = [running.enter_context(receiving(delay=HANG_TIMEOUT * 3)).url, *prompt[1:]]
        fast = [running.enter_context(receiving()).url]
        loads = {
            "busy": (prompt, events, False),
            "one hangs": (hanging, HANG_EVENTS, True),
            "one fast": (fast, FAST_EVENTS, False),
        }
        compare(loads, count, events, rounds)


def compare(
    loads: dict[str, tuple[list[str], int, bool]], count: int, events: int, rounds: int
) -> None:
    print(f"{count} receivers ({WORK_MS:g} ms each), {events} events, {rounds} rounds")
    for name, (urls, made, hang) in loads.items():
        times: dict[int, list[float]] = {1: [], 8: []}
        for _ in range(rounds):
            for senders in (1, 8):
                times[senders].append(one_round(senders, urls, made, hang))
        serial, lanes = (statistics.median(times[n]) for n in (1, 8))
        delivered = made * (len(urls) - 1 if hang else len(urls))
        print(
            f"{name:9}: senders 1 {serial:7.2f} s ({delivered / serial:7.0f}/s)   "
            f"senders 8 {lanes:7.2f} s ({delivered / lanes:7.0f}/s)   "
            f"8 vs 1: {serial / lanes:5.2f}x as fast"
        )


if __name__ == "__main__":
    main()
