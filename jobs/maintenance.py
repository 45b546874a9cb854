"""Content-blind maintenance jobs."""

from __future__ import annotations

import logging

from sqlalchemy import func, select

from models import Agent, AgentMemory, db
from models.changes.dedup import dedup_for_agent, dedup_for_agents

log = logging.getLogger(__name__)
AGENTS_PER_TRANSACTION = 100


def dedup_agent(agent_id: int) -> dict:
    """Soft-delete exact duplicates (by content hash) among one agent's active core memories."""
    removed = dedup_for_agent(agent_id)
    log.info("dedup agent=%s removed=%d", agent_id, len(removed))
    return {"agent_id": agent_id, "removed": len(removed)}


def agents_with_duplicates() -> list[int]:
    """Active agents holding two active core memories with one content hash: one aggregate over the
    (agent_id, content_hash) index, so agents with nothing to do cost nothing more."""
    memories = AgentMemory.__table__.c
    return list(
        db.session.scalars(
            select(memories.agent_id)
            .join(Agent, Agent.id == memories.agent_id)
            .where(Agent.active.is_(True), memories.memory_type == "core", memories.deleted_at.is_(None))
            .group_by(memories.agent_id, memories.content_hash)
            .having(func.count() > 1)
            .distinct()
            .order_by(memories.agent_id)
        )
    )


def dedup_all_agents() -> dict:
    """Nightly: dedup every active agent that has duplicates. Idempotent; agents are taken 100 to a
    transaction (one op_id each), so a failure leaves the batches before it done and the rest for the
    next run."""
    agent_ids = agents_with_duplicates()
    removed = 0
    for start in range(0, len(agent_ids), AGENTS_PER_TRANSACTION):
        batch = dedup_for_agents(agent_ids[start : start + AGENTS_PER_TRANSACTION])
        removed += sum(len(ids) for ids in batch.values())
    log.info("dedup agents with duplicates=%d removed=%d", len(agent_ids), removed)
    return {"agents": len(agent_ids), "removed": removed}
