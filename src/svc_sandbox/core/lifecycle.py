"""Declared lifecycles: each stateful resource has one table of allowed moves."""

from __future__ import annotations

from dataclasses import dataclass

from svc_sandbox.core.errors import IllegalTransition

#: The source state of a resource's first transition (its creation).
NEW = "none"


@dataclass(frozen=True)
class Transition:
    source: str
    target: str
    trigger: str


class Lifecycle:
    def __init__(self, name: str, transitions: list[Transition]) -> None:
        self.name = name
        self.transitions = transitions
        self._allowed = {(t.source, t.target) for t in transitions}

    def check(self, source: str, target: str) -> None:
        if (source, target) not in self._allowed:
            raise IllegalTransition(f"{self.name} cannot move from {source} to {target}")

    def table(self) -> list[dict[str, str]]:
        return [{"from": t.source, "to": t.target, "trigger": t.trigger} for t in self.transitions]
