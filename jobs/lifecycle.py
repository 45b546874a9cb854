"""TTL lifecycle (docs/spec/003-memory-system.md §7) for non-core, non-journal, non-pinned, non-constitutional memories
not tagged audio, somatic or voice.

Step one, expiry: a memory not read for 60 days whose importance is below the threshold is
soft-deleted with a purge date 30 days out; until then it can be restored. Step two, purge: past
its purge date the row is removed and its text redacted from its history (a tombstone with hash
and token count stays). Core memories, pinned and constitutional ones, and anything deleted by a
refinement session, an agent or an admin (no purge date) are never purged.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from flask import current_app
from sqlalchemy import case, func, select

from models import AgentMemory, DomainError, db, utcnow
from models.changes.ttl import expire_memory, purge_memory

log = logging.getLogger(__name__)

IDLE = timedelta(days=60)
RUN_CAP = 5000  # rows per run and step: a backlog drains over several nights, each run stays bounded


def _lifecycle_applies(dialect: str) -> tuple:
    """What TTL may ever touch: not core, pinned or constitutional; not a refinement journal (the
    agent's record of its own sessions); never tagged audio, somatic or voice (immutable for every
    job: only the agent's own refinement, within the rules, touches those)."""
    return (
        AgentMemory.memory_type.not_in(("core", "journal")),
        AgentMemory.pinned.is_(False),
        AgentMemory.constitutional.is_(False),
        AgentMemory.without_immutable_tags(dialect),
    )


def _expirable(now: datetime, importance_below: int, dialect: str):
    # The later of the last read and the last change: a restore or an edit resets the idle clock.
    last_touch = case(
        (AgentMemory.last_accessed_at > AgentMemory.updated_at, AgentMemory.last_accessed_at),
        else_=AgentMemory.updated_at,
    )
    return (
        select(AgentMemory.agent_id, AgentMemory.id)
        .where(
            AgentMemory.deleted_at.is_(None),
            *_lifecycle_applies(dialect),
            last_touch < now - IDLE,
            func.coalesce(AgentMemory.importance, 1) < importance_below,
        )
        .order_by(AgentMemory.id)
        .limit(RUN_CAP)
    )


def _purgeable(now: datetime, dialect: str):
    return (
        select(AgentMemory.agent_id, AgentMemory.id)
        .where(
            AgentMemory.deleted_at.is_not(None),
            AgentMemory.purge_at.is_not(None),
            AgentMemory.purge_at <= now,
            *_lifecycle_applies(dialect),
        )
        .order_by(AgentMemory.id)
        .limit(RUN_CAP)
    )


def ttl_lifecycle(now: datetime | None = None) -> dict:
    """Daily: expire idle low-importance memories, then purge those past their purge date. Idempotent."""
    now = now or utcnow()
    threshold = int(current_app.config["TTL_IMPORTANCE_BELOW"])
    dialect = db.session.get_bind().dialect.name
    expired = purged = skipped = 0
    for agent_id, memory_id in db.session.execute(_expirable(now, threshold, dialect)).all():
        try:
            expire_memory(agent_id, memory_id, now=now)
            expired += 1
        except DomainError:  # changed since the query (restored, pinned, protected): leave it
            skipped += 1
    for agent_id, memory_id in db.session.execute(_purgeable(now, dialect)).all():
        try:
            purge_memory(agent_id, memory_id, now=now)
            purged += 1
        except DomainError:
            skipped += 1
    log.info("ttl: expired=%d purged=%d skipped=%d", expired, purged, skipped)
    return {"expired": expired, "purged": purged, "skipped": skipped}
