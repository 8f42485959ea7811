"""collector_paused: no automatic collection inside; the collector back as the caller had it;
with ``freeze``, what was made inside is out of the collector's reach after."""

from __future__ import annotations

import gc

import pytest

from svc_sandbox.core.collector import collector_paused


def allocate() -> list[list[object]]:
    """Enough container objects to trigger many young collections with the collector on."""
    return [[] for _ in range(20_000)]


def test_nothing_is_collected_while_paused_and_the_collector_comes_back(
    gc_collections: list[int],
) -> None:
    allocate()
    assert gc_collections, "the allocations trigger collections when the collector is on"
    gc_collections.clear()
    with collector_paused():
        assert not gc.isenabled()
        kept = allocate()
        assert gc_collections == []
    assert gc.isenabled()
    assert len(kept) == 20_000


def test_a_collector_the_caller_switched_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused(freeze=True):
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_the_collector_comes_back_when_the_work_raises() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_freeze_puts_what_was_made_out_of_reach_and_later_garbage_is_still_collected() -> None:
    gc.unfreeze()
    try:
        with collector_paused(freeze=True):
            kept = allocate()
        assert gc.get_freeze_count() >= len(kept)
        young = {id(o) for o in gc.get_objects(0)}
        assert not any(id(k) in young for k in kept)
        cycle: list[object] = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1
    finally:
        gc.unfreeze()


def test_without_freeze_nothing_is_frozen() -> None:
    gc.unfreeze()
    with collector_paused():
        allocate()
    assert gc.get_freeze_count() == 0
