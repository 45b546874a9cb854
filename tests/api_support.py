"""Helpers shared by the agent API tests (no tests here)."""

from __future__ import annotations

import sqlalchemy as sa

from models import (
    Agent,
    AgentMemory,
    AuditContent,
    AuditLog,
    ChangeLogEntry,
    MechanicGrant,
    ProposedPatch,
    SupervisorCheckpoint,
    ThreadRevision,
    db,
)

WRITE_TABLES = (
    AgentMemory,
    AuditLog,
    AuditContent,
    ChangeLogEntry,
    ThreadRevision,
    ProposedPatch,
    SupervisorCheckpoint,
    MechanicGrant,
    Agent,
)


def bearer(agent: Agent) -> dict[str, str]:
    """A fresh token for the agent (the fixture's own token is not kept), as request headers."""
    token = agent.issue_token()
    db.session.commit()
    return {"Authorization": f"Bearer {token}"}


def table_state() -> dict[str, list[tuple]]:
    """Every row of every table an API call could write, read fresh: equal before and after means
    nothing changed."""
    db.session.expire_all()
    state = {}
    for model in WRITE_TABLES:
        table = model.__table__
        rows = db.session.execute(sa.select(table).order_by(*table.primary_key.columns)).all()
        state[table.name] = [tuple(r) for r in rows]
    return state


def memory_rows() -> list[tuple]:
    return table_state()["agent_memories"]
