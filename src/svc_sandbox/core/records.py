"""Round-trips the sandbox's dataclasses through JSON, for export and import of the state."""

from __future__ import annotations

import copy
import dataclasses
import types
from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from svc_sandbox.core.clock import parse_instant

T = TypeVar("T")


def to_json(value: Any) -> Any:
    """A JSON-able copy of ``value`` (dataclasses, datetimes, decimals, enums, containers)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
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
    containers are copied, immutable leaves (str, int, datetime, Decimal, enums) shared.

    Much cheaper than ``to_json``, so an export copies under the lock and encodes outside it."""
    if isinstance(value, dict):
        return {k: snapshot(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [snapshot(v) for v in value]  # type: ignore[return-value]
    names = _FIELDS.get(type(value))
    if names is None:
        if not dataclasses.is_dataclass(value) or isinstance(value, type):
            return value
        names = _FIELDS[type(value)] = tuple(f.name for f in dataclasses.fields(value))
    copied = copy.copy(value)
    for name in names:
        item = getattr(value, name)
        if isinstance(item, dict | list) or dataclasses.is_dataclass(item):
            object.__setattr__(copied, name, snapshot(item))
    return copied


#: The field names of each dataclass snapshot has copied (dataclasses.fields is slow).
_FIELDS: dict[type, tuple[str, ...]] = {}


def from_json(cls: type[T], data: Any) -> T:
    """Rebuilds an instance of dataclass ``cls`` from what ``to_json`` made of it."""
    return _convert(cls, data)  # type: ignore[no-any-return]


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
        hints = get_type_hints(annotation)
        known = {f.name for f in dataclasses.fields(annotation) if f.init}
        return annotation(**{k: _convert(hints[k], v) for k, v in data.items() if k in known})
    return data
