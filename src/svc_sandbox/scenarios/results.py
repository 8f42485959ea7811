"""What a run found: per step and per scenario, as plain data for the console, JSON and JUnit."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PASSED, FAILED, SKIPPED, ERROR = "passed", "failed", "skipped", "error"


@dataclass
class StepResult:
    index: str
    kind: str
    name: str
    status: str
    line: int | None = None
    message: str = ""
    request: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    expectation: Any = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "")}


@dataclass
class ScenarioResult:
    name: str
    file: str
    tags: list[str]
    status: str = PASSED
    steps: list[StepResult] = field(default_factory=list)
    wall_seconds: float = 0.0
    #: Sandbox time the scenario covered (clock at the end minus clock at the start).
    sandbox_seconds: float = 0.0
    message: str = ""

    @property
    def failure(self) -> StepResult | None:
        return next((s for s in self.steps if s.status in (FAILED, ERROR)), None)

    @property
    def skipped_steps(self) -> list[StepResult]:
        return [s for s in self.steps if s.status == SKIPPED]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "file": self.file,
            "tags": self.tags,
            "status": self.status,
            "message": self.message,
            "wallSeconds": round(self.wall_seconds, 4),
            "sandboxSeconds": self.sandbox_seconds,
            "steps": [s.to_json() for s in self.steps],
        }


def summary(results: list[ScenarioResult]) -> dict[str, int]:
    counts = {PASSED: 0, FAILED: 0, SKIPPED: 0, ERROR: 0}
    for result in results:
        counts[result.status] += 1
    return counts
