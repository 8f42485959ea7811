"""The request journal: the most recent requests, newest first, for the control plane.

Each request is kept as a tuple and shaped into JSON only when someone reads the journal (the
timestamp formatting would otherwise cost every request)."""

from __future__ import annotations

import threading
from collections import deque
from datetime import datetime
from typing import Any

from svc_sandbox.core.clock import isoformat

Entry = tuple[str, datetime, str, str, int, dict[str, Any]]


class RequestJournal:
    def __init__(self, size: int = 1000) -> None:
        self._entries: deque[Entry] = deque(maxlen=size)
        self._lock = threading.Lock()

    def record(
        self,
        request_id: str,
        time: datetime,
        method: str,
        path: str,
        status: int,
        details: dict[str, Any] | None = None,
    ) -> None:
        """One request; ``details`` (query, body, Authorization) are for the recorder."""
        with self._lock:
            self._entries.append((request_id, time, method, path, status, details or {}))

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
