"""Subset matches, paths and the $ matchers, as a table of (expected, actual, matches)."""

from __future__ import annotations

from typing import Any

import pytest

from svc_sandbox.scenarios.matchers import (
    MISSING,
    Verbatim,
    VerbatimKey,
    argument_problems,
    check_path,
    match,
    resolve,
)

CASES: list[tuple[Any, Any, bool]] = [
    ({"a": 1}, {"a": 1, "b": 2}, True),
    ({"a": 1}, {"a": 2}, False),
    ({"a": {"b": [1, 2]}}, {"a": {"b": [1, 2], "c": 0}}, True),
    ([1, 2], [1, 2, 3], False),
    (1, True, False),
    (True, 1, False),
    (1, 1.0, True),
    (None, None, True),
    ("$any", "x", True),
    ("$any", MISSING, False),
    ({"k": "$absent"}, {"j": 1}, True),
    ({"k": "$absent"}, {"k": None}, False),
    ({"$regex": "^p_"}, "p_abc", True),
    ({"$regex": "^p_"}, 5, False),
    ({"$gte": 10, "$lte": 20}, 15, True),
    ({"$gte": 10}, 9, False),
    ({"$gt": 10}, 10, False),
    ({"$lt": 10}, 9.5, True),
    ({"$gte": 0}, "5", False),
    ({"$len": 2}, [1, 2], True),
    ({"$len": {"$gte": 3}}, "ab", False),
    ({"$len": 1}, 5, False),
    ("$iso8601", "2026-01-01T00:30:00.000Z", True),
    ("$iso8601", "2026-01-01", False),
    ({"$iso8601": False}, "soon", True),
    ("$hex24", "5dfbd3d12c4a3698aa2ca1af", True),
    ("$hex24", "5DFBD3D12C4A3698AA2CA1AF", False),
    ({"$ne": "a"}, "b", True),
    ({"$in": ["a", "b"]}, "c", False),
    ({"$contains": "guard"}, "the retry guard", True),
    ({"$contains": {"code": "x"}}, [{"code": "y"}, {"code": "x"}], True),
    ({"$type": "integer"}, True, False),
    ({"$type": "null"}, None, True),
    ({"$nope": 1}, 1, False),
]


@pytest.mark.parametrize(("expected", "actual", "matches"), CASES)
def test_match(expected: Any, actual: Any, matches: bool) -> None:
    problems = match(expected, actual, "body")
    assert (problems == []) is matches, problems


#: JSON values that Python's == mixes up: 1 == True == 1.0 and 0 == False.
SCALARS: list[Any] = [1, True, 1.0, 0, False]


def _json_equal(a: Any, b: Any) -> bool:
    """The documented rule, written out: numbers by value, booleans only with booleans."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    return bool(a == b)


@pytest.mark.parametrize("actual", SCALARS, ids=repr)
@pytest.mark.parametrize("argument", SCALARS, ids=repr)
def test_ne_and_in_use_the_same_equality_as_plain_values(argument: Any, actual: Any) -> None:
    equal = _json_equal(argument, actual)
    assert (match(argument, actual) == []) is equal
    assert (match({"$in": [argument]}, actual) == []) is equal
    assert (match({"$ne": argument}, actual) == []) is not equal


def test_a_mismatch_names_where_and_what() -> None:
    assert match({"a": {"b": [1, {"c": 2}]}}, {"a": {"b": [1, {"c": 3}]}}) == [
        "a.b[1].c: expected 2, got 3"
    ]


DOC = {
    "items": [{"_id": "x", "tags": ["a"]}, {"_id": "y", "tags": []}],
    "total": 2,
    "mixed": [{"tags": ["a"]}, {"tags": None}, {}],
    "none": [],
}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("total", 2),
        ("$.total", 2),
        ("items[0]._id", "x"),
        ("items[-1]._id", "y"),
        ("$.items[*]._id", ["x", "y"]),
        ("items[0].tags[0]", "a"),
        ("items[5]._id", MISSING),
        ("nothing.here", MISSING),
        ("$", DOC),
        ("items[*].tags[*]", ["a"]),
        # Nothing to spread is no path (read as [], "itemz[*]" passed {$len: 0}).
        ("itemz[*]", MISSING),
        ("itemz[*]._id", MISSING),
        ("total[*]", MISSING),
        ("items[*]._id[*]", MISSING),
        ("items[*].tagz[*]", MISSING),
        # One element without the list adds nothing; the others are spread.
        ("mixed[*].tags[*]", ["a"]),
        # An empty list spreads to nothing, however deep (a listing with no items).
        ("none[*].tags[*]", []),
    ],
)
def test_resolve(path: str, value: Any) -> None:
    assert resolve(DOC, path) == value


def test_an_unreadable_path_is_reported() -> None:
    assert check_path("items[x]") is not None
    assert check_path("items[0].a") is None


#: Digits of other scripts: Arabic-Indic one, fullwidth zero, Devanagari one, superscript two.
OTHER_DIGITS = ["\u0661", "\uff10", "\u0967", "\u00b2"]


@pytest.mark.parametrize("digit", OTHER_DIGITS)
def test_an_index_is_ascii_digits_only(digit: str) -> None:
    """docs/scenarios.md: paths are ``a[0]``; ``items[\u0661]`` is no ``items[1]``."""
    assert check_path(f"items[{digit}].title") is not None
    with pytest.raises(ValueError, match="cannot read path"):
        resolve(DOC, f"items[{digit}]._id")


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        (Verbatim("$any"), "x", False),
        (Verbatim("$any"), "$any", True),
        (Verbatim("$absent"), MISSING, False),
        (Verbatim({"$gte": 1}), 5, False),
        (Verbatim({"$gte": 1}), {"$gte": 1}, True),
        ({"a": Verbatim(["$hex24"])}, {"a": ["$hex24"]}, True),
        ({VerbatimKey("$any"): 1}, {"$any": 1}, True),
        ({"$gte": Verbatim(1)}, 5, True),
        ({"$in": [Verbatim("a")]}, "a", True),
        ({"$contains": Verbatim("$any")}, ["x"], False),
    ],
)
def test_what_a_variable_wrote_is_data(expected: Any, actual: Any, matches: bool) -> None:
    assert (match(expected, actual) == []) is matches


@pytest.mark.parametrize(
    ("expected", "problems"),
    [
        ({"a": {"$gte": "1"}}, [(("a", "$gte"), "$gte needs a number, got '1'")]),
        ({"$in": "ab"}, [(("$in",), "$in needs a list of values, got 'ab'")]),
        (
            [{"$type": "int"}],
            [
                (
                    (0, "$type"),
                    "$type needs one of string, integer, number, boolean, object, array, null, "
                    "got 'int'",
                )
            ],
        ),
        ({"$regex": 1}, [(("$regex",), "$regex needs a regular expression (text), got 1")]),
        ({"$len": -1}, [(("$len",), "$len needs a length or a matcher, got -1")]),
        ({"$contains": {"$lt": None}}, [(("$contains", "$lt"), "$lt needs a number, got None")]),
        ({"$gte": 1, "$regex": "^a", "$len": {"$lt": 3}, "$in": [1], "$type": "null"}, []),
        (Verbatim({"$gte": "1"}), []),
        ({"$gte": "${low}"}, []),
    ],
)
def test_matcher_arguments_are_checked(expected: Any, problems: list[Any]) -> None:
    def later(value: Any) -> bool:
        return isinstance(value, str) and value.startswith("${")

    assert list(argument_problems(expected, (), later)) == problems
