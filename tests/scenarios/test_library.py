"""The scenarios/ library runs green in-process: every scenario and every matrix row."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_sandbox.app import create_app
from svc_sandbox.pytest_plugin import RunningServer
from svc_sandbox.sandbox import Sandbox
from svc_sandbox.scenarios.loader import load_paths, load_text, scenario_files
from svc_sandbox.scenarios.model import Scenario
from svc_sandbox.scenarios.reports import failure_text
from svc_sandbox.scenarios.results import PASSED, SKIPPED
from svc_sandbox.scenarios.runner import Runner
from svc_sandbox.scenarios.targets import EmulatorTarget, InProcessTarget, RealTarget
from svc_sandbox.server import ServerThread

LIBRARY = Path(__file__).resolve().parents[2] / "scenarios"
SCENARIOS = load_paths([LIBRARY])

#: The flows issue 14 asks the library to cover, each named by a tag.
REQUIRED_TAGS = {
    "products",
    "modes",
    "trigger-phones",
    "simulator",
    "failure-codes",
    "retry-guard",
    "expiry",
    "faults",
    "limits",
    "fees",
    "review",
    "idempotency",
    "retries",
    "redelivery",
    # identity provider and wallet API
    "identity",
    "pkce",
    "userinfo",
    "consent",
    "refresh",
    "wallet",
    "daily-cap",
    "two-factor",
}


def test_the_library_has_at_least_thirty_files_covering_every_flow() -> None:
    assert len(scenario_files([LIBRARY])) >= 30
    tags = {tag for scenario in SCENARIOS for tag in scenario.tags}
    assert tags >= REQUIRED_TAGS


def test_the_docs_count_the_library_as_it_is() -> None:
    """docs/scenarios.md says how many files and runs the library has: the numbers it has."""
    import re

    docs = (LIBRARY.parent / "docs" / "scenarios.md").read_text(encoding="utf-8")
    said = re.search(r"\(([0-9]+) files, ([0-9]+) runs with the matrix rows\)", docs)
    assert said is not None
    assert (int(said[1]), int(said[2])) == (len(scenario_files([LIBRARY])), len(SCENARIOS))


def test_the_simulator_matrix_has_every_failure_code() -> None:
    from svc_sandbox.commerce.payments import PROVIDER_FAILURE_CODES

    rows = [s.row["code"] for s in SCENARIOS if "failure-codes" in s.tags and "code" in s.row]
    assert set(PROVIDER_FAILURE_CODES) <= set(rows)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario(scenario: Scenario) -> None:
    result = Runner(InProcessTarget()).run(scenario)
    assert result.status == PASSED, failure_text(result)


def test_the_library_holds_against_another_server(svc_server: RunningServer) -> None:
    """``--target real`` against a running emulator taken as another server, all files in
    one go on its state: nothing fails. A control step and what follows it, and a file that
    sets settings or a clock, are skipped; no file assumes an empty organization."""
    info = svc_server.sandbox.info()
    token = next(o for o in info["organizations"] if o["environment"] == "sandbox")["tokens"][0]
    roots = {name: url for name, url in info["roots"].items() if name != "control_url"}
    target = RealTarget(roots.pop("base_url"), token["token"], roots)
    results = [Runner(target).run(scenario) for scenario in SCENARIOS]
    assert [failure_text(r) for r in results if r.status not in (PASSED, SKIPPED)] == []
    assert sum(r.status == PASSED for r in results) >= 50


def test_the_first_scenario_of_the_docs_runs_and_is_skipped_where_the_clock_flows(
    tmp_path: Path,
) -> None:
    """docs/scenarios.md's first example reads instants of the frozen clock: it passes
    in-process and, saying so with ``clock:``, is skipped against an emulator whose clock
    flows (without it, it failed there: the clock moved during the run)."""
    docs = (LIBRARY.parent / "docs" / "scenarios.md").read_text(encoding="utf-8")
    block = docs.split("## A first scenario", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    [scenario] = load_text(block, tmp_path / "first.yaml")
    assert Runner(InProcessTarget()).run(scenario).status == PASSED
    sandbox = Sandbox(clock_mode="real", port=0)
    server = ServerThread(create_app(sandbox), sandbox.settings).start()
    try:
        result = Runner(EmulatorTarget(f"http://127.0.0.1:{server.port}")).run(scenario)
    finally:
        server.close()
        sandbox.stop()
    assert result.status == SKIPPED, failure_text(result)
