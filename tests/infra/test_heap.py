"""A process's long-lived objects and the collector (infra/heap.py): what is alive when a process settles
is never visited by a later collection; what is garbage then is collected first, not kept forever."""

from __future__ import annotations

import gc
import weakref

import pytest

from infra.heap import settle


class Node:
    """A tracked object that can sit in a reference cycle."""

    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def unfrozen():
    yield
    gc.unfreeze()  # the test process's objects go back to the collector


def test_what_is_alive_when_a_process_settles_is_left_out_of_every_later_collection(unfrozen):
    long_lived = [Node() for _ in range(100)]
    cycle = Node()
    cycle.other = Node()
    cycle.other.other = cycle
    gone = weakref.ref(cycle)
    del cycle  # garbage, but only the cyclic collector can free it

    settle()
    gc.collect()

    assert gone() is None  # collected before the freeze, not kept for the life of the process
    visited = {id(o) for generation in range(3) for o in gc.get_objects(generation=generation)}
    assert not visited & {id(node) for node in long_lived}
    assert gc.get_freeze_count() >= len(long_lived)
