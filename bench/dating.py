"""`python -m bench.conversational --dated`: memories written at their own dates, questions asked after them.

memory.query's ranking weighs recency by `updated_at` against `now`. The benchmark writes every memory when
it runs, so without this each memory's `updated_at` is the moment of writing and, asked as of
bench.conversational.AS_OF (before any write), every memory is equally recent: the sets then measure no
recency. With it, each memory is written under a clock set to its date, as an agent writing over months
leaves it, and an agent's questions are asked the day after its last memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from models.parsing import to_utc


def dated_now(memories: list[dict]) -> datetime:
    """When an agent's questions are asked: the day after its last memory (naive UTC, as models.db.utcnow)."""
    last = max(to_utc(datetime.fromisoformat(m["created_at"])) for m in memories)
    return last + timedelta(days=1)


@contextmanager
def write_clock(dated: bool) -> Iterator[Callable[[datetime], None]]:
    """What memories are written under: with `dated`, a frozen clock set to each memory's date before it is
    written (call the clock with it); else the real clock, the call doing nothing."""
    if not dated:
        yield lambda when: None
        return
    from freezegun import freeze_time

    with freeze_time(datetime(2000, 1, 1)) as frozen:
        yield frozen.move_to
