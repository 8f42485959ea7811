"""Declared lifecycles: each stateful resource has one table of allowed moves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypeVar

from svc_sandbox.core.errors import IllegalTransition

#: The source state of a resource's first transition (its creation).
NEW = "none"

StatusT = TypeVar("StatusT", bound=str)


class HasStatus(Protocol[StatusT]):
    status: StatusT


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

    def move(self, record: HasStatus[StatusT], target: StatusT) -> None:
        """Checks the move against the table, then makes it (a refused move changes nothing)."""
        self.check(record.status, target)
        record.status = target

    def table(self) -> list[dict[str, str]]:
        return [{"from": t.source, "to": t.target, "trigger": t.trigger} for t in self.transitions]
