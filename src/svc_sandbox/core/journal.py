"""The request journal: the most recent requests, newest first, for the control plane.

Each request is kept as a tuple and shaped into JSON only when someone reads the journal (the
timestamp formatting would otherwise cost every request)."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import Any

from svc_sandbox.core.clock import isoformat
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


class RequestJournal:
    def __init__(self, now: Callable[[], datetime], size: int = JOURNAL_ENTRIES) -> None:
        #: The sandbox clock, read under the journal's lock as an entry goes in: entries are
        #: then in time order whatever threads record them (time moves only forward between
        #: them unless the clock is set back).
        self._now = now
        self._entries: deque[Entry] = deque(maxlen=size)
        self._lock = threading.Lock()

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
            self._entries.append((request_id, self._now(), method, path, status, kept))

    def recent(self, limit: int) -> list[dict[str, Any]]:
        with self._lock:
            newest = list(reversed(self._entries))[:limit]
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

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
