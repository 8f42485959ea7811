"""The cyclic garbage collector's pause, for work that makes many objects and no cycles.

Its own module, importing nothing of the emulator: the launcher pauses the collector before it
imports the rest."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused(freeze: bool = False) -> Iterator[None]:
    """Pauses the cyclic garbage collector while a whole state is copied or built, the clock
    moves through its due work (``Sandbox._move_to``) or the server starts (the launcher's
    import of cli.py, ``cli.build_serving``): those make objects by the hundred thousand, and
    each collection it would trigger walks them all again (3-4x the copy's own time at 10,000
    sessions). Records form no cycles. A collector the caller switched off stays off.

    ``freeze``: then moves every object alive out of the collector's reach (``gc.freeze``), for
    start-up, whose objects live as long as the process: otherwise the first collection after
    the pause walks all of them (they are all in the youngest generation), and each older
    generation's once more."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was_enabled:
            gc.enable()
