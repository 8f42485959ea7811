"""``${var}`` in scenario values: bound from ``vars``, the matrix row, ``save`` and the runner.

``${var.key[0]}`` reads into a structured value. A string that is exactly one reference
becomes the value with its type (an integer stays an integer); anywhere else the value is
formatted into the text. ``$${`` writes ``${``.

A rendered value holds at most ``RENDER_LIMIT`` characters and items: a file that repeats a
variable inside itself (``set: {x: "${x}${x}"}`` in a ``repeat``) stops there, never filling the
memory.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from svc_sandbox.scenarios.matchers import MISSING, Verbatim, VerbatimKey, resolve
from svc_sandbox.scenarios.model import DocPath

#: ASCII only, as in a path (``[0-9]``, not ``\d`` which takes every script's digits).
_NAME = r"([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_-]+|\[-?[0-9]+\])*)"
REFERENCE = re.compile(r"\$\$\{|\$\{" + _NAME + r"\}")
_WHOLE = re.compile(r"\$\{" + _NAME + r"\}")
#: Characters plus items (list elements, mapping keys and values) a rendered value may hold.
RENDER_LIMIT = 1_000_000

#: Variables the runner computes at each use.
DYNAMIC = ("now", "now_unix", "uuid", "random_hex")
#: Variables the runner binds before the first step (credentials, roots, ids of the target).
#: The scenario's webhook receiver's (one is opened for a file that uses any of them).
RECEIVER_VARIABLES = ("webhook_url", "webhook_secret", "webhook_endpoint_id")
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
    *RECEIVER_VARIABLES,
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


class TooLarge(ValueError):
    """Rendering would make a value over ``RENDER_LIMIT``."""

    def __init__(self) -> None:
        super().__init__(
            f"the value would hold more than {RENDER_LIMIT} characters and items "
            "(a variable repeated inside itself?)"
        )


def has_reference(value: Any) -> bool:
    """``value`` is text holding a ``${name}`` (known only when the step runs)."""
    return isinstance(value, str) and any(m.group(1) for m in REFERENCE.finditer(value))


def as_text(value: Any) -> str:
    """How a value reads inside text: itself for text, else its JSON (``true``, ``5``)."""
    return value if isinstance(value, str) else json.dumps(value)


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


class CircularVariables(ValueError):
    """``vars`` entries that refer to each other in a circle: none can ever have a value."""

    def __init__(self, circle: list[str]) -> None:
        super().__init__(" -> ".join(f"${{{name}}}" for name in circle))
        self.circle = circle


def own_vars(document: Mapping[str, Any]) -> dict[str, Any]:
    """A file's ``vars`` that take their value from the file: a matrix value wins over a var
    of the same name."""
    matrix = document.get("matrix", {})
    return {name: value for name, value in document.get("vars", {}).items() if name not in matrix}


def dependency_order(definitions: Mapping[str, Any]) -> list[str]:
    """The names of ``definitions`` (a file's ``vars``) ordered so each comes after the others
    it refers to, in file order otherwise; CircularVariables for a circle. References to
    names outside ``definitions`` (the matrix row, the runner's) do not order anything."""
    order: list[str] = []
    state: dict[str, str] = {}  # "open" while its references are being ordered, then "done"

    def visit(name: str, trail: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "open":
            raise CircularVariables(trail[trail.index(name) :] + [name])
        state[name] = "open"
        for used, _ in references(definitions[name]):
            if used in definitions:
                visit(used, trail + [name])
        state[name] = "done"
        order.append(name)

    for name in definitions:
        visit(name, [])
    return order


#: How ``render`` treats what variables write: ``plain`` values (a request), an expectation
#: where response data stays data (``expect``), a variable's value that keeps the mark (``keep``).
PLAIN, EXPECT, KEEP = "plain", "expect", "keep"


def render(value: Any, lookup: Callable[[str], Any], mode: str = PLAIN) -> Any:
    """``value`` with every reference replaced through ``lookup`` (raises UnboundVariable, or
    TooLarge). A variable whose value ``lookup`` gives as ``Verbatim`` holds response data (a
    ``save``): in ``EXPECT`` mode it stays marked (compared as data, never read as a matcher),
    as does any text a variable was written into; in ``KEEP`` mode (``vars``, ``set``) a value
    holding such data is marked as a whole."""
    renderer = _Renderer(lookup, mode)
    rendered = renderer.render(value)
    return Verbatim(rendered) if mode == KEEP and renderer.data else rendered


class _Renderer:
    def __init__(self, lookup: Callable[[str], Any], mode: str) -> None:
        self.lookup = lookup
        self.expect = mode == EXPECT
        self.left = RENDER_LIMIT
        #: Some of the value came from response data.
        self.data = False

    def spend(self, value: Any) -> None:
        """Count ``value`` against the limit, walking no further than the limit."""
        stack = [value]
        while stack:
            item = stack.pop()
            self.left -= 1 + (len(item) if isinstance(item, str) else 0)
            if self.left < 0:
                raise TooLarge
            if isinstance(item, Mapping):
                stack += item.keys()
                stack += item.values()
            elif isinstance(item, list):
                stack += item

    def render(self, value: Any, key: bool = False) -> Any:
        if isinstance(value, str):
            whole = _WHOLE.fullmatch(value)
            if whole:
                found, data = self.read(whole.group(1), whole.group(2))
                if key:
                    return VerbatimKey(as_text(found)) if self.expect else as_text(found)
                return Verbatim(found) if self.expect and data else found
            substituted = False

            def one(match: re.Match[str]) -> str:
                nonlocal substituted
                if match.group(1) is None:
                    return "${"
                substituted = True
                return as_text(self.read(match.group(1), match.group(2))[0])

            rendered = REFERENCE.sub(one, value)
            self.spend(rendered)
            if not (substituted and self.expect):
                return rendered
            # Text a variable was written into is compared as text ("$an" + "y" is no matcher).
            return VerbatimKey(rendered) if key else Verbatim(rendered)
        self.spend(None)
        if isinstance(value, Mapping):
            return {self.render(k, key=True): self.render(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.render(item) for item in value]
        return value

    def read(self, name: str, path: str) -> tuple[Any, bool]:
        """The value of ``name`` at ``path``, and whether it is response data."""
        value = self.lookup(name)
        data = isinstance(value, Verbatim)
        if data:
            value = value.value
            self.data = True
        if path:
            value = resolve(value, path)
            if value is MISSING:
                raise UnboundVariable(name + path)
        self.spend(value)
        return value, data
