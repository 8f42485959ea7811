"""The request journal: the most recent requests, newest first, for the control plane.

Each request is kept as a tuple and shaped into JSON only when someone reads the journal (the
timestamp formatting would otherwise cost every request)."""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import Any

from svc_sandbox.core.clock import isoformat
from svc_sandbox.core.errors import ValidationFailed
from svc_sandbox.core.validation import cut

Entry = tuple[str, datetime, str, str, int, dict[str, Any]]

#: How much of its method, path, query, Authorization and Content-Type an entry keeps (cut
#: past that with ``core.validation.cut``, the rule for a string too long to repeat): an entry
#: holds at most this much of each, plus a body of at most ``web.JOURNAL_BODY_BYTES``
#: (docs/control-plane.md).
JOURNAL_TEXT_CHARACTERS = 4096
#: The details cut so; a body has its own bound (kept whole up to its size limit, else left
#: out), as does a form (parsed from such a body).
CUT_DETAILS = ("query", "authorization", "contentType", "idempotencyKey", "svcKey")


#: How many requests the journal keeps (the newest).
JOURNAL_ENTRIES = 1000


#: A status filter: one code (``404``) or a class of them (``4xx``).
STATUS_FILTER = re.compile(r"([1-5])(\d\d|xx)")
STATUS_FILTER_RULE = "status must be a status code such as 404, or a class such as 4xx"


@dataclass(frozen=True)
class JournalFilter:
    """Which entries a read of the journal shows: every condition given holds. ``method`` is
    matched whatever its case, ``status`` is a code or a class (``4xx``), ``path`` is text the
    path contains (as kept: a cut path matches on what was kept)."""

    method: str | None = None
    status: str | None = None
    path: str | None = None

    @classmethod
    def of(cls, method: str | None, status: str | None, path: str | None) -> JournalFilter:
        """The filter a query asks for; an empty value is no condition (a form's blank field)."""
        status = (status or "").strip().lower() or None
        if status is not None and not STATUS_FILTER.fullmatch(status):
            raise ValidationFailed(STATUS_FILTER_RULE)
        return cls((method or "").strip().upper() or None, status, path or None)

    def matches(self, method: str, path: str, status: int) -> bool:
        if self.method is not None and method.upper() != self.method:
            return False
        if self.status is not None:
            code = str(status)
            wanted = code[0] + "xx" if self.status.endswith("xx") else code
            if wanted != self.status:
                return False
        return self.path is None or self.path in path


#: The filter that keeps every entry.
EVERY_ENTRY = JournalFilter()


class RequestJournal:
    def __init__(self, now: Callable[[], datetime], size: int = JOURNAL_ENTRIES) -> None:
        #: The sandbox clock, read under the journal's lock as an entry goes in: entries are
        #: then in time order whatever threads record them (time moves only forward between
        #: them unless the clock is set back).
        self._now = now
        self._entries: deque[Entry] = deque(maxlen=size)
        self._lock = threading.Lock()
        #: Entries pushed out by newer ones since the last clear (a recording that needs
        #: them cannot be whole).
        self.dropped = 0

    def record(
        self,
        request_id: str,
        method: str,
        path: str,
        status: int,
        details: dict[str, Any] | None = None,
    ) -> None:
        """One request, at the sandbox time it finished; ``details`` (query, body,
        Authorization, the latency applied) are for the recorder. The method, path and
        ``CUT_DETAILS`` are kept up to ``JOURNAL_TEXT_CHARACTERS``."""
        kept = details or {}
        if kept:  # (checked inline: this runs on every request)
            for name in CUT_DETAILS:
                value = kept.get(name)
                if value is not None and len(value) > JOURNAL_TEXT_CHARACTERS:
                    kept = {**kept, name: cut(value, JOURNAL_TEXT_CHARACTERS)}
        if len(path) > JOURNAL_TEXT_CHARACTERS:
            path = cut(path, JOURNAL_TEXT_CHARACTERS)
        if len(method) > JOURNAL_TEXT_CHARACTERS:
            method = cut(method, JOURNAL_TEXT_CHARACTERS)
        with self._lock:
            if len(self._entries) == self._entries.maxlen:
                self.dropped += 1
            self._entries.append((request_id, self._now(), method, path, status, kept))

    def recent(self, limit: int, only: JournalFilter = EVERY_ENTRY) -> list[dict[str, Any]]:
        """The newest ``limit`` entries ``only`` matches, newest first."""
        with self._lock:
            kept = (e for e in reversed(self._entries) if only.matches(e[2], e[3], e[4]))
            newest = list(islice(kept, limit))
        return [
            {
                "requestId": request_id,
                "time": isoformat(time),
                "method": method,
                "path": path,
                "status": status,
                **details,
            }
            for request_id, time, method, path, status, details in newest
        ]

    def count(self, only: JournalFilter = EVERY_ENTRY) -> int:
        """How many entries ``only`` matches."""
        with self._lock:
            return sum(1 for e in self._entries if only.matches(e[2], e[3], e[4]))

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.dropped = 0
