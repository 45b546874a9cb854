"""memory.query's candidate pool keeps the newest matches whichever way it finds them
(models/retrieval/matching.py, `lexical_pool`).

On PostgreSQL a question's words take one of three routes by how many memories they match and where:
every match ranked (at most EXACT_LIMIT), the newest POOL_ANY found among the agent's WINDOW newest
memories (common words, dense there), or sorted out of up to SORT_LIMIT matches (common words, sparse
among the newest). The limits are shrunk here so a handful of memories takes each route, and the
memories are written oldest first, so that a route taking the first matches it reads on disk instead of
the newest would return the oldest ones. SQLite has one route; the
same expectations hold there.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from models import db
from models.changes.mutations import create_memory
from models.db import utcnow
from models.retrieval import matching, query

TOP = 3


@pytest.fixture
def small_limits(monkeypatch):
    monkeypatch.setattr(matching, "EXACT_LIMIT", 4)
    monkeypatch.setattr(matching, "WINDOW", 10)
    monkeypatch.setattr(matching, "SORT_LIMIT", 12)
    monkeypatch.setattr(matching, "POOL_ANY", TOP)
    monkeypatch.setattr(matching, "POOL_ALL", TOP)
    query.statement.cache_clear()
    yield
    query.statement.cache_clear()


def seed(agent, matches: int, newer: int = 0) -> list[int]:
    """`matches` memories holding "kayak" (and as many without it), written oldest first, then `newer`
    memories without it, newer than all of them. Returns the matching ids, newest first."""
    ids = []
    now = utcnow()
    for n in range(newer):
        create_memory(agent.id, f"The piano lesson number {n} moved", actor="agent", category="profile")
    for n in range(matches):
        kayak = create_memory(
            agent.id, f"The kayak trip number {n} went well", actor="agent", category="profile"
        )
        other = create_memory(
            agent.id, f"The garden plan number {n} changed", actor="agent", category="profile"
        )
        for memory in (kayak, other):
            db.session.execute(
                sa.text("UPDATE agent_memories SET updated_at = :at WHERE id = :id"),
                {"at": now - timedelta(minutes=matches - n), "id": memory.id},
            )
        ids.append(kayak.id)
    db.session.commit()
    ids.reverse()
    if db.engine.dialect.name == "postgresql":
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(sa.text("VACUUM ANALYZE agent_memories"))
    return ids


@pytest.mark.parametrize(
    ("matches", "newer"),
    [
        pytest.param(3, 0, id="every-match-ranked"),
        pytest.param(20, 0, id="newest-among-the-newest-memories"),
        pytest.param(8, 20, id="sparse-sorted-out-of-all"),
    ],
)
def test_a_common_word_finds_its_newest_matches_on_every_route(app, make_agent, small_limits, matches, newer):
    agent = make_agent(role="supervisor")
    newest_first = seed(agent, matches, newer)
    hits = query.search(agent.id, text="Where did the kayak go?", categories=["profile"], top_k=TOP)
    assert [h.id for h in hits] == newest_first[:TOP]


def test_the_routes_agree_with_the_exact_ranking(app, make_agent, monkeypatch):
    """The same memories ranked with every match scored (limits out of reach) and through each route."""
    agent = make_agent(role="supervisor")
    seed(agent, 8, newer=20)
    ask = "Which kayak trip went well?"
    query.statement.cache_clear()
    exact = [h.id for h in query.search(agent.id, text=ask, categories=["profile"], top_k=TOP)]
    for window in (10, 40):  # sparse among the newest 10; dense enough among the newest 40
        monkeypatch.setattr(matching, "EXACT_LIMIT", 4)
        monkeypatch.setattr(matching, "WINDOW", window)
        monkeypatch.setattr(matching, "SORT_LIMIT", 12)
        monkeypatch.setattr(matching, "POOL_ANY", TOP)
        query.statement.cache_clear()
        assert [h.id for h in query.search(agent.id, text=ask, categories=["profile"], top_k=TOP)] == exact
    query.statement.cache_clear()
