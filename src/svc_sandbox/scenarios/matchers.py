"""Expectations on JSON values: subset matches, simple paths and the ``$`` matchers.

An expected mapping matches when every key it names matches (other keys may exist); a list
matches element by element with the same length; a scalar matches by equality. A mapping whose
keys all start with ``$`` is a matcher: ``$any``, ``$absent``, ``$regex``, ``$gte``, ``$lte``,
``$gt``, ``$lt``, ``$ne``, ``$len``, ``$contains``, ``$type``, ``$iso8601``, ``$hex24``, ``$in``.
The strings ``"$any"``, ``"$absent"``, ``"$iso8601"`` and ``"$hex24"`` are short forms.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()

HEX24 = re.compile(r"^[0-9a-f]{24}$")
TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "object": dict,
    "array": list,
    "null": type(None),
}


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
        return str(expected) in actual
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
        (isinstance(actual, str) and bool(HEX24.match(actual))) == bool(arg)
    ),
}
MATCHERS = (*CHECKS, "$len", "$absent")
SHORT_FORMS = ("$any", "$absent", "$iso8601", "$hex24")


def is_matcher(expected: Any) -> bool:
    return (
        isinstance(expected, dict)
        and bool(expected)
        and all(isinstance(k, str) and k.startswith("$") for k in expected)
    )


def match(expected: Any, actual: Any, where: str = "") -> list[str]:
    """Every way ``actual`` differs from ``expected``; empty when it matches."""
    label = where or "value"
    if isinstance(expected, str) and expected in SHORT_FORMS:
        expected = {expected: True}
    if is_matcher(expected):
        return _match_matcher(expected, actual, label)
    if actual is MISSING:
        return [f"{label}: missing (expected {expected!r})"]
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{label}: expected an object, got {actual!r}"]
        found: list[str] = []
        for key, item in expected.items():
            found += match(item, actual.get(key, MISSING), f"{where}.{key}" if where else key)
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{label}: expected a list, got {actual!r}"]
        if len(expected) != len(actual):
            return [f"{label}: expected {len(expected)} items, got {len(actual)}"]
        found = []
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found += match(want, got, f"{where}[{index}]")
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
        elif not check(actual, argument):
            found.append(f"{label}: expected {name} {argument!r}, got {actual!r}")
    return found


_SEGMENT = re.compile(r"\.?([^.\[\]]+)|\[(\*|-?\d+)\]")


def resolve(document: Any, path: str) -> Any:
    """A simple path into JSON: ``items[0]._id``, ``$.items[*].status`` (``[*]`` gives a list),
    ``product.metadata.key``. Missing parts give MISSING."""
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
