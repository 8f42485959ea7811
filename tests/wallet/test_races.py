"""Parallel sends against a served sandbox (waitress, 8 threads): one idempotency key moves
money once; different keys never take a wallet below zero nor past the daily cap."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest
import requests

from svc_sandbox.pytest_plugin import RunningServer
from tests.wallet.conftest import Connect
from tests.wallet.helpers import WALLET, headers, send_body

THREADS = 20


def race(server: RunningServer, auth: dict[str, str], bodies: list[dict[str, Any]]) -> list[Any]:
    """Each body sent from its own thread and connection, all released at once."""
    start = threading.Barrier(len(bodies))
    answers: list[Any] = [None] * len(bodies)

    def send(i: int) -> None:
        with requests.Session() as session:
            start.wait(timeout=30)
            answers[i] = session.post(
                server.url + WALLET + "/send", json=bodies[i], headers=auth, timeout=30
            )

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert all(a is not None for a in answers)
    return answers


def available(server: RunningServer, handle: str) -> int:
    found = requests.get(f"{server.url}/_sandbox/wallets/{handle}", timeout=10).json()
    return int(found["availableMinor"])


def set_available(server: RunningServer, handle: str, amount: int) -> None:
    response = requests.put(
        f"{server.url}/_sandbox/wallets/{handle}/balance",
        json={"availableMinor": amount},
        timeout=10,
    )
    assert response.status_code == 200


def test_one_key_from_twenty_threads_moves_money_once(
    server: RunningServer, connect: Connect, key: str
) -> None:
    auth = headers(connect("abebe"), key)
    answers = race(server, auth, [send_body("tigist", 7000, "same-key-01")] * THREADS)
    statuses = Counter(a.status_code for a in answers)
    assert statuses == {201: 1, 200: THREADS - 1}
    assert len({a.json()["transfer"]["id"] for a in answers}) == 1
    assert sum(a.json()["deduped"] is False for a in answers) == 1
    assert available(server, "abebe") == 1000000 - 7000
    assert available(server, "tigist") == 1000000 + 7000


@pytest.mark.parametrize(
    ("start", "amount", "moved", "refusal"),
    [
        # Funds run out first: 3 of 20 fit in 3,500,000.
        (3_500_000, 1_000_000, 3, (402, "insufficient_funds")),
        # The cap binds first: 5 of 20 fit under 5,000,000 per 24 h.
        (20_000_000, 1_000_000, 5, (429, "daily_cap_exceeded")),
    ],
)
def test_twenty_keys_never_overdraw_nor_pass_the_cap(
    server: RunningServer,
    connect: Connect,
    key: str,
    start: int,
    amount: int,
    moved: int,
    refusal: tuple[int, str],
) -> None:
    auth = headers(connect("abebe"), key)
    set_available(server, "abebe", start)
    bodies = [send_body("tigist", amount, f"parallel-{i:04}") for i in range(THREADS)]
    answers = race(server, auth, bodies)
    created = [a for a in answers if a.status_code == 201]
    refused = [a for a in answers if a.status_code != 201]
    assert len(created) == moved
    assert {(a.status_code, a.json()["error"]) for a in refused} == {refusal}
    assert available(server, "abebe") == start - moved * amount >= 0
    assert available(server, "tigist") == 1000000 + moved * amount
    ledger = requests.get(f"{server.url}/_sandbox/wallets/abebe/ledger", timeout=10).json()
    assert sum(e["amountMinor"] for e in ledger["items"]) == available(server, "abebe")


def test_parallel_funds_stop_exactly_at_the_control_plane_cap(server: RunningServer) -> None:
    set_available(server, "dawit", 0)
    start = threading.Barrier(THREADS)
    statuses: list[int] = []

    def fund() -> None:
        with requests.Session() as session:
            start.wait(timeout=30)
            answer = session.post(
                f"{server.url}/_sandbox/wallets/dawit/fund",
                json={"amountMinor": 10**12},
                timeout=30,
            )
            statuses.append(answer.status_code)

    threads = [threading.Thread(target=fund) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    # Ten funds of 10^12 reach the cap of 10^13; the other ten are refused, whatever the order.
    assert Counter(statuses) == {200: 10, 400: 10}
    assert available(server, "dawit") == 10**13
