"""Which agents are due for a refinement session: the weekly sweep's and the over-budget scan's choice.

Read-only SQL over the maintained totals (agents.core_tokens / core_count) and index probes; the jobs
in jobs/refinement.py queue what these return, and the console explains the same choice on the dashboard
and the agent page (held back, next scan), so the rule lives here once.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import exists, func, select
from sqlalchemy.orm import aliased

from models.agents.agent import Agent, active_agent_ids
from models.db import db, utcnow
from models.history.audit import AuditLog
from models.history.session import RefinementSession

# An over-budget agent is not sent to a new session within a day of its last one.
OVER_BUDGET_COOLDOWN = timedelta(hours=24)


def agents_due_for_sweep(now=None) -> list[int]:
    """Weekly: active agents never refined or not within the week, plus any over budget (one query
    per 500 agents)."""
    now = now or utcnow()
    return list(
        active_agent_ids(
            Agent.core_count > 0,  # nothing to refine without core memories
            (Agent.last_refinement_at.is_(None))
            | (Agent.last_refinement_at < now - timedelta(weeks=1))
            | (Agent.core_tokens > Agent.core_token_budget),
        )
    )


# A session that ended like this found nothing to do: running the same agent on the same memories
# again would find nothing again, so the over-budget scan waits for a memory change.
IDLE_STATUSES = ("completed", "consent_declined")


def idle_since_last_session():
    """SQL, correlated on Agent: the agent's newest session finished with zero operations (completed or
    declined) and no memory of the agent has changed since (no audit record naming a memory after it
    finished). Index probes only: the newest session by id, the (agent_id, created_at) audit index."""
    session, other = aliased(RefinementSession), aliased(RefinementSession)
    newest = select(func.max(other.id)).where(other.agent_id == Agent.id).correlate(Agent).scalar_subquery()
    changed = (
        select(AuditLog.id)
        .where(
            AuditLog.agent_id == Agent.id,
            AuditLog.created_at > session.finished_at,
            AuditLog.memory_id.is_not(None),
        )
        .correlate(Agent, session)
    )
    return exists(
        select(session.id)
        .where(
            session.id == newest,
            session.status.in_(IDLE_STATUSES),
            session.ops_count == 0,
            session.finished_at.is_not(None),
            ~changed.exists(),
        )
        .correlate(Agent)
    )


def held_agents(agent_ids: list[int]) -> set[int]:
    """Which of these agents the over-budget scan holds back (see `idle_since_last_session`)."""
    if not agent_ids:
        return set()
    return set(db.session.scalars(select(Agent.id).where(Agent.id.in_(agent_ids), idle_since_last_session())))


def over_budget_due(now=None, cooldown: timedelta = OVER_BUDGET_COOLDOWN) -> list[int]:
    """Over-budget agents without a session started within the cool-down, and not held back because
    their last session found nothing to do and their memories have not changed since, in one query
    per 500 agents over the maintained totals (O(agents), not O(memories)); the rest are index probes
    per over-budget agent."""
    now = now or utcnow()
    recent = select(RefinementSession.id).where(
        RefinementSession.agent_id == Agent.id, RefinementSession.started_at >= now - cooldown
    )
    return list(
        active_agent_ids(
            Agent.core_tokens > Agent.core_token_budget, ~recent.exists(), ~idle_since_last_session()
        )
    )
