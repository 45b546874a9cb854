"""The retention guard: an agent's own deletions outside a refinement session are bounded like a session's.

A refinement session that removes too much is rolled back by its circuit breaker (`refinement/toolbox.py`).
The same agent, deleting through its API (or LangGraph's store, or the MCP tools) one call at a time, is
bound by the same threshold over a sliding window instead: a deletion that would leave the agent's active
core memory below its `min_retention` share (default 80%) of what it held before the window's deletions —
in tokens or in count — is refused with `409 retention_guard`, naming the guard, and nothing is deleted.

- Only core memories count (they are the prompt the threshold protects); deleting any other type passes.
- The first `RETENTION_GUARD_FREE_DELETES` core deletions in a window always pass, so a small agent can
  tidy a few memories.
- `RETENTION_GUARD_WINDOW_HOURS` (24) is the window; 0 turns the guard off.
- An admin lifts the guard (console, agent page; audited as `retention_guard_lifted`): deletions before the
  lift no longer count.
- Sessions, jobs and admins are not bound here: a session has its breaker, each job its own caps and rules,
  and an admin is the person who decides.

Deletions are counted from the audit log, so the guard holds across processes and restarts.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from flask import current_app
from sqlalchemy import func, select

from models.agents.agent import Agent
from models.changes.rules import AGENT_ACTOR, is_admin, require_agent
from models.db import atomic, db, utcnow
from models.errors import DomainError, ValidationFailed
from models.history.audit import AuditLog, new_op_id, write_audit

LIFTED = "retention_guard_lifted"


class RetentionGuard(DomainError):
    code = "retention_guard"
    http_status = 409


def applies(actor: str, session_id: int | None) -> bool:
    """The guard binds the agent itself, outside a refinement session, while it is switched on."""
    return actor == AGENT_ACTOR and session_id is None and window() is not None


def window() -> timedelta | None:
    hours = float(current_app.config["RETENTION_GUARD_WINDOW_HOURS"])
    return timedelta(hours=hours) if hours > 0 else None


def deleted_in_window(agent_id: int, now: datetime | None = None) -> tuple[int, int]:
    """(core tokens, core memories) the agent itself deleted outside sessions within the window: since the
    window's start, or since an admin's last lift within it if that is later. One statement."""
    now = now or utcnow()
    start = now - (window() or timedelta(0))
    lifted = (
        select(func.max(AuditLog.created_at))
        .where(AuditLog.agent_id == agent_id, AuditLog.action == LIFTED, AuditLog.created_at > start)
        .scalar_subquery()
    )
    row = db.session.execute(
        select(
            func.coalesce(func.sum(AuditLog.before["token_estimate"].as_integer()), 0),
            func.count(),
        ).where(
            AuditLog.agent_id == agent_id,
            AuditLog.actor == AGENT_ACTOR,
            AuditLog.session_id.is_(None),
            AuditLog.action == "delete",
            AuditLog.created_at >= start,
            AuditLog.created_at >= func.coalesce(lifted, start),
            AuditLog.before["memory_type"].as_string() == "core",
        )
    ).one()
    return int(row[0]), int(row[1])


def guard_deletion(agent_id: int, memories: list[dict[str, Any]]) -> None:
    """Refuse this deletion if, with the window's earlier ones, it takes the agent's core memory below its
    retention threshold (called with the rows locked, before they change)."""
    core = [m for m in memories if m["memory_type"] == "core"]
    if not core:
        return
    tokens, count = deleted_in_window(agent_id)
    if count + len(core) <= int(current_app.config["RETENTION_GUARD_FREE_DELETES"]):
        return
    agent = db.session.execute(
        select(Agent.min_retention, Agent.core_tokens, Agent.core_count).where(Agent.id == agent_id)
    ).one()
    removing_tokens = sum(m["token_estimate"] or 0 for m in core)
    # What the agent held before the window's deletions, and what it would keep after this one.
    held_tokens, held_count = agent.core_tokens + tokens, agent.core_count + count
    kept_tokens, kept_count = agent.core_tokens - removing_tokens, agent.core_count - len(core)
    if kept_tokens < agent.min_retention * held_tokens or kept_count < agent.min_retention * held_count:
        hours = (window() or timedelta(0)).total_seconds() / 3600
        raise RetentionGuard(
            f"retention guard: deleting {len(core)} more core memor{'y' if len(core) == 1 else 'ies'} would keep "
            f"{kept_count}/{held_count} memories and {kept_tokens}/{held_tokens} tokens of your core memory, "
            f"below your retention threshold ({agent.min_retention:.0%}) for deletions within {hours:g} hours; "
            "a refinement session, or an admin lifting the guard, can go further",
            guard="retention_guard",
            kept_tokens=kept_tokens,
            held_tokens=held_tokens,
        )


def status(agent_id: int) -> dict[str, Any]:
    """For the console: whether the guard is on, what the window's deletions took, and whether it is
    engaged (the next core deletion beyond the free allowance would be refused by count)."""
    span = window()
    if span is None:
        return {"enabled": False, "engaged": False}
    tokens, count = deleted_in_window(agent_id)
    agent = require_agent(agent_id)
    held_count = agent.core_count + count
    free = int(current_app.config["RETENTION_GUARD_FREE_DELETES"])
    return {
        "enabled": True,
        "window_hours": span.total_seconds() / 3600,
        "deleted_tokens": tokens,
        "deleted_count": count,
        "engaged": count >= free and agent.core_count - 1 < agent.min_retention * held_count,
    }


def lift(agent_id: int, *, actor: str) -> None:
    """An admin lifts the guard: the agent's deletions so far no longer count against it (audited)."""
    if not is_admin(actor):
        raise ValidationFailed("only an admin can lift the retention guard")
    with atomic():
        require_agent(agent_id)
        write_audit(op_id=new_op_id(), actor=actor, action=LIFTED, agent_id=agent_id, data={})
