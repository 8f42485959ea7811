"""Declared lifecycles: a move the table allows happens; any other raises and changes nothing."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from svc_sandbox.core.errors import IllegalTransition
from svc_sandbox.core.lifecycle import Lifecycle, Transition

DOOR = Lifecycle(
    "door", [Transition("closed", "open", "push"), Transition("open", "closed", "pull")]
)


@dataclass
class Door:
    status: str


def test_an_allowed_move_sets_the_status() -> None:
    door = Door("closed")
    DOOR.move(door, "open")
    assert door.status == "open"


@pytest.mark.parametrize(("source", "target"), [("closed", "closed"), ("open", "locked")])
def test_a_refused_move_raises_409_and_leaves_the_status(source: str, target: str) -> None:
    door = Door(source)
    with pytest.raises(IllegalTransition) as refused:
        DOOR.move(door, target)
    assert refused.value.status == 409
    assert door.status == source


def test_table_lists_every_transition() -> None:
    assert DOOR.table() == [
        {"from": "closed", "to": "open", "trigger": "push"},
        {"from": "open", "to": "closed", "trigger": "pull"},
    ]
