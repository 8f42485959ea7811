"""Expectations on JSON values: subset matches, simple paths and the ``$`` matchers.

An expected mapping matches when every key it names matches (other keys may exist); a list
matches element by element with the same length; a scalar matches by equality. A mapping whose
keys all start with ``$`` is a matcher: ``$any``, ``$absent``, ``$regex``, ``$gte``, ``$lte``,
``$gt``, ``$lt``, ``$ne``, ``$len``, ``$contains``, ``$type``, ``$iso8601``, ``$hex24``, ``$in``.
The strings ``"$any"``, ``"$absent"``, ``"$iso8601"`` and ``"$hex24"`` are short forms.

Only the file's own text makes matchers: a value that came from a variable (``Verbatim``, made
by ``templating.render``) is data, compared as written even when it reads ``"$any"``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()

HEX24 = re.compile(r"[0-9a-f]{24}")
TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "object": dict,
    "array": list,
    "null": type(None),
}


@dataclass(frozen=True)
class Verbatim:
    """A value a variable put into an expectation: data, never a matcher."""

    value: Any


class VerbatimKey(str):
    """A mapping key a variable wrote: a mapping holding one is data, never a matcher."""

    __slots__ = ()


def plain(value: Any) -> Any:
    """``value`` without its ``Verbatim`` marks (for reports)."""
    if isinstance(value, Verbatim):
        return plain(value.value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def _iso8601(value: Any) -> bool:
    if not isinstance(value, str) or "T" not in value:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type(actual: Any, name: Any) -> bool:
    wanted = TYPES.get(str(name))
    if wanted is None:
        return False
    if isinstance(actual, bool) and name != "boolean":
        return False
    return isinstance(actual, wanted)


def _len(actual: Any, expected: Any) -> list[str]:
    if not isinstance(actual, str | list | dict):
        return [f"has no length: {actual!r}"]
    return match(expected, len(actual), "length")


def same(expected: Any, actual: Any) -> bool:
    """Equality of JSON values: ``1`` is not ``true`` (Python says it is), ``1`` is ``1.0``."""
    return expected == actual and isinstance(expected, bool) == isinstance(actual, bool)


def _contains(actual: Any, expected: Any) -> bool:
    if isinstance(actual, str):
        return str(plain(expected)) in actual
    if isinstance(actual, list):
        return any(not match(expected, item) for item in actual)
    return False


#: Each matcher: (actual, argument) -> True when it holds.
CHECKS: dict[str, Callable[[Any, Any], bool]] = {
    "$any": lambda actual, arg: actual is not MISSING,
    "$regex": lambda actual, arg: isinstance(actual, str) and re.search(arg, actual) is not None,
    "$gte": lambda actual, arg: _number(actual) and actual >= arg,
    "$lte": lambda actual, arg: _number(actual) and actual <= arg,
    "$gt": lambda actual, arg: _number(actual) and actual > arg,
    "$lt": lambda actual, arg: _number(actual) and actual < arg,
    "$ne": lambda actual, arg: not same(arg, actual),
    "$in": lambda actual, arg: any(same(item, actual) for item in arg),
    "$type": _type,
    "$contains": _contains,
    "$iso8601": lambda actual, arg: _iso8601(actual) == bool(arg),
    "$hex24": lambda actual, arg: (
        (isinstance(actual, str) and bool(HEX24.fullmatch(actual))) == bool(arg)
    ),
}
MATCHERS = (*CHECKS, "$len", "$absent")
SHORT_FORMS = ("$any", "$absent", "$iso8601", "$hex24")


def is_matcher(expected: Any) -> bool:
    return (
        isinstance(expected, dict)
        and bool(expected)
        and all(
            isinstance(k, str) and k.startswith("$") and not isinstance(k, VerbatimKey)
            for k in expected
        )
    )


def match(expected: Any, actual: Any, where: str = "", data: bool = False) -> list[str]:
    """Every way ``actual`` differs from ``expected``; empty when it matches. ``data``: the
    expectation came from a variable, so ``$`` forms in it are text, not matchers."""
    label = where or "value"
    if isinstance(expected, Verbatim):
        return match(expected.value, actual, where, data=True)
    if not data and isinstance(expected, str) and expected in SHORT_FORMS:
        expected = {expected: True}
    if not data and is_matcher(expected):
        return _match_matcher(expected, actual, label)
    if actual is MISSING:
        return [f"{label}: missing (expected {expected!r})"]
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{label}: expected an object, got {actual!r}"]
        found: list[str] = []
        for key, item in expected.items():
            label = f"{where}.{key}" if where else key
            found += match(item, actual.get(key, MISSING), label, data)
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{label}: expected a list, got {actual!r}"]
        if len(expected) != len(actual):
            return [f"{label}: expected {len(expected)} items, got {len(actual)}"]
        found = []
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found += match(want, got, f"{where}[{index}]", data)
        return found
    return [] if same(expected, actual) else [f"{label}: expected {expected!r}, got {actual!r}"]


def _match_matcher(expected: dict[str, Any], actual: Any, label: str) -> list[str]:
    found: list[str] = []
    for name, argument in expected.items():
        if name == "$absent":
            if (actual is MISSING) != bool(argument):
                found.append(f"{label}: expected {'absent' if argument else 'present'}")
            continue
        if name == "$len":
            found += [f"{label}: {m}" for m in _len(actual, argument)]
            continue
        check = CHECKS.get(name)
        if check is None:
            found.append(f"{label}: unknown matcher {name} (known: {', '.join(MATCHERS)})")
            continue
        if name != "$contains":
            argument = plain(argument)
        if not check(actual, argument):
            found.append(f"{label}: expected {name} {plain(argument)!r}, got {actual!r}")
    return found


#: Parts of ``expect`` and ``expect_webhook`` that hold expected values (matchers allowed);
#: ``headers`` and ``paths`` map a name to one.
EXPECTED = ("json", "data")
EXPECTED_BY_NAME = ("headers", "paths")


def expectations(spec: dict[str, Any]) -> Iterator[tuple[Any, tuple[str | int, ...]]]:
    """Each expected value of an ``expect`` or ``expect_webhook`` with its path in it."""
    for key in EXPECTED:
        if key in spec:
            yield spec[key], (key,)
    for key in EXPECTED_BY_NAME:
        if isinstance(spec.get(key), dict):
            for name, value in spec[key].items():
                yield value, (key, str(name))


def argument_problems(
    expected: Any, at: tuple[str | int, ...] = (), later: Callable[[Any], bool] | None = None
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Each matcher inside ``expected`` that cannot be checked as written (an unknown name,
    ``$gte: "abc"``, ``$regex: "["``), with its path below ``at``. ``later``: arguments only
    known when the step runs (a ``${variable}``), left for then."""
    if isinstance(expected, Verbatim):
        return
    if isinstance(expected, list):
        for index, item in enumerate(expected):
            yield from argument_problems(item, at + (index,), later)
        return
    if not isinstance(expected, dict):
        return
    if not is_matcher(expected):
        for key, item in expected.items():
            yield from argument_problems(item, at + (str(key),), later)
        return
    for name, argument in expected.items():
        where = at + (name,)
        if name not in MATCHERS:
            yield where, f"unknown matcher {name} (known: {', '.join(MATCHERS)})"
        elif name in ("$len", "$contains"):
            if name == "$len" and not _length_argument(argument, later):
                yield where, f"$len needs a length or a matcher, got {plain(argument)!r}"
            yield from argument_problems(argument, where, later)
        elif later is None or not later(argument):
            problem = _argument_problem(name, plain(argument))
            if problem:
                yield where, problem


