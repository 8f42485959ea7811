"""What any JSON document a client sends must be, checked once at the edge for every route:
nested at most ``MAX_DEPTH`` levels, numbers finite, strings (values and keys) made of Unicode
scalar values without NUL. A refusal is a 400 naming the limit or the field path.

Why at the edge: a document 10,000 levels deep breaks the parser (RecursionError), a deep one
that parses breaks every later export, encode and import; a lone surrogate cannot be encoded as
UTF-8 (webhook bodies, strict JSON clients); ``1e309`` parses as infinity, which JSON cannot
carry back out. One walk refuses them all, whatever route or field they arrive in.

A name written twice in one object (``{"amountMinor": 100, "amountMinor": 250}``) is refused
with its path, ``<path> is repeated: send it once`` (the identity provider's words for a
repeated parameter): RFC 8259 §4 says names SHOULD be unique and receivers differ (the last
wins here, the first elsewhere), so the sandbox refuses what a server could read either way.
It costs next to nothing on a body without one: every name of the text has one ``:`` outside
strings, so when the decoded objects hold as many names as the text has colons, no name was
repeated (the common case: no string holds a colon); otherwise the colons left once the
text's strings are taken out are counted (one regular expression); only when there are more
than names is the text decoded again, keeping each object's pairs, to name the path.

An integer longer than Python converts (``sys.get_int_max_str_digits()``, 4300 digits: a
guard against quadratic-time conversion, left as it is) is valid JSON but too big for any
field: NumberTooLong names its path and the limit (the decoder's own message would call the
body invalid JSON and advise raising the limit).
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.text import lone_surrogate
from svc_sandbox.core.validation import field_path, repeated, too_long_message

#: Deepest nesting of arrays and objects a body may have (the body itself is level 1).
MAX_DEPTH = 64


def _keep_constant(name: str) -> float:
    # NaN, Infinity, -Infinity: not JSON; kept as floats so that the walk names their path.
    return float(name.replace("Infinity", "inf"))


#: The last document each thread decoded, by the identity of its text: the contract check
#: and the route both read a request's body (the same bytes object), so the second read is
#: free. Holding ``raw`` keeps its identity from being reused by another object; only small
#: texts are kept (a state import must not stay in memory until the next request).
_last = threading.local()
MEMO_BYTES = 64 * 1024


def decode(raw: bytes | str, what: str = "body") -> Any:
    """Parses ``raw`` and checks it as a whole (see the module docstring)."""
    if getattr(_last, "raw", None) is raw and _last.what == what:
        return _last.value
    value = _decode(raw, what)
    if len(raw) <= MEMO_BYTES:
        _last.raw, _last.what, _last.value = raw, what, value
    return value


class NumberTooLong(ValidationFailed):
    """A JSON integer with more digits than Python converts: valid JSON, too big for any field.
    ``path`` is where it is in the document (``()``: the document itself), ``negative`` its
    sign (a route may answer "too large" or "too small" for its field)."""

    def __init__(self, what: str, path: tuple[int | str, ...], negative: bool) -> None:
        super().__init__(too_long_message(_where(what, path)))
        self.path = path
        self.negative = negative


@dataclass(frozen=True)
class LongInteger:
    """Stands for an integer too long to convert (in a body while its path is looked for, in
    a query value while the contract check words it)."""

    negative: bool


def integer(text: str) -> int | LongInteger:
    """The integer of ``text`` (``-?[0-9]+``), or a LongInteger when it has more digits than
    Python converts (``int()`` would raise ValueError)."""
    negative = text.startswith("-")
    # Leading zeros (a query value may have them; JSON may not) are no digits of the number,
    # but int() counts them against its limit.
    digits = text.lstrip("-").lstrip("0") or "0"
    limit = sys.get_int_max_str_digits()
    if limit and len(digits) > limit:
        return LongInteger(negative)
    return -int(digits) if negative else int(digits)


#: One decoder for every body (``json.loads`` with an option builds a new one per call).
_DECODER = json.JSONDecoder(parse_constant=_keep_constant)
#: Only after _DECODER refused a too-long integer: the same parse, marking where it is.
_LOCATOR = json.JSONDecoder(parse_constant=_keep_constant, parse_int=integer)


#: What the decoder said, by Python 3.11 and 3.12, just after a trailing comma: where 3.13
#: says "Illegal trailing comma before end of <object|array>" at the comma.
_AFTER_TRAILING_COMMA = {
    ("Expecting property name enclosed in double quotes", "}"): "object",
    ("Expecting value", "]"): "array",
}
_JSON_WHITESPACE = " \t\n\r"


def decode_error(exc: json.JSONDecodeError) -> str:
    """``exc`` worded the same on every Python the package supports (same request, same
    bytes): a trailing comma as 3.13 words it, at the comma; everything else as the decoder
    says it (3.11 to 3.13 agree on the rest of what a body can get wrong)."""
    end = exc.doc[exc.pos : exc.pos + 1]
    closes = _AFTER_TRAILING_COMMA.get((exc.msg, end))
    comma = len(exc.doc[: exc.pos].rstrip(_JSON_WHITESPACE)) - 1
    if closes is None or comma < 0 or exc.doc[comma] != ",":
        return str(exc)
    return str(
        json.JSONDecodeError(f"Illegal trailing comma before end of {closes}", exc.doc, comma)
    )


def _decode(raw: bytes | str, what: str) -> Any:
    try:
        # As json.loads does: UTF-8, -16 or -32, by the BOM.
        text = (
            raw if isinstance(raw, str) else raw.decode(json.detect_encoding(raw), "surrogatepass")
        )
        value = _DECODER.decode(text)
    except RecursionError:
        raise _too_deep(what) from None
    except json.JSONDecodeError as exc:
        raise ValidationFailed(f"{what} is not valid JSON: {decode_error(exc)}") from None
    except UnicodeDecodeError as exc:
        raise ValidationFailed(f"{what} is not valid JSON: {exc}") from None
    except ValueError:  # the only other one: an integer past sys.get_int_max_str_digits()
        _locate_long_integer(text, what)
        raise
    names = _clean(value)
    if names is None:
        _report(value, what)
    elif names != text.count(":"):  # a colon in a string, or a name written twice
        _check_names_once(text, names)
    return value


class _Repeated(dict[str, Any]):
    """An object in which ``name`` was written more than once (only while it is looked for)."""

    name: str


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) == len(pairs):
        return found
    marked = _Repeated(found)
    seen: set[str] = set()
    for name, _ in pairs:
        if name in seen:
            marked.name = name
            break
        seen.add(name)
    return marked


#: Only when the names of a body and the colons of its text do not add up (``_decode``).
_PAIRS = json.JSONDecoder(parse_constant=_keep_constant, object_pairs_hook=_pairs)


#: A string of a JSON text (escapes included), to count the colons outside strings.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')


def _check_names_once(text: str, names: int) -> None:
    """Raises for the first object (in document order) of ``text`` that has a name written
    twice; ``names`` is the number of names its objects hold once decoded. Each name of the
    text has one colon outside strings: when there are more such colons than names, a name
    was written twice, and the text is decoded again keeping each object's pairs to name it."""
    if _STRING.sub("", text).count(":") == names:
        return  # the colons were in strings
    stack: list[tuple[Any, tuple[int | str, ...]]] = [(_PAIRS.decode(text), ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, _Repeated):
            raise ValidationFailed(repeated(field_path((*path, item.name))))
        if isinstance(item, dict):
            stack.extend((child, (*path, key)) for key, child in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((child, (*path, i)) for i, child in reversed(list(enumerate(item))))


def nesting(value: Any) -> int:
    """How many levels of objects and arrays ``value`` nests (0 for a scalar)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if type(node) is dict or type(node) is list:
            deepest = max(deepest, depth + 1)
            children = node.values() if type(node) is dict else node
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _too_deep(what: str) -> ValidationFailed:
    return ValidationFailed(f"{what} nests deeper than {MAX_DEPTH} levels")


def _locate_long_integer(text: str, what: str) -> None:
    """Raises NumberTooLong for the first too-long integer of ``text`` (or, parsing it again
    with markers in their place, the depth limit first met on the way)."""
    try:
        value = _LOCATOR.decode(text)
    except RecursionError:
        raise _too_deep(what) from None
    stack: list[tuple[Any, tuple[int | str, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, LongInteger):
            raise NumberTooLong(what, path, item.negative)
        if isinstance(item, dict):
            stack.extend((child, (*path, key)) for key, child in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((child, (*path, i)) for i, child in reversed(list(enumerate(item))))


def check(value: Any, what: str = "body") -> None:
    """Refuses ``value`` with the path of its first problem (see the module docstring)."""
    if _clean(value) is None:
        _report(value, what)


def _clean(value: Any) -> int | None:
    """The fast walk (no paths, no recursion, leaves never stacked): the number of names of
    all its objects when all is well, else None."""
    names = 0
    stack: list[tuple[Any, int]] = [([value], 0)]  # a wrapper: the body may be a scalar
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return None
        children: Iterable[tuple[Any, Any]]
        if type(node) is dict:
            names += len(node)
            children = node.items()
        else:
            children = enumerate(node)
        for key, child in children:
            if type(key) is str and (not key.isascii() or "\x00" in key) and _string_problem(key):
                return None
            kind = type(child)
            if kind is str:
                if (not child.isascii() or "\x00" in child) and _string_problem(child):
                    return None
            elif kind is dict or kind is list:
                stack.append((child, depth + 1))
            elif kind is float and not math.isfinite(child):
                return None
    return names


def _report(value: Any, what: str) -> None:
    """The slow walk, only for a value the fast one refused: finds the path and raises."""
    stack: list[tuple[Any, tuple[int | str, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict | list):
            if len(path) >= MAX_DEPTH:
                raise _too_deep(what)
            if isinstance(item, dict):
                for key, child in item.items():
                    problem = _string_problem(key)
                    if problem:
                        raise ValidationFailed(f"{_where(what, path)} has a key that {problem}")
                    stack.append((child, (*path, key)))
            else:
                stack.extend((child, (*path, i)) for i, child in enumerate(item))
        elif isinstance(item, str):
            problem = _string_problem(item)
            if problem:
                raise ValidationFailed(f"{_where(what, path)} {problem}")
        elif isinstance(item, float) and not math.isfinite(item):
            raise ValidationFailed(f"{_where(what, path)} must be a finite number")


def _string_problem(text: str) -> str | None:
    if lone_surrogate(text):
        return "must be valid Unicode (it contains a lone surrogate)"
    return "must not contain NUL characters" if "\x00" in text else None


def _where(what: str, path: tuple[int | str, ...]) -> str:
    return field_path(path) if path else what
