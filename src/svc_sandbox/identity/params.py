"""Checks of OAuth request parameters (query or form), before any state is touched: a
parameter repeated, missing, longer than 2,000 characters or holding control characters is
``invalid_request`` naming it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from svc_sandbox.core.validation import repeated
from svc_sandbox.identity.errors import InvalidRequest

MAX_LENGTH = 2000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

Params = Mapping[str, Sequence[str]]


def problem(params: Params, name: str) -> str | None:
    """What is wrong with parameter ``name`` (missing is not a problem here), or None."""
    values = params.get(name, ())
    if len(values) > 1:
        return repeated(name)
    if values and len(values[0]) > MAX_LENGTH:
        return f"{name} is longer than {MAX_LENGTH} characters"
    if values and has_control_characters(values[0]):
        return f"{name} contains control characters"
    return None


def has_control_characters(value: str) -> bool:
    """What every OAuth parameter is refused for (C0 and DEL), and so a password the sign-in
    form could never send (identity/users.py refuses it when set)."""
    return _CONTROL.search(value) is not None


def check_all(params: Params, names: Sequence[str] | None = None) -> None:
    """Every parameter (or every one of ``names``) well-formed. A nameless field (``&=x``) is
    an unknown parameter, ignored like the others."""
    for name in names if names is not None else [n for n in params if n]:
        message = problem(params, name)
        if message:
            raise InvalidRequest(message)


def optional(params: Params, name: str) -> str | None:
    """The single value of ``name``; None when absent or empty (RFC 6749 §3.1)."""
    message = problem(params, name)
    if message:
        raise InvalidRequest(message)
    values = params.get(name, ())
    return values[0] if values and values[0] != "" else None


def required(params: Params, name: str) -> str:
    value = optional(params, name)
    if value is None:
        raise InvalidRequest(f"{name} is missing")
    return value
