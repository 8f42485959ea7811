"""Scenario library speed: wall time of the whole scenarios/ library in-process, and of its
longest scenario (the 14-hour webhook retry schedule) against the sandbox time it covers.

Baseline in the same run: the same number of HTTP exchanges sent to a bare Flask app (the
`/ping` of bench/_bare_flask.py) through the same in-process WSGI client, so the ratio is the
cost of a scenario exchange (state, rules, contract checks, control plane, webhook POSTs) over
a bare Flask request. Rounds alternate; medians are shown. Usage:
    .venv/bin/python bench/scenarios.py [rounds]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

from werkzeug.test import Client

from svc_sandbox.scenarios.loader import load_file, load_paths
from svc_sandbox.scenarios.model import Scenario
from svc_sandbox.scenarios.results import PASSED
from svc_sandbox.scenarios.runner import Runner
from svc_sandbox.scenarios.targets import InProcessTarget, Session
from svc_sandbox.scenarios.transport import HttpRequest, HttpResponse, Transport

sys.path.insert(0, str(Path(__file__).parent))
from _bare_flask import make_app  # noqa: E402

LIBRARY = Path(__file__).resolve().parents[1] / "scenarios"
LONGEST = LIBRARY / "webhooks" / "retry_schedule.yaml"


class Counting:
    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.count = 0

    def send(self, request: HttpRequest) -> HttpResponse:
        self.count += 1
        return self.inner.send(request)


class CountingTarget(InProcessTarget):
    def __init__(self) -> None:
        super().__init__()
        self.exchanges = 0
        self._open: list[Counting] = []

    def open(self, scenario: Scenario, seed: int | None) -> Session:
        session = super().open(scenario, seed)
        counting = Counting(session.transport)
        session.transport = counting
        self._open.append(counting)
        return session

    def total(self) -> int:
        return sum(c.count for c in self._open)


def run(scenarios: list[Scenario]) -> tuple[float, int, float]:
    """Wall seconds, HTTP exchanges, sandbox seconds covered."""
    target = CountingTarget()
    runner = Runner(target)
    started = time.perf_counter()
    results = runner.run_all(scenarios)
    wall = time.perf_counter() - started
    failed = [r.name for r in results if r.status != PASSED]
    assert not failed, f"scenarios failed: {failed}"
    return wall, target.total(), sum(r.sandbox_seconds for r in results)


def bare(exchanges: int) -> float:
    client: Any = Client(make_app())
    started = time.perf_counter()
    for _ in range(exchanges):
        client.get("http://127.0.0.1/ping").close()
    return time.perf_counter() - started


def main(rounds: int = 3) -> None:
    library = load_paths([LIBRARY])
    longest = load_file(LONGEST)
    walls, longest_walls, bare_walls = [], [], []
    exchanges = longest_exchanges = 0
    covered = longest_covered = 0.0
    for _ in range(rounds):
        wall, exchanges, covered = run(library)
        walls.append(wall)
        bare_walls.append(bare(exchanges))
        wall, longest_exchanges, longest_covered = run(longest)
        longest_walls.append(wall)
    lib_wall, bare_wall = statistics.median(walls), statistics.median(bare_walls)
    long_wall = statistics.median(longest_walls)
    print(f"library: {len(library)} scenario runs, {exchanges} HTTP exchanges, rounds: {rounds}")
    print(f"  wall time (median)            {lib_wall:8.2f} s")
    print(f"  sandbox time covered          {covered / 3600:8.1f} h")
    print(f"  bare Flask, same exchanges    {bare_wall:8.2f} s")
    print(f"  ratio (library / bare Flask)  {lib_wall / bare_wall:8.1f}x")
    print(f"longest: {longest[0].name}")
    print(f"  wall time (median)            {long_wall:8.3f} s ({longest_exchanges} exchanges)")
    print(f"  sandbox time covered          {longest_covered / 3600:8.1f} h")
    print(f"  sandbox seconds per wall s    {longest_covered / long_wall:8.0f}")


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:2]])
