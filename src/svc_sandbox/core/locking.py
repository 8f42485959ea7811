"""The one sandbox lock: every service method that reads or writes state runs under it."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from typing import Concatenate, ParamSpec, Protocol, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class HasLock(Protocol):
    lock: threading.RLock


S = TypeVar("S", bound=HasLock)


def locked(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """Runs a service method under the sandbox's re-entrant lock."""

    @functools.wraps(method)
    def wrapper(self: S, *args: P.args, **kwargs: P.kwargs) -> R:
        with self.lock:
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def let_others_in() -> None:
    """Gives the interpreter to other threads, long enough for one waiting for the lock just
    released to be woken and take it. With ``sleep(0)`` the waiter often missed its turn
    (the operating system had not run it before this thread took the lock again), so during
    an advance of 100,000 sessions another request waited 30 to 100 ms, several batches,
    against 11 to 18 ms now (bench/state_scaling.py); a warp's time did not change."""
    time.sleep(0.0002)
