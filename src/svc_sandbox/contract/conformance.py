"""The conformance recorder: what a client exercised of the contract, and where it broke it.

The HTTP edge (contract/api.py) feeds every request to the commerce API through ``record``;
``report`` is what ``GET /_sandbox/conformance`` and ``svc-sandbox conformance`` show.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

from svc_sandbox.contract.validation import Contract, Operation, Violation
from svc_sandbox.core.validation import cut

#: Entries each list of a report keeps (violations, unmatched requests, notices).
MAX_VIOLATIONS = 1000
#: How much of each string an entry keeps (its path, location, message, ...): a request with
#: a 100,000-character path or a megabyte value is recorded in an entry of bounded size, cut
#: by the one rule (``core.validation.cut``, docs/contract.md). A violation's message already
#: shows a value cut to 80 characters; this bounds the rest (a path, a list of names) and
#: leaves whole what a message quotes of the shipped contracts (their longest pattern: 568).
RECORDED_CHARACTERS = 1000


@dataclass(slots=True)
class Exchange:
    """One request to a contract root and the status it got. (Not frozen: one is built on
    every request, and a frozen dataclass sets each field through ``object.__setattr__``.)"""

    request_id: str
    method: str
    path: str
    status: int


class ConformanceRecorder:
    def __init__(self, contract: Contract, max_violations: int = MAX_VIOLATIONS) -> None:
        self.contract = contract
        self.max_violations = max_violations
        self._lock = threading.Lock()
        self.clear()

    def clear(self) -> None:
        with self._lock:
            self._statuses: dict[str, Counter[str]] = {}
            self._violations: list[dict[str, Any]] = []
            self._dropped = 0
            self._unmatched: list[dict[str, Any]] = []
            self._notices: list[dict[str, Any]] = []
            self._requests = 0

    def record(
        self,
        exchange: Exchange,
        operation: Operation | None,
        violations: list[Violation],
        notices: list[dict[str, str]] | None = None,
    ) -> None:
        """``notices``: what the request did that the contract allows but that has no effect
        (``{location, message}``, e.g. fields that do not apply and were ignored)."""
        with self._lock:
            self._requests += 1
            for notice in notices or []:
                if len(self._notices) < self.max_violations:
                    self._notices.append(
                        recorded(
                            {
                                "requestId": exchange.request_id,
                                "operationId": operation.operation_id if operation else None,
                                "method": exchange.method,
                                "path": exchange.path,
                                "status": exchange.status,
                                **notice,
                            }
                        )
                    )
            if operation is None:
                if len(self._unmatched) < self.max_violations:
                    self._unmatched.append(
                        recorded(
                            {
                                "requestId": exchange.request_id,
                                "method": exchange.method,
                                "path": exchange.path,
                                "status": exchange.status,
                            }
                        )
                    )
                return
            counter = self._statuses.get(operation.operation_id)
            if counter is None:  # not setdefault: that would build a Counter every request
                counter = self._statuses[operation.operation_id] = Counter()
            counter[str(exchange.status)] += 1
            for violation in violations:
                if len(self._violations) >= self.max_violations:
                    self._dropped += 1
                    continue
                self._violations.append(
                    recorded(
                        {
                            "requestId": exchange.request_id,
                            "operationId": operation.operation_id,
                            "method": exchange.method,
                            "path": exchange.path,
                            "status": exchange.status,
                            **violation.to_json(),
                        }
                    )
                )

    def report(self) -> dict[str, Any]:
        with self._lock:
            operations = []
            declared_total = exercised_total = 0
            for operation in self.contract.operations:
                if operation.own_server:
                    continue  # not under {base_url}: never recorded (docs/contract.md)
                seen = self._statuses.get(operation.operation_id, Counter())
                declared = operation.declared_statuses()
                covered = [s for s in declared if self._covers(s, seen)]
                declared_total += len(declared)
                exercised_total += len(covered)
                operations.append(
                    {
                        "operationId": operation.operation_id,
                        "method": operation.method,
                        "path": operation.path,
                        "requests": sum(seen.values()),
                        "statuses": dict(sorted(seen.items())),
                        "declaredStatuses": declared,
                        "missingStatuses": [s for s in declared if s not in covered],
                    }
                )
            request_violations = [v for v in self._violations if v["kind"] == "request"]
            return {
                "contract": {"title": self.contract.title, "version": self.contract.version},
                "summary": {
                    "requests": self._requests,
                    "operations": {
                        "exercised": sum(1 for o in operations if o["requests"]),
                        "total": len(operations),
                    },
                    "statuses": {"exercised": exercised_total, "declared": declared_total},
                    "requestViolations": len(request_violations),
                    "responseViolations": len(self._violations) - len(request_violations),
                    "violationsDropped": self._dropped,
                    "unmatched": len(self._unmatched),
                    "notices": len(self._notices),
                },
                "operations": operations,
                "violations": list(self._violations),
                "unmatched": list(self._unmatched),
                "notices": list(self._notices),
            }

    @staticmethod
    def _covers(declared: str, seen: Counter[str]) -> bool:
        if declared.upper().endswith("XX"):
            return any(s[0] == declared[0] for s in seen)
        return declared in seen


def recorded(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry as a report keeps it: each string cut to ``RECORDED_CHARACTERS``."""
    return {
        name: cut(value, RECORDED_CHARACTERS) if isinstance(value, str) else value
        for name, value in entry.items()
    }
