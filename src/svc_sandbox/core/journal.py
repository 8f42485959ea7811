"""The request journal: the most recent requests, newest first, for the control plane."""

from __future__ import annotations

import threading
from collections import deque
from typing import Any


class RequestJournal:
    def __init__(self, size: int = 1000) -> None:
        self._entries: deque[dict[str, Any]] = deque(maxlen=size)
        self._lock = threading.Lock()

    def record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._entries.append(entry)

    def recent(self, limit: int) -> list[dict[str, Any]]:
        with self._lock:
            return list(reversed(self._entries))[:limit]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
