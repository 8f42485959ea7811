"""The scheduler: every future effect of the sandbox is an entry here, keyed by due time.

Entries name a registered handler (a string) and carry a JSON-able payload, so the whole
queue can be exported and imported with the rest of the state.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from svc_sandbox.core.clock import isoformat, parse_instant
from svc_sandbox.core.records import snapshot

Handler = Callable[[dict[str, Any]], None]


@dataclass(order=True, slots=True)
class Entry:
    due: datetime
    seq: int
    kind: str = field(compare=False)
    payload: dict[str, Any] = field(compare=False, default_factory=dict)
    cancelled: bool = field(compare=False, default=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "due": isoformat(self.due),
            "seq": self.seq,
            "kind": self.kind,
            "payload": self.payload,
        }


@dataclass(slots=True)
class RanEntry:
    due: datetime
    kind: str
    payload: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"due": isoformat(self.due), "kind": self.kind, "payload": self.payload}


class Scheduler:
    """A due-time ordered queue of work. Not thread-safe by itself: the Sandbox lock guards it.

    The heap holds ``(due, seq, entry)`` tuples (compared in C, not by the dataclass) and a
    live count, so the size and the next due time are O(1) reads, never a sort."""

    def __init__(self) -> None:
        self._heap: list[tuple[datetime, int, Entry]] = []
        self._seq = 0
        self._live = 0
        self._handlers: dict[str, Handler] = {}
        self._payloads: dict[str, Any] = {}

    def register(self, kind: str, handler: Handler, payload: Any = dict[str, Any]) -> None:
        """``payload`` is the type of the entries' payloads (a TypedDict): an imported entry
        is checked against it, so that running it later cannot fail on its shape."""
        self._handlers[kind] = handler
        self._payloads[kind] = payload

    def payload_types(self) -> dict[str, Any]:
        """Each registered kind and the type of its payload (for validating imports)."""
        return dict(self._payloads)

    def schedule(self, due: datetime, kind: str, payload: dict[str, Any] | None = None) -> Entry:
        if kind not in self._handlers:
            raise KeyError(f"no handler registered for {kind!r}")
        self._seq += 1
        entry = Entry(due, self._seq, kind, payload or {})
        heapq.heappush(self._heap, (due, entry.seq, entry))
        self._live += 1
        return entry

    def cancel(self, entry: Entry) -> None:
        if not entry.cancelled:
            entry.cancelled = True
            self._live -= 1

    def pending(self) -> list[Entry]:
        """Every live entry in due order (a sort: for export, not for counting)."""
        return [entry for _, _, entry in sorted(self._heap) if not entry.cancelled]

    def upcoming(self, limit: int) -> list[Entry]:
        """The next ``limit`` live entries in due order, read off the heap's tree best-first
        (O(limit log limit), whatever the queue's size; cancelled ones are skipped)."""
        heap = self._heap
        found: list[Entry] = []
        frontier: list[tuple[tuple[datetime, int, Entry], int]] = [(heap[0], 0)] if heap else []
        while frontier and len(found) < limit:
            (_, _, entry), index = heapq.heappop(frontier)
            if not entry.cancelled:
                found.append(entry)
            for child in (2 * index + 1, 2 * index + 2):
                if child < len(heap):
                    heapq.heappush(frontier, (heap[child], child))
        return found

    def count(self) -> int:
        """How many live entries are queued (O(1))."""
        return self._live

    def next_due(self) -> datetime | None:
        head = self._live_head()
        return head[0] if head is not None else None

    def peek_due(self) -> datetime | None:
        """The due time at the head of the queue, read without the lock (it may be a
        cancelled entry's, or just taken): a hint that work may be due, never a decision."""
        try:
            return self._heap[0][0]
        except IndexError:
            return None

    @property
    def last_seq(self) -> int:
        """The sequence number of the entry scheduled last (entries after it have more)."""
        return self._seq

    def pop_due(self, until: datetime) -> Entry | None:
        """Removes and returns the earliest live entry due at or before ``until``."""
        head = self._live_head()
        if head is None or head[0] > until:
            return None
        self._live -= 1
        heapq.heappop(self._heap)
        return head[2]

    def run(self, entry: Entry) -> None:
        self._handlers[entry.kind](entry.payload)

    def _live_head(self) -> tuple[datetime, int, Entry] | None:
        """The earliest live entry's heap item, the cancelled ones before it dropped."""
        heap = self._heap
        while heap and heap[0][2].cancelled:
            heapq.heappop(heap)
        return heap[0] if heap else None

    def export(self) -> dict[str, Any]:
        # A copy of each payload: an export is encoded after the lock is let go.
        return {"seq": self._seq, "entries": [snapshot(e.to_json()) for e in self.pending()]}

    def restore(self, data: dict[str, Any]) -> None:
        entries = [
            Entry(due=parse_instant(e["due"]), seq=e["seq"], kind=e["kind"], payload=e["payload"])
            for e in data["entries"]
        ]
        self._heap = [(e.due, e.seq, e) for e in entries]
        heapq.heapify(self._heap)
        self._live = len(entries)
        self._seq = data["seq"]

    def clear(self) -> None:
        self._heap = []
        self._seq = 0
        self._live = 0
