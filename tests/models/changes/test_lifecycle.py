"""TTL lifecycle: expiry, restore window, purge with redacted history; core and locked rows untouched."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa

from jobs.lifecycle import ttl_lifecycle
from models import AgentMemory, AuditContent, AuditLog, db, utcnow
from models.changes.mutations import create_memory, restore_memory, soft_delete_memories


def _age(memory_id: int, days: int) -> None:
    """Pretend a memory was last read `days` ago (test set-up only: the column is access metadata)."""
    db.session.execute(
        sa.update(AgentMemory)
        .where(AgentMemory.id == memory_id)
        .values(last_accessed_at=utcnow() - timedelta(days=days), updated_at=utcnow() - timedelta(days=days))
    )
    db.session.commit()


def test_ttl_expires_then_purges_only_idle_unimportant_non_core_memories(make_agent):
    agent = make_agent()
    idle = create_memory(
        agent.id, "Chatted about the weather", actor="agent", memory_type="episodic", importance=1
    )
    important = create_memory(
        agent.id, "Signed the contract", actor="agent", memory_type="episodic", importance=4
    )
    pinned = create_memory(agent.id, "Pinned note", actor="agent", memory_type="semantic", pinned=True)
    core = create_memory(agent.id, "Core identity", actor="agent")
    locked = create_memory(agent.id, "Vow", actor="admin:1", memory_type="semantic", constitutional=True)
    recent = create_memory(agent.id, "Fresh episode", actor="agent", memory_type="episodic", importance=1)
    refined_away = create_memory(agent.id, "Removed by an agent", actor="agent", memory_type="episodic")
    soft_delete_memories(agent.id, [refined_away.id], actor="agent")
    for memory in (idle, important, pinned, core, locked):
        _age(memory.id, 61)

    first = ttl_lifecycle()
    assert first == {"expired": 1, "purged": 0, "skipped": 0}
    db.session.expire_all()
    row = db.session.get(AgentMemory, idle.id)
    assert row.deleted_at is not None and row.purge_at > utcnow() + timedelta(days=29)
    assert all(
        db.session.get(AgentMemory, m.id).deleted_at is None
        for m in (important, pinned, core, locked, recent)
    )
    assert ttl_lifecycle() == {"expired": 0, "purged": 0, "skipped": 0}  # idempotent

    later = utcnow() + timedelta(days=31)
    assert ttl_lifecycle(now=later)["purged"] == 1
    db.session.expire_all()
    assert db.session.get(AgentMemory, idle.id) is None
    assert db.session.get(AgentMemory, refined_away.id) is not None  # no purge date: kept forever
    texts = db.session.scalars(sa.select(AuditContent.content).where(AuditContent.memory_id == idle.id)).all()
    assert texts and set(texts) == {None}
    actions = db.session.scalars(sa.select(AuditLog.action).where(AuditLog.memory_id == idle.id)).all()
    assert actions == ["create", "ttl_expire", "purge"]
    assert ttl_lifecycle(now=later)["purged"] == 0


def test_restored_memory_is_never_purged(make_agent):
    agent = make_agent()
    memory = create_memory(agent.id, "Worth keeping after all", actor="agent", memory_type="episodic")
    _age(memory.id, 90)
    ttl_lifecycle()
    restore_memory(agent.id, memory.id, actor="agent")
    assert ttl_lifecycle(now=utcnow() + timedelta(days=45))["purged"] == 0
    db.session.expire_all()
    row = db.session.get(AgentMemory, memory.id)
    assert row is not None and row.deleted_at is None and row.purge_at is None
