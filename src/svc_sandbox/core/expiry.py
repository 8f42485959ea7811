"""Records that outlive their use: keys by the sandbox time from which their record may be
dropped, soonest first (a heap). A service adds a key when it stores a record and asks for
the keys due at the start of each call, so a call costs a look at the soonest entry and each
record is handled once when it falls due, never a scan of every record.

A key that comes due is only a candidate: the service checks its record (it may be gone
already, or have lived on: a refresh token family that was used again) and adds it again
for later when it must stay."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from datetime import datetime


class ExpiryQueue:
    def __init__(self, entries: Iterable[tuple[datetime, str]] = ()) -> None:
        self._heap = list(entries)
        heapq.heapify(self._heap)

    def add(self, when: datetime, key: str) -> None:
        heapq.heappush(self._heap, (when, key))

    def due(self, now: datetime) -> Iterator[str]:
        """Takes out and yields each key due at ``now`` or before, soonest first (one added
        while iterating, if due, comes out too)."""
        while self._heap and self._heap[0][0] <= now:
            yield heapq.heappop(self._heap)[1]

    def __len__(self) -> int:
        return len(self._heap)
