"""The word figures memory.query reads per agent (models/retrieval/term_stats.py): how many of an agent's
memories hold a word, counted up to a cap."""

from __future__ import annotations

import pytest

from models import db
from models.changes.mutations import soft_delete_memories
from models.retrieval import term_stats


@pytest.fixture(autouse=True)
def _fresh_figures():
    term_stats.forget()
    yield
    term_stats.forget()


def _dialect() -> str:
    return db.session.get_bind().dialect.name


def test_an_agents_matches_count_its_own_memories_not_deleted_up_to_one_past_the_most(
    make_agent, make_memory
):
    mine, other = make_agent(), make_agent()
    made = [make_memory(mine, f"Zofia went to the market on day {i}.") for i in range(6)]
    make_memory(mine, "Tamsin studied marine biology.")
    for i in range(4):
        make_memory(other, f"Zofia and Tamsin met on day {i}.")
    soft_delete_memories(mine.id, [made[0].id], actor="admin:test")
    db.session.commit()

    counts = term_stats.agent_matches(_dialect(), mine.id, ["Zofia", "Tamsin", "Quinn"], 10)
    assert counts == {"Zofia": 5, "Tamsin": 1, "Quinn": 0}
    # Counted no further than one past `most`: enough to tell more from as many.
    assert term_stats.agent_matches(_dialect(), mine.id, ["Zofia"], 2) == {"Zofia": 3}


def test_an_agents_matches_are_cached_per_agent(make_agent, make_memory):
    agent = make_agent()
    for i in range(3):
        make_memory(agent, f"Quinn adopted cat number {i}.")
    db.session.commit()
    assert term_stats.agent_matches(_dialect(), agent.id, ["Quinn"], 10) == {"Quinn": 3}
    make_memory(agent, "Quinn adopted one more cat.")
    db.session.commit()
    # Within CACHE_SECONDS the figures stay (a ranking's hint, like the other word figures) ...
    assert term_stats.agent_matches(_dialect(), agent.id, ["Quinn"], 10) == {"Quinn": 3}
    term_stats.forget()
    # ... and are read afresh after.
    assert term_stats.agent_matches(_dialect(), agent.id, ["Quinn"], 10) == {"Quinn": 4}
