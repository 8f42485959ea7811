"""Reads scenario files: YAML with line numbers, the JSON Schema, settings, variables and
actions checked before anything runs, so a bad file never leaves a half-run sandbox behind."""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections import Counter
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from pydantic import ValidationError as PydanticError

from svc_sandbox.core.durations import parse_duration
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.text import lone_surrogate
from svc_sandbox.core.validation import describe
from svc_sandbox.core.yaml_input import AliasBound  # the one alias rule of YAML
from svc_sandbox.scenarios.actions import ACTIONS
from svc_sandbox.scenarios.matchers import argument_problems, check_path, expectations
from svc_sandbox.scenarios.model import SUFFIXES, DocPath, Lines, Scenario, ScenarioError
from svc_sandbox.scenarios.receiver import answers_problem
from svc_sandbox.scenarios.responses import pick_problem
from svc_sandbox.scenarios.templating import (
    DYNAMIC,
    PROVIDED,
    CircularVariables,
    dependency_order,
    has_reference,
    own_vars,
    references,
)
from svc_sandbox.scenarios.transport import base64_body, header_problem
from svc_sandbox.settings import Settings
from svc_sandbox.webhooks.events import EVENT_TYPES

SCHEMA_NAME = "scenario.schema.json"
#: Actions the runner does itself (its webhook receiver), not the control plane.
RUNNER_ACTIONS = ("receiver",)
#: Scenarios one file's matrix may make (each one a fresh sandbox and a test item).
MATRIX_ROWS = 1000


class _Loader(yaml.SafeLoader):
    """YAML 1.1 safe loading, except that timestamps stay text: ``clock:
    2026-01-01T00:00:00Z`` written unquoted is the string the schema, the clock and every
    JSON comparison expect, not a ``datetime``."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@functools.cache
def schema() -> dict[str, Any]:
    """The scenario JSON Schema shipped in the package (a copy of contracts/)."""
    text = resources.files("svc_sandbox").joinpath("contracts", SCHEMA_NAME).read_text("utf-8")
    document: dict[str, Any] = json.loads(text)
    return document


@functools.cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(schema())


def scenario_files(paths: Iterable[str | Path]) -> list[Path]:
    """The YAML files of ``paths`` (files as given, folders searched recursively), sorted."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
        elif path.exists():
            found.append(path)
        else:
            raise ScenarioError(path, None, (), "no such file or folder")
    return found


def load_paths(paths: Iterable[str | Path]) -> list[Scenario]:
    """Every scenario (one per matrix row) of ``paths``; the first bad file raises."""
    return [s for file in scenario_files(paths) for s in load_file(file)]


def load_file(file: Path) -> list[Scenario]:
    try:
        text = file.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(file, None, (), f"cannot read the file: {exc}") from None
    return load_text(text, file)


def load_text(text: str, file: Path) -> list[Scenario]:
    document, lines = parse_yaml(text, file)
    check_schema(document, lines)
    check_text(document, lines)
    check_document(document, lines)
    return expand(document, lines)


def parse_yaml(text: str, file: Path) -> tuple[dict[str, Any], Lines]:
    try:
        node = yaml.compose(text, Loader=_Loader)
        lines = Lines(file)
        if node is not None:
            _Index(lines).walk(node, ())
        document = yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader
    except RecursionError:
        raise ScenarioError(file, None, (), "YAML nested too deeply") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or exc.context or "malformed YAML"
        raise ScenarioError(file, line, (), f"YAML syntax: {problem}") from None
    except yaml.YAMLError as exc:
        raise ScenarioError(file, None, (), f"YAML syntax: {exc}") from None
    if not isinstance(document, dict):
        raise ScenarioError(file, 1, (), "a scenario is a mapping with name and steps")
    return document, lines


