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
    """Gives the interpreter to other threads (a thread waiting for the lock just released
    would otherwise rarely get it before this one takes it again)."""
    time.sleep(0)
