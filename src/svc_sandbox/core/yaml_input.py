"""YAML a user hands the emulator (``serve --triggers FILE``; the scenario loader walks for
line numbers too, under the same ``AliasBound``): safe tags only, and aliases bounded.

Why: an alias names a node already written, so ``[*a, *a, ...]`` lists nested a few levels
deep stand for 10^6 and more nodes in a few hundred bytes ("billion laughs"). PyYAML builds
them as shared objects at once, but whatever walks the result as a tree (the JSON checks, the
parsers of its items) never ends. The composed node graph is walked first, counting each node
an alias repeats; the document is built only when the count stays within ``ALIAS_NODES``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from svc_sandbox.core import json_input
from svc_sandbox.core.errors import ValidationFailed

if TYPE_CHECKING:  # PyYAML is imported when a YAML file is read (~15 ms of every start-up)
    import yaml

#: Nodes aliases may repeat in one document: orders of magnitude above any real file.
ALIAS_NODES = 100_000


def load(raw: bytes, what: str) -> Any:
    """The document of ``raw`` (YAML 1.1, safe tags), checked as a JSON body is
    (``json_input.check``); a 400 naming ``what`` otherwise."""
    import yaml

    try:
        loader = yaml.SafeLoader(raw.decode("utf-8"))
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _walk(node, AliasBound(), what)
            data = loader.construct_document(node)
        finally:
            loader.dispose()
    except UnicodeDecodeError:
        raise ValidationFailed(f"{what} is not UTF-8 text") from None
    except RecursionError:
        raise ValidationFailed(f"{what} nests deeper than {json_input.MAX_DEPTH} levels") from None
    except yaml.YAMLError as exc:
        raise ValidationFailed(f"{what} is not valid YAML or JSON: {exc}") from None
    json_input.check(data, what)
    return data


class AliasBound:
    """The alias rule of every YAML walk (this module's and the scenario loader's, which also
    indexes lines): a node inside itself (``a: &a [*a]``, a document that never ends) is
    refused, and so are more than ``ALIAS_NODES`` nodes repeated by aliases."""

    def __init__(self) -> None:
        self.above: set[int] = set()
        self.seen: set[int] = set()
        self.repeated = 0

    def is_repeat(self, node: yaml.Node) -> bool:
        """Whether ``node`` was walked before: reached again through an alias."""
        return id(node) in self.seen

    def enter(self, node: yaml.Node) -> str | None:
        """Counts ``node`` as walked; why it cannot be (then the walk stops), or None."""
        if id(node) in self.above:
            return "an alias inside its own anchor"
        if id(node) in self.seen:
            self.repeated += 1
            if self.repeated > ALIAS_NODES:
                return f"aliases repeat more than {ALIAS_NODES} nodes"
        self.seen.add(id(node))
        return None

    @contextmanager
    def inside(self, node: yaml.Node) -> Iterator[None]:
        """While the walk is under ``node``: an alias to it there is the node inside itself."""
        self.above.add(id(node))
        yield
        self.above.discard(id(node))


def _walk(node: yaml.Node, bound: AliasBound, what: str) -> None:
    import yaml

    problem = bound.enter(node)
    if problem:
        raise ValidationFailed(f"{what}: {problem}")
    if isinstance(node, yaml.MappingNode):
        children = [part for pair in node.value for part in pair]
    elif isinstance(node, yaml.SequenceNode):
        children = list(node.value)
    else:
        return
    with bound.inside(node):
        for child in children:
            _walk(child, bound, what)