class _Index:
    """The line of every path, walking aliases as the document they stand for; refused: what
    ``AliasBound`` refuses (a node inside itself, too many nodes repeated by aliases) and a
    key written twice in one mapping (YAML would keep the last silently)."""

    def __init__(self, lines: Lines) -> None:
        self.lines = lines
        self.bound = AliasBound()

    def walk(
        self, node: yaml.Node, path: DocPath, at: int | None = None, alias: int | None = None
    ) -> None:
        """``at``: the line naming the node, its key's for a value, as an alias is the node
        it names and keeps no line of its own; ``alias``: inside a repeated node, the line
        of the alias that repeats it (what its paths are reported at)."""
        line = node.start_mark.line + 1
        if self.bound.is_repeat(node):
            alias = alias or at or line
        problem = self.bound.enter(node)
        if problem:
            raise self.lines.error_at(alias or at or line, path, f"YAML: {problem}")
        self.lines.by_path[path] = alias or line
        with self.bound.inside(node):
            if isinstance(node, yaml.MappingNode):
                self._walk_mapping(node, path, alias)
            elif isinstance(node, yaml.SequenceNode):
                for index, item in enumerate(node.value):
                    self.walk(item, path + (index,), alias or line, alias)

    def _walk_mapping(self, node: yaml.MappingNode, path: DocPath, alias: int | None) -> None:
        written: set[tuple[str, str]] = set()
        for key, value in node.value:
            key_line = alias or key.start_mark.line + 1
            if isinstance(key, yaml.ScalarNode) and key.value != "<<":
                if (key.tag, key.value) in written:
                    raise self.lines.error_at(key_line, path, f"duplicate key {key.value!r}")
                written.add((key.tag, key.value))
            child = path + (str(key.value),)
            self.walk(value, child, key_line, alias)
            self.lines.by_path[child] = key_line


