"""A refinement tool call's round trips are bounded (the tool call's cost is its statements),
and the breaker check folded into the session write still sees the call's own changes."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from models import Agent, RefinementSession, db
from models.agents.agent import core_totals
from models.refinement.toolbox import RefinementToolbox

# Data statements per call (BEGIN, SAVEPOINT and COMMIT not counted): the session's locked read, the
# locked read of the memories, the memory writes, the audit record (and filed text for new text), the
# event, and the session's counters written with the agent's retention figures read back (RETURNING).
BUDGET = {"update_memory": 7, "consolidate_memories": 8, "delete_memory": 6, "protect_memory": 6}


def _session(agent_id: int) -> RefinementToolbox:
    tokens, count = core_totals(agent_id)
    session = RefinementSession(
        agent_id=agent_id, trigger="test", status="running", tokens_before=tokens, count_before=count
    )
    db.session.add(session)
    db.session.commit()
    return RefinementToolbox(session.id)


@pytest.mark.parametrize("tool", sorted(BUDGET))
def test_each_tool_call_issues_a_bounded_number_of_statements(app, make_agent, make_memory, tool):
    agent = make_agent(min_retention=0.1)
    a, b = (make_memory(agent, f"Memory number {n} about the garden") for n in range(2))
    arguments = {
        "update_memory": {"id": a.id, "content": "Tightened memory about the garden"},
        "consolidate_memories": {"ids": [a.id, b.id], "new_content": "Merged memory about the garden"},
        "delete_memory": {"id": b.id},
        "protect_memory": {"id": a.id},
    }[tool]
    toolbox = _session(agent.id)
    statements: list[str] = []

    def note(conn, cursor, statement, parameters, context, executemany):
        verb = statement.lstrip().split(None, 1)[0].upper()
        # One multi-row INSERT ... RETURNING is one statement on PostgreSQL; SQLAlchemy sends it row by
        # row on SQLite (in-process, no round trip): consecutive copies of one statement count once.
        if verb in {"SELECT", "INSERT", "UPDATE", "DELETE", "WITH"} and statements[-1:] != [statement]:
            statements.append(statement)

    sa.event.listen(db.engine, "before_cursor_execute", note)
    try:
        result = toolbox.call(tool, arguments)
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", note)
    assert result["ok"], result
    assert len(statements) <= BUDGET[tool], "\n".join(s.split("\n")[0][:100] for s in statements)


def test_the_breaker_sees_the_calls_own_deletion(app, make_agent, make_memory):
    """The retention figures come back from the session write, after the memory triggers ran: a call
    that cuts below the threshold trips the breaker in that same call and everything is restored."""
    agent = make_agent(min_retention=0.8)
    memories = [make_memory(agent, f"Fact {n} about the orchard and its trees") for n in range(5)]
    before = core_totals(agent.id)
    toolbox = _session(agent.id)
    assert toolbox.call("delete_memory", {"id": memories[0].id})["ok"]  # 4/5 = 80%: holds
    result = toolbox.call("delete_memory", {"id": memories[1].id})  # 3/5: trips
    assert result["error"] == "terminated"
    assert core_totals(agent.id) == before
    assert db.session.get(RefinementSession, toolbox.session_id).status == "terminated"
    assert db.session.get(Agent, agent.id).core_count == 5
