"""Content-blind maintenance jobs."""

from __future__ import annotations

import logging

from sqlalchemy import select

from models import Agent, db
from models.mutations import dedup_for_agent

log = logging.getLogger(__name__)


def dedup_agent(agent_id: int) -> dict:
    """Soft-delete exact duplicates (by content hash) among one agent's active core memories."""
    removed = dedup_for_agent(agent_id)
    log.info("dedup agent=%s removed=%d", agent_id, len(removed))
    return {"agent_id": agent_id, "removed": len(removed)}


def dedup_all_agents() -> dict:
    """Nightly: dedup every active agent. Idempotent; each agent is its own transaction."""
    agent_ids = db.session.scalars(select(Agent.id).where(Agent.active.is_(True)).order_by(Agent.id)).all()
    removed = sum(len(dedup_for_agent(agent_id)) for agent_id in agent_ids)
    log.info("dedup all agents=%d removed=%d", len(agent_ids), removed)
    return {"agents": len(agent_ids), "removed": removed}