def check_schema(document: dict[str, Any], lines: Lines) -> None:
    errors = list(_validator().iter_errors(document))
    if not errors:
        return
    error = _deepest(best_match(errors))
    path: DocPath = tuple(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        # Point at the first unexpected key rather than at the mapping that holds it.
        allowed = set(error.schema.get("properties", {}))
        extra = [k for k in error.instance if k not in allowed]
        if extra:
            path += (str(extra[0]),)
    raise lines.error(path, f"schema: {exclusive_keys(error) or error.message}")


#: What a step is (one of them), and what a request's body is (one of them): the schema's
#: ``not`` rules, whose own message is a dump of the rule.
STEP_KINDS = ("request", "control", "expect_webhook", "repeat", "set")
BODY_KINDS = ("json", "form", "raw", "raw_base64")


def exclusive_keys(error: ValidationError) -> str | None:
    """The words for a ``not`` rule of the scenario schema a mapping broke: keys that cannot
    be given together."""
    if error.validator != "not" or not isinstance(error.instance, dict):
        return None
    given = error.instance
    bodies = [k for k in BODY_KINDS if k in given]
    if "path" in given and len(bodies) > 1:
        return f"a request has one body: {' and '.join(bodies)} cannot both be given"
    kinds = [k for k in STEP_KINDS if k in given]
    if len(kinds) > 1:
        return f"a step is one of {', '.join(STEP_KINDS)}: this one has {' and '.join(kinds)}"
    extra = [k for k in ("expect", "save") if k in given]
    if kinds and extra:
        return f"{' and '.join(extra)} go with a request or control step, not with {kinds[0]}"
    return None


#: Where a lone surrogate may be written: JSON data (a request's ``json`` body, a ``json``
#: expectation), sent and shown as a JSON ``\\ud800`` escape. Anywhere else the text ends
#: up in a URL, a header, a form, a test's name or the console, none of which can encode it.
SURROGATES_ALLOWED_UNDER = "json"


def check_text(document: dict[str, Any], lines: Lines) -> None:
    """Every text outside JSON data is text UTF-8 can encode (no lone surrogate, which YAML's
    ``"\\ud800"`` makes): refused here, naming the path, rather than crashing the console,
    a report or pytest once the scenario runs."""
    for path, text in _texts(document, ()):
        char = lone_surrogate(text)
        if char:
            message = (
                f"the text holds a lone surrogate (U+{ord(char):04X}), which UTF-8 cannot"
                f" encode (write one only inside {SURROGATES_ALLOWED_UNDER} data)"
            )
            raise lines.error(path, message)


def _texts(value: Any, path: DocPath) -> Iterable[tuple[DocPath, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            child = path + (str(key),)
            yield child, str(key)
            if key != SURROGATES_ALLOWED_UNDER:
                yield from _texts(item, child)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _texts(item, path + (index,))


def _deepest(error: ValidationError) -> ValidationError:
    """For a step that fits none of the oneOf shapes, the reason inside the closest shape."""
    while error.context:
        error = best_match(error.context)
    return error


def check_settings(document: dict[str, Any], lines: Lines) -> None:
    """``settings`` hold up as emulator settings (the names and values of ``serve``'s)."""
    if "settings" not in document:
        return
    try:
        Settings.model_validate(document["settings"])
    except PydanticError as exc:
        error = exc.errors()[0]
        raise lines.error(
            ("settings", *error["loc"]), f"settings: {describe(dict(error))}"
        ) from None


def check_clock(document: dict[str, Any], lines: Lines) -> None:
    """``clock`` is an instant the sandbox clock can start at (the in-process run sets
    ``clock_start`` to it, a running emulator ``POST /_sandbox/clock/set``)."""
    if "clock" not in document:
        return
    try:
        Settings.model_validate({"clock_start": document["clock"]})
    except PydanticError as exc:
        message = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise lines.error(("clock",), f"clock: {message}") from None


def check_document(document: dict[str, Any], lines: Lines) -> None:
    """Unknown variables and control actions, found before the first step runs."""
    check_settings(document, lines)
    check_clock(document, lines)
    known = set(DYNAMIC) | set(PROVIDED) | set(document.get("vars", {}))
    known |= set(document.get("matrix", {}))
    for name, path in references(document.get("vars", {}), ("vars",)):
        if name not in known:
            raise lines.error(path, f"unknown variable ${{{name}}}")
    _check_no_circle(document, lines)
    for index, name in enumerate(document.get("webhooks", {}).get("eventTypes", [])):
        _check_event_type(name, ("webhooks", "eventTypes", index), lines)
    _check_steps(document["steps"], ("steps",), known, lines)
    _check_matrix(document, lines)


def _check_no_circle(document: dict[str, Any], lines: Lines) -> None:
    try:
        dependency_order(own_vars(document))
    except CircularVariables as circle:
        first = circle.circle[0]
        raise lines.error(
            ("vars", first), f"vars refer to each other in a circle: {circle}"
        ) from None


def _check_steps(steps: list[dict[str, Any]], at: DocPath, known: set[str], lines: Lines) -> None:
    for index, step in enumerate(steps):
        path = at + (index,)
        if "repeat" in step:
            inner = set(known)
            if "as" in step["repeat"]:
                inner.add(step["repeat"]["as"])
            _check_steps(step["repeat"]["steps"], path + ("repeat", "steps"), inner, lines)
            known |= inner
            continue
        for key in ("request", "control", "expect", "expect_webhook", "set"):
            if key not in step:
                continue
            for name, where in references(step[key], path + (key,)):
                if name not in known:
                    raise lines.error(where, f"unknown variable ${{{name}}}")
        if "control" in step:
            _check_action(step["control"], path + ("control",), lines)
        if "request" in step:
            _check_request(step["request"], path + ("request",), known, lines)
        _check_expectations(step, path, lines)
        if "expect_webhook" in step:
            _check_webhook_expectation(step["expect_webhook"], path + ("expect_webhook",), lines)
        known |= set(step.get("save", {})) | set(step.get("set", {}))
        known |= set(step.get("expect_webhook", {}).get("save", {}))


def event_type_problem(name: Any) -> str | None:
    """Only the events of spec §6 are ever sent: a misspelt type would wait for nothing (and
    ``none: true`` of it pass whatever was sent). Checked at load, and by the runner once a
    variable has filled it in."""
    if name in EVENT_TYPES:
        return None
    return f"unknown event type {name!r} (one of {', '.join(EVENT_TYPES)})"


def _check_event_type(name: Any, where: DocPath, lines: Lines) -> None:
    if isinstance(name, str) and not has_reference(name) and (problem := event_type_problem(name)):
        raise lines.error(where, problem)


def _check_webhook_expectation(spec: dict[str, Any], at: DocPath, lines: Lines) -> None:
    if "type" in spec:
        _check_event_type(spec["type"], at + ("type",), lines)
    within = spec.get("within")
    if within is not None and not has_reference(within):
        try:
            parse_duration(within, "within")
        except ValidationFailed as exc:
            raise lines.error(at + ("within",), exc.message) from None


def _check_request(request: dict[str, Any], path: DocPath, known: set[str], lines: Lines) -> None:
    """Headers that could be sent, and a credential variable that exists."""
    auth = request.get("auth")
    sent = [(n, v, path + ("headers", str(n))) for n, v in request.get("headers", {}).items()]
    if isinstance(auth, dict) and "bearer" in auth:
        sent.append(("Authorization", "Bearer " + auth["bearer"], path + ("auth", "bearer")))
    for name, value, where in sent:
        # What a ${variable} fills in is checked when the step runs.
        shown_name = "X-Variable" if has_reference(name) else str(name)
        shown_value = value if isinstance(value, str) and not has_reference(value) else ""
        problem = header_problem(shown_name, shown_value)
        if problem:
            raise lines.error(where, problem)
    encoded = request.get("raw_base64")
    if isinstance(encoded, str) and not has_reference(encoded):
        try:
            base64_body(encoded)
        except ValueError as exc:
            raise lines.error(path + ("raw_base64",), str(exc)) from None
    if isinstance(auth, str) and auth != "none" and not has_reference(auth) and auth not in known:
        message = f"unknown variable ${{{auth}}} (auth names a credential variable)"
        raise lines.error(path + ("auth",), message)


def _check_expectations(step: dict[str, Any], path: DocPath, lines: Lines) -> None:
    """Matchers whose arguments hold (``$gte: "abc"``, ``$regex: "["``) and paths that parse,
    as far as the file says them (a ``${variable}`` is checked when the step runs)."""
    expect = step.get("expect", {})
    webhook = step.get("expect_webhook", {})
    for spec, at in ((expect, path + ("expect",)), (webhook, path + ("expect_webhook",))):
        for value, inside in expectations(spec):
            for where, problem in argument_problems(value, at + inside, has_reference):
                raise lines.error(where, problem)
    paths = [(p, path + ("expect", "paths", p), pick_problem) for p in expect.get("paths", {})]
    paths += [(p, path + ("save", n), pick_problem) for n, p in step.get("save", {}).items()]
    paths += [
        (p, path + ("expect_webhook", "save", n), check_path)
        for n, p in webhook.get("save", {}).items()
    ]
    for written, where, check in paths:
        if not has_reference(written):
            unreadable = check(str(written))
            if unreadable:
                raise lines.error(where, unreadable)


def _check_action(control: dict[str, Any], path: DocPath, lines: Lines) -> None:
    name = control["action"]
    if name in RUNNER_ACTIONS:
        problem = answers_problem(control.get("answers", []))
        if problem and not has_reference(control.get("answers")):
            raise lines.error(path + ("answers",), problem)
        return
    action = ACTIONS.get(name)
    if action is None:
        raise lines.error(
            path + ("action",), f"unknown control action {name!r} (see docs/scenarios.md)"
        )
    for argument in action.path_arguments:
        if argument not in control:
            raise lines.error(path, f"control action {name!r} needs {argument!r}")


def _check_matrix(document: dict[str, Any], lines: Lines) -> None:
    sizes = [len(values) for values in document.get("matrix", {}).values()]
    if math.prod(sizes) > MATRIX_ROWS:
        combinations = " x ".join(map(str, sizes))
        raise lines.error(
            ("matrix",),
            f"matrix: {combinations} = {math.prod(sizes)} combinations, at most {MATRIX_ROWS}",
        )


def expand(document: dict[str, Any], lines: Lines) -> list[Scenario]:
    """One scenario per combination of the matrix's values (in the file's order)."""
    matrix: dict[str, list[Any]] = document.get("matrix", {})
    if not matrix:
        return [Scenario(document, lines)]
    names = list(matrix)
    rows: list[tuple[dict[str, Any], str]] = []
    for picks in itertools.product(*(range(len(matrix[n])) for n in names)):
        row = {n: matrix[n][i] for n, i in zip(names, picks, strict=True)}
        label = ",".join(
            f"{n}={_label(matrix[n][i], i)}" for n, i in zip(names, picks, strict=True)
        )
        rows.append((row, label))
    return [
        Scenario(document, lines, row, label)
        for (row, _), label in zip(rows, _unique_labels([label for _, label in rows]), strict=True)
    ]


def _unique_labels(labels: list[str]) -> list[str]:
    """Two rows of one label could not be told apart in a report or a test id: each is
    numbered with its row, again while a numbered label meets another (a value
    ``"x,row=1"`` reads like row 1 of ``x``)."""
    while True:
        seen = Counter(labels)
        if len(seen) == len(labels):
            return labels
        labels = [
            f"{label},row={number}" if seen[label] > 1 else label
            for number, label in enumerate(labels, 1)
        ]


def _label(value: Any, index: int) -> str:
    """How a matrix value shows in a scenario's name: itself (a text YAML would read as a
    number, a boolean or null quoted: ``"100"`` is not ``100``), its ``name``, or its
    number."""
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return str(value["name"])
    if isinstance(value, dict | list):
        return f"#{index + 1}"
    if isinstance(value, str) and not isinstance(_yaml_scalar(value), str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _yaml_scalar(text: str) -> Any:
    """What YAML reads ``text`` as, written bare."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text
