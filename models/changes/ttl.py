"""The TTL lifecycle of a memory: expire (a soft delete with a purge date, restorable until then), then
purge (the row removed for good, its filed text redacted, a tombstone kept in the audit log).

Run by the lifecycle job (`jobs/lifecycle.py`) through the mutation path's rows and rules, audited in the
same transaction like every other change. Only non-core, non-journal, non-pinned, non-constitutional
memories with no immutable tag ever expire.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, update

from models.changes.records import record_change
from models.changes.rows import MEMORIES, Row, as_objects, load_row, snapshot_row, write_rows
from models.changes.rules import check_actor
from models.db import atomic, db, refresh_loaded, utcnow
from models.errors import ConstitutionalLocked, ImmutableMemory, ValidationFailed
from models.history.audit import AuditContent, new_op_id
from models.memories.memory import AgentMemory, immutable_tags

PURGE_GRACE = timedelta(days=30)


def _guard_purgeable(memory: Row) -> None:
    """TTL lifecycle applies only to non-core, non-journal, non-pinned, non-constitutional memories
    with no immutable tag."""
    if memory["constitutional"]:
        raise ConstitutionalLocked(f"memory #{memory['id']} is constitutional and can never be purged")
    tags = immutable_tags(memory["tags"])
    if tags:
        raise ImmutableMemory(
            f"memory #{memory['id']} is tagged {', '.join(sorted(tags))} and never expires",
            ids=[memory["id"]],
        )
    if memory["memory_type"] in ("core", "journal"):
        raise ValidationFailed(
            f"memory #{memory['id']} is a {memory['memory_type']} memory; those are never purged"
        )
    if memory["pinned"]:
        raise ValidationFailed(f"memory #{memory['id']} is pinned and cannot expire")


def expire_memory(
    agent_id: int,
    memory_id: int,
    *,
    actor: str = "system:ttl",
    grace: timedelta = PURGE_GRACE,
    now: datetime | None = None,
) -> AgentMemory:
    """TTL step one: soft-delete with a purge date; restorable until then."""
    check_actor(actor)
    with atomic():
        memory = load_row(agent_id, memory_id)
        _guard_purgeable(memory)
        before = snapshot_row(memory)
        now = now or utcnow()
        write_rows([memory], {"deleted_at": now, "updated_at": now, "purge_at": now + grace})
        record_change(
            op_id=new_op_id(), actor=actor, action="ttl_expire", agent_id=agent_id, memory_id=memory_id,
            before=before, after=snapshot_row(memory),
        )  # fmt: skip
    return as_objects([memory])[0]


def purge_memory(
    agent_id: int, memory_id: int, *, actor: str = "system:ttl", now: datetime | None = None
) -> None:
    """TTL step two: remove an expired row for good and redact its text from its history.

    The audit trail keeps a tombstone (content hash and token count); the text itself is blanked
    in `audit_contents`, which is the only redaction the database triggers allow.
    """
    check_actor(actor)
    with atomic():
        memory = load_row(agent_id, memory_id, active=False)
        _guard_purgeable(memory)
        if memory["purge_at"] is None or memory["purge_at"] > (now or utcnow()):
            raise ValidationFailed(f"memory #{memory_id} is not due for purge")
        before = snapshot_row(memory)
        tombstone = {"content_hash": memory["content_hash"], "token_estimate": memory["token_estimate"]}
        db.session.execute(delete(MEMORIES).where(MEMORIES.c.id == memory_id))
        # The session's copy, if it holds one, keeps the row's last values and leaves the session, as
        # after an ORM delete: nothing may flush it again.
        held = refresh_loaded(AgentMemory, memory_id, memory)
        if held is not None:
            db.session.expunge(held)
        db.session.execute(
            update(AuditContent)
            .where(AuditContent.memory_id == memory_id, AuditContent.content.is_not(None))
            .values(content=None, redacted_at=utcnow())
        )
        record_change(
            op_id=new_op_id(),
            actor=actor,
            action="purge",
            agent_id=agent_id,
            memory_id=memory_id,
            before=before,
            after=None,
            data={"tombstone": tombstone, "content_redacted": True},
        )
