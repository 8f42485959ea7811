"""pytest collection of scenario files: every ``*.yaml`` under a folder named ``scenarios``
(and under each folder given with ``--svc-scenarios``) is a file of test items, one per
scenario and matrix row, run in-process with the same failure report as ``svc-sandbox run``.

pytest_plugin.py calls the hooks below, so installing svc-sandbox is enough.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_sandbox.scenarios.loader import SUFFIXES, load_file
from svc_sandbox.scenarios.model import Scenario, ScenarioError
from svc_sandbox.scenarios.reports import failure_text
from svc_sandbox.scenarios.results import ERROR, FAILED, SKIPPED, ScenarioResult

OPTION = "--svc-scenarios"
FOLDER = "scenarios"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION,
        action="append",
        default=[],
        metavar="DIR",
        help="collect the YAML scenarios of DIR as test items (repeatable)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "svc_scenario(tag): a YAML scenario with this tag")
    for folder in config.getoption(OPTION) or []:
        if folder not in config.args:
            config.args.append(folder)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix not in SUFFIXES:
        return None
    given = [Path(d).resolve() for d in parent.config.getoption(OPTION) or []]
    resolved = file_path.resolve()
    if FOLDER in resolved.parent.parts or any(resolved.is_relative_to(d) for d in given):
        collector: pytest.Collector = ScenarioFile.from_parent(parent, path=file_path)
        return collector
    return None


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        for scenario in load_file(self.path):
            yield ScenarioItem.from_parent(self, name=scenario.name, scenario=scenario)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ScenarioError):
            return excinfo.value.describe()
        return super().repr_failure(excinfo)


class ScenarioFailed(Exception):
    def __init__(self, result: ScenarioResult) -> None:
        super().__init__(result.name)
        self.result = result


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        # Every item has the marker (`-m svc_scenario` selects them all), once per tag.
        if not scenario.tags:
            self.add_marker(pytest.mark.svc_scenario)
        for tag in scenario.tags:
            self.add_marker(pytest.mark.svc_scenario(tag))

    def runtest(self) -> None:
        from svc_sandbox.scenarios.runner import Runner
        from svc_sandbox.scenarios.targets import InProcessTarget

        result = Runner(InProcessTarget()).run(self.scenario)
        if result.status in (FAILED, ERROR):
            raise ScenarioFailed(result)
        if result.status == SKIPPED:
            pytest.skip("every step was skipped")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ScenarioFailed):
            return failure_text(excinfo.value.result)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.scenario.lines.of(())
        return self.path, (line - 1) if line else None, f"scenario: {self.name}"
