"""pytest collection of scenario files: every ``*.yaml`` under a folder named ``scenarios``
(the ini value ``svc_scenarios_folder``; empty: none) and under each folder given with
``--svc-scenarios`` is a file of test items, one per scenario and matrix row, run in-process
with the same failure report as ``svc-sandbox run``. A file collected only for its folder's
name that does not load says how to stop that (unrelated YAML in a ``scenarios`` folder).

pytest_plugin.py calls the hooks below, so installing svc-sandbox is enough. The loader (and
with it jsonschema, PyYAML, pydantic and the settings) is imported only when a scenario file
is collected: every pytest run of a project with svc-sandbox installed loads this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc_sandbox.scenarios.model import SUFFIXES, Scenario, ScenarioError
from svc_sandbox.scenarios.reports import failure_text
from svc_sandbox.scenarios.results import ERROR, FAILED, SKIPPED, ScenarioResult

OPTION = "--svc-scenarios"
FOLDER_INI = "svc_scenarios_folder"
FOLDER = "scenarios"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION,
        action="append",
        default=[],
        metavar="DIR",
        help="collect the YAML scenarios of DIR as test items (repeatable)",
    )
    parser.addini(
        FOLDER_INI,
        "YAML under a folder of this name is collected as scenarios (empty: only "
        f"{OPTION} folders)",
        default=FOLDER,
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "svc_scenario(tag=...): a YAML scenario (with this tag, when it has one)"
    )
    for folder in config.getoption(OPTION) or []:
        if folder not in config.args:
            config.args.append(folder)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix not in SUFFIXES:
        return None
    given = [Path(d).resolve() for d in parent.config.getoption(OPTION) or []]
    resolved = file_path.resolve()
    if any(resolved.is_relative_to(d) for d in given):
        by_folder = None
    else:
        by_folder = str(parent.config.getini(FOLDER_INI)).strip() or None
        if by_folder is None or by_folder not in resolved.parent.parts:
            return None
    collector = ScenarioFile.from_parent(parent, path=file_path)
    collector.by_folder = by_folder
    return collector


class ScenarioFile(pytest.File):
    #: The folder name it was collected for (None: a --svc-scenarios folder).
    by_folder: str | None = None

    def collect(self) -> Iterator[pytest.Item]:
        from svc_sandbox.scenarios.loader import load_file

        for scenario in load_file(self.path):
            yield ScenarioItem.from_parent(self, name=scenario.name, scenario=scenario)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ScenarioError):
            if self.by_folder is None:
                return excinfo.value.describe()
            return (
                f"{excinfo.value.describe()}\n(svc-sandbox collects every YAML file under a "
                f"folder named {self.by_folder!r} as a scenario; if this one is no scenario, "
                f"set '{FOLDER_INI} =' in the pytest ini file to stop that, or name another "
                f"folder, and give scenario folders with {OPTION} DIR)"
            )
        return super().repr_failure(excinfo)


class ScenarioFailed(Exception):
    def __init__(self, result: ScenarioResult) -> None:
        super().__init__(result.name)
        self.result = result


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        # Every item has the marker (`-m svc_scenario` selects them all), once per tag as a
        # keyword, the one form `-m` matches on (`-m "svc_scenario(tag='smoke')"`); a tag is
        # also a keyword of the item, so `-k smoke` selects it too.
        if not scenario.tags:
            self.add_marker(pytest.mark.svc_scenario)
        for tag in scenario.tags:
            self.add_marker(pytest.mark.svc_scenario(tag=tag))
        self.extra_keyword_matches.update(scenario.tags)

    def runtest(self) -> None:
        from svc_sandbox.pytest_plugin import configured_seed
        from svc_sandbox.scenarios.runner import Runner
        from svc_sandbox.scenarios.targets import InProcessTarget

        seed = configured_seed(self.config)  # for a file without its own seed
        result = Runner(InProcessTarget(seed=seed), seed=seed).run(self.scenario)
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
