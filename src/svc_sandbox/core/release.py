"""A thread that drops large garbage, so that the caller need not wait for it to be freed.

Apart from core/collector.py, which the launcher imports before it pauses the collector and
so must import nothing more than it needs."""

from __future__ import annotations

import queue
import threading

_RELEASE: queue.SimpleQueue[object] = queue.SimpleQueue()
_releaser: threading.Thread | None = None


def release_later(garbage: object) -> None:
    """Hands ``garbage`` to a daemon thread that drops it (started on first use): a reset or an
    import returns without waiting for the old state to be freed."""
    global _releaser
    if _releaser is None:
        _releaser = threading.Thread(target=_release_loop, name="svc-sandbox-release", daemon=True)
        _releaser.start()
    _RELEASE.put(garbage)


def _release_loop() -> None:
    while True:
        garbage = _RELEASE.get()
        del garbage
