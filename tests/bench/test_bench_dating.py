"""bench/dating.py: with `--dated`, the conversational benchmark's memories carry their own dates where
recency is counted from, and each agent is asked the day after its last memory."""

from __future__ import annotations

from datetime import datetime

import pytest

from bench import conversational
from bench.dating import dated_now, write_clock
from models import AgentMemory, db
from models.db import utcnow
from models.parsing import to_utc

DATES = ["2023-07-08T12:00:00", "2024-05-30T03:45:00+02:00", "2023-11-01T09:00:00"]


def test_an_agent_is_asked_the_day_after_its_last_memory_in_naive_utc():
    memories = [{"created_at": when} for when in DATES]
    assert dated_now(memories) == datetime(2024, 5, 31, 1, 45)


@pytest.mark.parametrize("dated", [True, False])
def test_dated_memories_are_written_at_their_own_dates_and_others_now(make_agent, make_memory, dated):
    agent = make_agent()
    before = utcnow()
    with write_clock(dated) as clock:
        ids = []
        for when in DATES:
            clock(datetime.fromisoformat(when))
            ids.append(make_memory(agent, f"written {when}", created_at=datetime.fromisoformat(when)).id)
    db.session.commit()
    written = dict(db.session.execute(db.select(AgentMemory.id, AgentMemory.updated_at)).all())
    for memory_id, when in zip(ids, DATES, strict=True):
        # recency is counted from updated_at (models/retrieval/ranking.py)
        if dated:
            assert written[memory_id] == to_utc(datetime.fromisoformat(when))
        else:
            assert written[memory_id] >= before


def test_dated_is_a_runs_setting_not_a_sweeps():
    with pytest.raises(SystemExit):
        conversational.main(["--sweep", "--dated"])
