"""Checks of OAuth request parameters (query or form), before any state is touched: a
parameter an endpoint reads that is repeated, missing, longer than 2,000 characters or holding
control characters is ``invalid_request`` naming it. A parameter no endpoint reads is ignored,
whatever it holds (RFC 6749 §3.1, §3.2: "MUST ignore unrecognized request parameters")."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

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


def check_all(params: Params, names: Collection[str]) -> None:
    """Every one of ``names`` that was sent is well-formed, checked in the order sent (the
    first malformed one is named). Any other parameter, a nameless field (``&=x``) included,
    is one the endpoint does not read: ignored, repeated or not, whatever its value."""
    for name in params:
        if name in names:
            message = problem(params, name)
            if message:
                raise InvalidRequest(message)


def optional(params: Params, name: str) -> str | None:
    """The single value of ``name``; None when absent or empty (RFC 6749 §3.1)."""
    message = problem(params, name)
    if message:
        raise InvalidRequest(message)
    return _single(params, name)


def required(params: Params, name: str) -> str:
    return _present(optional(params, name), name)


def presented(params: Params, name: str) -> str:
    """A value the endpoint only compares with what it issued, never parses (introspection's
    and revocation's ``token``): required and sent once (which of two to act on would be a
    guess), but of any length and any characters. One this provider could never have issued
    (over 2,000 characters, control characters) is an unknown token: RFC 7662 §2.2 answers it
    ``active: false``, RFC 7009 §2.2 with 200, not with an error."""
    if len(params.get(name, ())) > 1:
        raise InvalidRequest(repeated(name))
    return _present(_single(params, name), name)


def _single(params: Params, name: str) -> str | None:
    values = params.get(name, ())
    return values[0] if values and values[0] != "" else None


def _present(value: str | None, name: str) -> str:
    if value is None:
        raise InvalidRequest(f"{name} is missing")
    return value
