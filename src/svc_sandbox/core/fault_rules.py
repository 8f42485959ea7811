"""Fault rules that apply a given number of times or until cleared, with the same control-plane
life (list, remove one, clear, export): notification faults and latency faults."""

from __future__ import annotations

from typing import Any, ClassVar, Generic, Protocol, TypeVar

from svc_sandbox.core.context import Service, ServiceContext
from svc_sandbox.core.errors import NotFound
from svc_sandbox.core.locking import locked
from svc_sandbox.core.records import from_json, snapshot


class CountedRule(Protocol):
    id: str
    #: Applications left before the rule goes (None: until cleared).
    remaining: int | None

    def to_public(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=CountedRule)


class FaultRules(Service, Generic[R]):
    #: The record type (for import) and what the rules are called in a 404.
    record: ClassVar[type[Any]]
    noun: ClassVar[str]

    def __init__(self, ctx: ServiceContext) -> None:
        super().__init__(ctx)
        self.rules: list[R] = []

    def count_down(self, rule: R) -> None:
        """One application of ``rule``; the last one removes it. Call under the lock."""
        if rule.remaining is not None:
            rule.remaining -= 1
            if rule.remaining <= 0:
                self.rules.remove(rule)

    @locked
    def remove(self, rule_id: str) -> R:
        for rule in self.rules:
            if rule.id == rule_id:
                self.rules.remove(rule)
                return rule
        raise NotFound(f"{self.noun} {rule_id} not found")

    @locked
    def clear(self) -> None:
        self.rules = []

    @locked
    def listing(self) -> list[dict[str, Any]]:
        return [r.to_public() for r in self.rules]

    def export(self) -> dict[str, Any]:
        return {"rules": [snapshot(r) for r in self.rules]}

    def restore(self, data: dict[str, Any]) -> None:
        self.rules = [from_json(self.record, r) for r in data["rules"]]
