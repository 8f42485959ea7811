"""The one service context: what every stateful service shares (lock, clock, ids, scheduler,
settings), so that adding a service or a family is one line in `Sandbox`, not a copy of its
constructor wiring."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from svc_sandbox.core.clock import Clock
from svc_sandbox.core.ids import IdFactory
from svc_sandbox.core.scheduler import Scheduler

if TYPE_CHECKING:
    from svc_sandbox.settings import Settings


@dataclass(frozen=True)
class ServiceContext:
    lock: threading.RLock
    clock: Clock
    ids: IdFactory
    scheduler: Scheduler
    settings: Settings


class Service:
    """Base of every stateful service: the context's parts as attributes (``@locked`` reads
    ``self.lock``). A service takes the context plus the few services it really uses."""

    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx
        self.lock = ctx.lock
        self.clock = ctx.clock
        self.ids = ctx.ids
        self.scheduler = ctx.scheduler
        self.settings = ctx.settings
