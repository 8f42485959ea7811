"""Round-trips the sandbox's dataclasses through JSON, for export and import of the state."""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from enum import Enum
from operator import attrgetter
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from svc_sandbox.core.clock import parse_instant

T = TypeVar("T")

#: The version of the export format (state_format.py): a change that an older sandbox could
#: not read bumps it. Here, not there, so that exporting does not import the validation models.
FORMAT = 1


#: Types ``to_json`` hands back as they are (checked by exact type first: the common case).
_PLAIN = frozenset({str, int, float, bool, type(None)})
#: The field names of each dataclass ``to_json`` met (dataclasses.fields is slow to ask).
_FIELDS: dict[type, tuple[str, ...]] = {}


def to_json(value: Any) -> Any:
    """A JSON-able copy of ``value`` (dataclasses, datetimes, decimals, enums, containers)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is dict:
        return {str(k): to_json(v) for k, v in value.items()}
    if kind is list:
        return [to_json(v) for v in value]
    names = _FIELDS.get(kind)
    if names is not None:
        return {name: to_json(getattr(value, name)) for name in names}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(value))
        return {name: to_json(getattr(value, name)) for name in names}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return value


def snapshot(value: T) -> T:
    """A copy of ``value`` that later changes to the original cannot reach: dataclasses and
    containers are copied, immutable leaves (str, int, datetime, Decimal, enums, frozen
    dataclasses: records that nothing changes once made) shared.

    Much cheaper than ``to_json``, so an export copies under the lock and encodes outside it."""
    return _copy(value)  # type: ignore[no-any-return]


def _copy(value: Any) -> Any:
    kind = _KINDS.get(type(value)) or _kind_of(type(value))
    if kind is _LEAF:
        return value
    # A leaf is asked for by type here, not by a call: most values of a record are leaves.
    if kind is _DICT:
        return {k: v if _KINDS.get(type(v)) is _LEAF else _copy(v) for k, v in value.items()}
    if kind is _LIST:
        return [v if _KINDS.get(type(v)) is _LEAF else _copy(v) for v in value]
    make, values_of = _RECORD_COPIERS[type(value)]
    return make(*[v if _KINDS.get(type(v)) is _LEAF else _copy(v) for v in values_of(value)])


_LEAF, _DICT, _LIST, _RECORD = "leaf", "dict", "list", "record"
#: How ``_copy`` treats each type it met (dataclasses.is_dataclass is too slow to ask each time).
_KINDS: dict[type, str] = {dict: _DICT, list: _LIST, str: _LEAF, int: _LEAF, type(None): _LEAF}


def _kind_of(kind: type) -> str:
    if issubclass(kind, dict):
        found = _DICT
    elif issubclass(kind, list):
        found = _LIST
    elif dataclasses.is_dataclass(kind) and kind.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        # A frozen record (an event, a provider step) never changes once made, its containers
        # included, so a snapshot shares it: copying the events and provider steps was a
        # third of the time an export holds the lock.
        found = _LEAF
    elif dataclasses.is_dataclass(kind):
        # A record is rebuilt from its fields' values, never through its ``__dict__``: a
        # slotted one has none, and reading a plain one's makes CPython build a dict that
        # then stays on the live record (one more per record and export: 10,000 dicts after
        # one export of 10,000 paid sessions). Taking a record for a leaf would hand the live
        # record to an export that is encoded after the lock is let go.
        found = _RECORD
        _RECORD_COPIERS[kind] = _record_copier(kind)
    else:
        found = _LEAF  # str, numbers, datetime, Decimal, enums
    _KINDS[kind] = found
    return found


#: For each dataclass: what makes a record from its fields' values, in order, and
#: what reads those values (attrgetter: one call in C, not one per field).
_RECORD_COPIERS: dict[type, tuple[Callable[..., Any], Callable[[Any], tuple[Any, ...]]]] = {}


def _record_copier(kind: type) -> tuple[Callable[..., Any], Callable[[Any], tuple[Any, ...]]]:
    """The class itself rebuilds a copy (its __init__: one assignment per field, in bytecode),
    so every field must be an init field and nothing may run after them."""
    fields = dataclasses.fields(kind)
    if not all(f.init for f in fields) or hasattr(kind, "__post_init__"):
        raise TypeError(f"{kind.__name__}: a record of the state takes every field in __init__")
    names = [f.name for f in fields]
    values_of = attrgetter(*names) if len(names) > 1 else lambda value: (getattr(value, names[0]),)
    return kind, values_of


def from_json(cls: type[T], data: Any) -> T:
    """Rebuilds an instance of dataclass ``cls`` from what ``to_json`` made of it."""
    return _convert(cls, data)  # type: ignore[no-any-return]


@functools.cache
def _fields_of(cls: type) -> tuple[dict[str, Any], frozenset[str]]:
    """A dataclass's resolved field types and its init fields (get_type_hints is slow)."""
    hints = get_type_hints(cls)
    return hints, frozenset(f.name for f in dataclasses.fields(cls) if f.init)


def _convert(annotation: Any, data: Any) -> Any:
    if data is None:
        return None
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        return _convert(options[0], data) if len(options) == 1 else data
    if origin is list:
        (item,) = get_args(annotation) or (Any,)
        return [_convert(item, v) for v in data]
    if origin is dict:
        _, item = get_args(annotation) or (str, Any)
        return {k: _convert(item, v) for k, v in data.items()}
    if annotation is datetime:
        return parse_instant(data)
    if annotation is Decimal:
        return Decimal(data)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return annotation(data)
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        hints, known = _fields_of(annotation)
        return annotation(**{k: _convert(hints[k], v) for k, v in data.items() if k in known})
    return data
