"""Machine-readable reports of a run: JSON and JUnit XML (one test case per scenario)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from svc_sandbox.outputs import write_file, xml_safe
from svc_sandbox.scenarios.results import ERROR, FAILED, SKIPPED, ScenarioResult, summary


def to_json(results: list[ScenarioResult], target: str) -> dict[str, Any]:
    return {
        "target": target,
        "summary": summary(results),
        "scenarios": [r.to_json() for r in results],
    }


def write_json(path: str | Path, results: list[ScenarioResult], target: str) -> None:
    write_file(path, json.dumps(to_json(results, target), indent=2) + "\n")


def failure_text(result: ScenarioResult) -> str:
    """The failing step as plain text: step, request, response and expectation."""
    step = result.failure
    if step is None:
        return result.message
    where = f"{result.file}:{step.line}" if step.line else result.file
    parts = [f"{where}: step {step.index} ({step.name}): {step.message}"]
    for label, value in (
        ("request", step.request),
        ("response", step.response),
        ("expected", step.expectation),
    ):
        if value is not None:
            parts.append(f"{label}: {json.dumps(value, indent=2, default=str)}")
    return "\n".join(parts)


def junit(results: list[ScenarioResult], target: str) -> str:
    counts = summary(results)
    suite = ElementTree.Element(
        "testsuite",
        name=f"svc-sandbox scenarios ({target})",
        tests=str(len(results)),
        failures=str(counts[FAILED]),
        errors=str(counts[ERROR]),
        skipped=str(counts[SKIPPED]),
        time=f"{sum(r.wall_seconds for r in results):.3f}",
    )
    for result in results:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname=Path(result.file).stem,
            name=result.name,
            file=result.file,
            time=f"{result.wall_seconds:.3f}",
        )
        if result.status == FAILED:
            step = result.failure
            message = step.message if step else result.message
            ElementTree.SubElement(case, "failure", message=message).text = failure_text(result)
        elif result.status == ERROR:
            ElementTree.SubElement(
                case, "error", message=result.message or "error"
            ).text = failure_text(result)
        elif result.status == SKIPPED:
            reason = result.message or "every step was skipped"
            ElementTree.SubElement(case, "skipped", message=reason)
        skipped = [f"{s.index} {s.name}: {s.message}" for s in result.skipped_steps]
        if skipped:
            ElementTree.SubElement(case, "system-out").text = "skipped steps:\n" + "\n".join(
                skipped
            )
    ElementTree.indent(suite)
    return ElementTree.tostring(xml_safe(suite), encoding="unicode", xml_declaration=True)


def write_junit(path: str | Path, results: list[ScenarioResult], target: str) -> None:
    write_file(path, junit(results, target) + "\n")