def _length_argument(argument: Any, later: Callable[[Any], bool] | None) -> bool:
    value = plain(argument)
    if later is not None and later(argument):
        return True
    if isinstance(value, int) and not isinstance(value, bool):
        return value >= 0
    return is_matcher(argument)


def _argument_problem(name: str, argument: Any) -> str | None:
    if name in ("$gte", "$lte", "$gt", "$lt") and not _number(argument):
        return f"{name} needs a number, got {argument!r}"
    if name == "$in" and not isinstance(argument, list):
        return f"$in needs a list of values, got {argument!r}"
    if name == "$type" and (not isinstance(argument, str) or argument not in TYPES):
        return f"$type needs one of {', '.join(TYPES)}, got {argument!r}"
    if name == "$regex":
        if not isinstance(argument, str):
            return f"$regex needs a regular expression (text), got {argument!r}"
        try:
            re.compile(argument)
        except re.error as exc:
            return f"$regex {argument!r} is not a regular expression: {exc}"
    return None


#: An index is ASCII digits: ``\d`` would read ``items[\u0661]`` (Arabic-Indic one) as
#: ``items[1]``.
_SEGMENT = re.compile(r"\.?([^.\[\]]+)|\[(\*|-?[0-9]+)\]")


def resolve(document: Any, path: str) -> Any:
    """A simple path into JSON: ``items[0]._id``, ``$.items[*].status`` (``[*]`` gives a list),
    ``product.metadata.key``. Missing parts give MISSING; so does ``[*]`` when none of what
    it spreads is a list or object (``itemz[*]`` read as ``[]`` passed ``$len: 0`` for a
    misspelt key); one element without the list adds nothing."""
    text = path[1:] if path.startswith("$") else path
    values: list[Any] = [document]
    spread = False
    position = 0
    while position < len(text):
        step = _SEGMENT.match(text, position)
        if step is None or step.end() == position:
            raise ValueError(f"cannot read path {path!r} at {text[position:]!r}")
        position = step.end()
        key, index = step.group(1), step.group(2)
        next_values: list[Any] = []
        if index == "*" and values and not any(isinstance(v, list | dict) for v in values):
            return MISSING  # nothing it reaches can be spread (a misspelt key): never []
        for value in values:
            if index == "*":
                spread = True
                if isinstance(value, list):
                    next_values += value
                elif isinstance(value, dict):
                    next_values += list(value.values())
            elif index is not None:
                number = int(index)
                ok = isinstance(value, list) and -len(value) <= number < len(value)
                next_values.append(value[number] if ok else MISSING)
            else:
                ok = isinstance(value, dict) and key in value
                next_values.append(value[key] if ok else MISSING)
        values = next_values
    return values if spread else values[0]


def check_path(path: str) -> str | None:
    """Why ``path`` cannot be read, or None."""
    try:
        resolve({}, path)
    except ValueError as exc:
        return str(exc)
    return None
