"""Fixture costs of the pytest plugin (issue 10 §3, issue 13): what a test pays before its body.

In-process, per call (median of rounds):
  * ``svc_org``: a fresh tenant (a sandbox and a production organization with tokens);
  * a fresh ``Sandbox``;
  * ``Sandbox.clear_controls``, what the plugin runs after each test of a shared Sandbox;
  * ``svc_http`` today (a fresh Sandbox bound to the one app + a test client) against the
    former per-test fixture (a fresh Sandbox + ``create_app`` + a test client);
  * the baseline: a bare Flask app with one route + its test client, built in the same run.
Then a generated 1,000-test suite run by pytest in a subprocess: empty tests (baseline) against
``svc_client`` with ``--svc-scope function`` and with ``--svc-scope session`` (one Sandbox,
``svc_org`` per test); a conftest times each test's setup and teardown (the first test also
pays the one-off imports, app and server thread).

The machines are noisy, so only the ratios in one run mean anything. Usage:
    .venv/bin/python bench/fixtures.py [rounds]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _bare_flask import make_app
from svc_sandbox.app import bind, create_app
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.testing.emulator import InProcessEmulator

SUITE_SIZE = 1000


def per_call(make: Callable[[], object], calls: int, rounds: int) -> float:
    """Median seconds per call over ``rounds`` rounds of ``calls`` calls."""
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(calls):
            make()
        samples.append((time.perf_counter() - started) / calls)
    return statistics.median(samples)


#: Written next to the generated suite: times every test's setup and teardown (the fixtures'
#: work) with perf_counter, so the figure leaves out pytest's start-up and collection.
TIMING_CONFTEST = """
import json, time
import pytest

SPENT = []

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    started = time.perf_counter()
    yield
    SPENT.append(time.perf_counter() - started)

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    started = time.perf_counter()
    yield
    SPENT[-1] += time.perf_counter() - started

def pytest_sessionfinish(session):
    with open("spent.json", "w") as out:
        json.dump(SPENT, out)
"""


def suite(tmp: Path, body: str, *options: str) -> list[float]:
    """Seconds of fixture setup + teardown of each test of a generated suite."""
    tests = "\n".join(f"def test_{n}({body}):\n    pass\n" for n in range(SUITE_SIZE))
    (tmp / "test_suite.py").write_text(tests)
    (tmp / "conftest.py").write_text(TIMING_CONFTEST)
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, str(tmp)]
    subprocess.run(argv, check=True, capture_output=True, cwd=tmp)
    spent: list[float] = json.loads((tmp / "spent.json").read_text())
    return spent


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    shared = Sandbox(clock_mode="frozen", seed=1, strict=True)
    app = create_app(shared)
    emulator = InProcessEmulator(shared, shared.settings.origin)
    names = iter(range(10**9))

    def fresh_sandbox() -> Sandbox:
        return Sandbox(clock_mode="frozen", seed=1, strict=True)

    def svc_http_now() -> object:
        sandbox = fresh_sandbox()
        bind(app, sandbox)
        return app.test_client()

    def svc_http_before() -> object:
        return create_app(fresh_sandbox()).test_client()

    costs = {
        "bare Flask app + test client (baseline)": per_call(
            lambda: make_app().test_client(), 20, rounds
        ),
        "svc_org (fresh tenant, in-process)": per_call(
            lambda: emulator.create_tenant(f"t{next(names)}"), 200, rounds
        ),
        "fresh Sandbox": per_call(fresh_sandbox, 50, rounds),
        "clear_controls (after each test of a shared Sandbox)": per_call(
            shared.clear_controls, 200, rounds
        ),
        "svc_http now (fresh Sandbox bound to the one app)": per_call(svc_http_now, 50, rounds),
        "svc_http before (fresh Sandbox + create_app)": per_call(svc_http_before, 5, rounds),
    }
    baseline = costs["bare Flask app + test client (baseline)"]
    print(f"{'per test':<52} {'ms':>8} {'x baseline':>11}")
    for name, seconds in costs.items():
        print(f"{name:<52} {seconds * 1000:8.3f} {seconds / baseline:11.2f}")

    configs = {
        "empty tests (baseline)": ("",),
        "svc_client, --svc-scope function": ("svc_client", "--svc-scope=function"),
        "svc_client, --svc-scope session (svc_org per test)": (
            "svc_client",
            "--svc-scope=session",
        ),
    }
    with tempfile.TemporaryDirectory() as directory:
        spent = {name: suite(Path(directory), *argv) for name, argv in configs.items()}
    print(f"\n{SUITE_SIZE}-test suite: fixture setup + teardown")
    print(f"{'':<52} {'total s':>8} {'median ms':>10} {'mean ms*':>9} {'first ms':>9}")
    for name, times in spent.items():
        total, median = sum(times), statistics.median(times) * 1000
        rest = statistics.mean(times[1:]) * 1000
        print(f"{name:<52} {total:8.3f} {median:10.3f} {rest:9.3f} {times[0] * 1000:9.1f}")
    print("* mean of every test but the first (which pays imports, the app and the server)")
    empty = sum(spent["empty tests (baseline)"])
    function, session = (sum(spent[name]) - empty for name in list(configs)[1:])
    print(
        f"suite fixture overhead, function scope / session scope + svc_org: "
        f"{function / session:.2f}x ({function:.2f} s / {session:.2f} s)"
    )


if __name__ == "__main__":
    main()
