"""Renders a conformance report (``ConformanceRecorder.report()``) as text or JUnit XML."""

from __future__ import annotations

import json
from typing import Any

from svc_sandbox.outputs import xml_safe

FORMATS = ("text", "json", "junit")


def render(report: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report, indent=2)
    if fmt == "junit":
        return to_junit(report)
    if fmt == "text":
        return to_text(report)
    raise ValueError(f"format must be one of {', '.join(FORMATS)}")


def _violations_of(report: dict[str, Any], operation_id: str) -> list[dict[str, Any]]:
    return [v for v in report["violations"] if v["operationId"] == operation_id]


def to_text(report: dict[str, Any]) -> str:
    summary = report["summary"]
    contract = report["contract"]
    lines = [
        f"Conformance to {contract['title']} {contract['version']}",
        f"  requests: {summary['requests']}   operations exercised: "
        f"{summary['operations']['exercised']}/{summary['operations']['total']}   statuses "
        f"exercised: {summary['statuses']['exercised']}/{summary['statuses']['declared']}",
        f"  request violations: {summary['requestViolations']}   response violations: "
        f"{summary['responseViolations']}   unmatched requests: {summary['unmatched']}",
        "",
        "Operations:",
    ]
    for op in report["operations"]:
        seen = ", ".join(f"{code}x{count}" for code, count in op["statuses"].items()) or "-"
        missing = ", ".join(op["missingStatuses"]) or "-"
        mark = (
            "ok  "
            if op["requests"] and not _violations_of(report, op["operationId"])
            else ("--  " if not op["requests"] else "FAIL")
        )
        lines.append(f"  {mark} {op['method']:<6} {op['path']:<24} seen {seen}; not seen {missing}")
    if report["violations"]:
        lines += ["", "Violations:"]
        for v in report["violations"]:
            lines.append(
                f"  {v['requestId']} {v['method']} {v['path']} -> {v['status']} "
                f"[{v['kind']}] {v['location']}: {v['message']}"
            )
            lines.append(f"      schema path: {v['schemaPath']}")
    if report["unmatched"]:
        lines += ["", "Requests matching no operation of the contract:"]
        lines += [
            f"  {u['requestId']} {u['method']} {u['path']} -> {u['status']}"
            for u in report["unmatched"]
        ]
    if report.get("notices"):
        lines += ["", "Notices (allowed, but without effect):"]
        lines += [
            f"  {n['requestId']} {n['method']} {n['path']} -> {n['status']} "
            f"{n['location']}: {n['message']}"
            for n in report["notices"]
        ]
    return "\n".join(lines)


def to_junit(report: dict[str, Any]) -> str:
    """One test case per operation: failed when a request or response broke the contract,
    skipped when the client never called it."""
    from xml.etree import ElementTree  # only for a JUnit report (`serve` imports this module)

    operations = report["operations"]
    failures = sum(1 for op in operations if _violations_of(report, op["operationId"]))
    skipped = sum(1 for op in operations if not op["requests"])
    suite = ElementTree.Element(
        "testsuite",
        name="conformance",
        tests=str(len(operations)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
    )
    for op in operations:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname="conformance." + op["operationId"],
            name=f"{op['method']} {op['path']}",
        )
        found = _violations_of(report, op["operationId"])
        if found:
            failure = ElementTree.SubElement(
                case, "failure", message=f"{len(found)} contract violations"
            )
            failure.text = "\n".join(
                f"{v['requestId']} [{v['kind']}] {v['location']}: {v['message']} "
                f"(schema path {v['schemaPath']})"
                for v in found
            )
        elif not op["requests"]:
            ElementTree.SubElement(case, "skipped", message="not exercised")
        statuses = ", ".join(f"{c}x{n}" for c, n in op["statuses"].items())
        ElementTree.SubElement(case, "system-out").text = f"statuses seen: {statuses or '-'}"
    suites = ElementTree.Element("testsuites")
    suites.append(suite)
    return ElementTree.tostring(xml_safe(suites), encoding="unicode", xml_declaration=True)
