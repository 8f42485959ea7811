"""Records that outlive their use: keys by the sandbox time from which their record may be
dropped, soonest first (a heap). A service adds a key when it stores a record and asks for
the keys to drop at the start of each call, so a call costs a look at the soonest entry and
each record is handled once when it falls due, never a scan of every record.

A key that comes due is only a candidate: ``expired`` asks the service when its record may
go now (it may be gone already, or have lived on: a refresh token family that was used again,
a setting that grew) and queues it again for then when that is still ahead."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime


class ExpiryQueue:
    def __init__(self, entries: Iterable[tuple[datetime, str]] = ()) -> None:
        self._heap = list(entries)
        heapq.heapify(self._heap)

    def add(self, when: datetime, key: str) -> None:
        heapq.heappush(self._heap, (when, key))

    def expired(self, now: datetime, until: Callable[[str], datetime | None]) -> Iterator[str]:
        """Takes out each key due at ``now`` or before, soonest first, and yields those whose
        record may go: ``until(key)`` is when (None: the record is gone already, nothing to
        do); one still ahead is queued again for then."""
        while self._heap and self._heap[0][0] <= now:
            key = heapq.heappop(self._heap)[1]
            when = until(key)
            if when is None:
                continue
            if when > now:
                self.add(when, key)
            else:
                yield key

    def __len__(self) -> int:
        return len(self._heap)
