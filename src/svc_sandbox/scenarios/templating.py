"""``${var}`` in scenario values: bound from ``vars``, the matrix row, ``save`` and the runner.

``${var.key[0]}`` reads into a structured value. A string that is exactly one reference
becomes the value with its type (an integer stays an integer); anywhere else the value is
formatted into the text. ``$${`` writes ``${``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from svc_sandbox.scenarios.matchers import MISSING, resolve
from svc_sandbox.scenarios.model import DocPath

_NAME = r"([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_-]+|\[-?\d+\])*)"
REFERENCE = re.compile(r"\$\$\{|\$\{" + _NAME + r"\}")
_WHOLE = re.compile(r"^\$\{" + _NAME + r"\}$")

#: Variables the runner computes at each use.
DYNAMIC = ("now", "now_unix", "uuid", "random_hex")
#: Variables the runner binds before the first step (credentials, roots, ids of the target).
PROVIDED = (
    "token",
    "production_token",
    "org_id",
    "production_org_id",
    "base_url",
    "auth_url",
    "wallet_base_url",
    "resource_url",
    "pay_url",
    "simulate_url",
    "product_page_url",
    "provider_url",
    "control_url",
    "webhook_url",
    "webhook_secret",
    "webhook_endpoint_id",
    "seed",
    # the identity provider's seeded state (GET /_sandbox, ``identity``)
    "client_id",
    "client_secret",
    "redirect_uri",
    "public_client_id",
    "user_ids",
)


class UnboundVariable(KeyError):
    """A reference to a variable that has no value at this point of the run."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def references(value: Any, path: DocPath = ()) -> Iterator[tuple[str, DocPath]]:
    """Every ``${name}`` inside ``value`` (strings, keys of mappings and lists), with its path."""
    if isinstance(value, str):
        for match in REFERENCE.finditer(value):
            if match.group(1):
                yield match.group(1), path
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from references(key, path + (str(key),))
            yield from references(item, path + (str(key),))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from references(item, path + (index,))


def render(value: Any, lookup: Callable[[str], Any]) -> Any:
    """``value`` with every reference replaced through ``lookup`` (raises UnboundVariable)."""
    if isinstance(value, str):
        whole = _WHOLE.match(value)
        if whole:
            return _read(lookup, whole.group(1), whole.group(2))

        def one(match: re.Match[str]) -> str:
            if match.group(1) is None:
                return "${"
            found = _read(lookup, match.group(1), match.group(2))
            return found if isinstance(found, str) else json.dumps(found)

        return REFERENCE.sub(one, value)
    if isinstance(value, Mapping):
        return {render(k, lookup): render(v, lookup) for k, v in value.items()}
    if isinstance(value, list):
        return [render(item, lookup) for item in value]
    return value


def _read(lookup: Callable[[str], Any], name: str, path: str) -> Any:
    value = lookup(name)
    if not path:
        return value
    found = resolve(value, path)
    if found is MISSING:
        raise UnboundVariable(name + path)
    return found
