"""How the context block's statement finds its memories (models/retrieval/context.py): from indexes, one
per section, never by reading the agent's other memories — whose count grows with everything the agent
remembers, not with its block."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import sqlalchemy as sa

from models import db
from models.db import utcnow
from models.memories.memory import AgentMemory
from models.retrieval import context
from tests.sql_statements import sqlite_plan, statements_sent

RETRIEVED = 400  # memories of a retrieved category: never part of the block


@pytest.fixture
def agent_with_block(make_agent, make_memory):
    agent = make_agent(role="supervisor")
    block = [make_memory(agent, f"Core memory {i}.") for i in range(3)]
    block.append(make_memory(agent, "A profile fact.", memory_type="semantic", category="profile"))
    block.append(make_memory(agent, "This week's journal.", memory_type="journal"))
    now = utcnow()
    rows = [
        {"agent_id": agent.id, "memory_type": "semantic", "content": f"Retrieved fact {i}.",
         "content_hash": f"{i:064x}", "token_estimate": 5, "tags": [], "category": "event",
         "importance": 3, "pinned": False, "constitutional": False, "created_at": now, "updated_at": now}
        for i in range(RETRIEVED)
    ]  # fmt: skip
    db.session.execute(sa.insert(AgentMemory.__table__), rows)  # many, quickly: no path under test here
    db.session.commit()
    db.session.execute(sa.text("ANALYZE agent_memories"))  # the planner knows what the table holds
    return agent, {m.id for m in block}


def _block_statement(agent) -> tuple[list[context.Entry], tuple[str, object]]:
    with statements_sent("agent_memories") as sent:
        entries = context.entries(
            agent.id,
            ["profile", "event", None],
            now=utcnow(),
            journal_window=timedelta(days=7),
            text=False,
            whole=["profile"],
        )
    assert len(sent) == 1
    return entries, sent[0]


def test_the_blocks_statement_reads_the_blocks_memories_from_indexes_and_not_the_agents_others(
    agent_with_block,
):
    agent, block = agent_with_block
    entries, (statement, parameters) = _block_statement(agent)
    assert {e.id for e in entries} == block

    if db.engine.dialect.name == "postgresql":
        # As on a table of many agents, where reading the whole table is out of the question: which rows
        # does the cheapest plan without it fetch and throw away?
        db.session.execute(sa.text("SET LOCAL enable_seqscan = off"))
        plan = "\n".join(
            row[0]
            for row in db.session.connection().exec_driver_sql(
                f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {statement}", parameters
            )
        )
        thrown_away = sum(
            int(n) for n in re.findall(r"Rows Removed by (?:Filter|Index Recheck): (\d+)", plan)
        )
        assert "ix_agent_memories_agent_category_active" in plan, plan
        assert thrown_away < RETRIEVED, plan
    else:
        plan = "\n".join(sqlite_plan(statement, parameters))
        assert "ix_agent_memories_agent_category_active" in plan, plan
        assert "SCAN agent_memories" not in plan, plan
