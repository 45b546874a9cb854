"""Restoring a soft-deleted memory: the rules an agent's or an admin's restore answers to.

Both the agent API (`POST /api/v1/memory/<id>/restore`) and the console's Restore button come here;
the change itself is `models.changes.mutations.restore_memory` (audited as `restore`, in the change log and
the events as `restored` / `restore`). What this adds, checked on the row locked for the write:

- retention: a TTL-expired memory is restorable only until its `purge_at` (README "Jobs and
  schedule"); past it, the purge is due and its text is about to be redacted, so the restore is
  refused (409 `purge_due`) rather than racing the purge job;
- the agent locks: agents never change a memory tagged audio, somatic or voice, so an agent cannot
  restore one an admin deleted (409 `immutable`); a constitutional memory can never be soft-deleted
  (the database refuses it), so there is none to restore, and the check stays as a second wall.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from models.changes.mutations import restore_memory
from models.changes.rules import is_agent_path
from models.db import atomic, db, utcnow
from models.errors import ConstitutionalLocked, DomainError, ImmutableMemory, NotFound, ValidationFailed
from models.memories.memory import AgentMemory


class PurgeDue(DomainError):
    """The memory's TTL grace period is over: it is no longer restorable."""

    code = "purge_due"
    http_status = 409


def restore_deleted(agent_id: int, memory_id: int, *, actor: str, now: datetime | None = None) -> AgentMemory:
    """Bring back one of this agent's soft-deleted memories, within the retention and lock rules above.

    Another agent's id, a purged id and an id that never existed are all "not found"; an active memory
    is a ValidationFailed ("not deleted")."""
    if isinstance(memory_id, bool) or not isinstance(memory_id, int):
        raise ValidationFailed("memory id must be an integer")
    with atomic():
        memory = db.session.scalar(
            select(AgentMemory)
            .where(AgentMemory.id == memory_id, AgentMemory.agent_id == agent_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
        if memory is None:
            raise NotFound(f"memory #{memory_id} not found")
        if memory.deleted_at is None:
            raise ValidationFailed(f"memory #{memory_id} is not deleted")
        if memory.purge_at is not None and memory.purge_at <= (now or utcnow()):
            raise PurgeDue(
                f"memory #{memory_id} passed its purge date ({memory.purge_at:%Y-%m-%d %H:%M} UTC) and is no "
                "longer restorable",
                ids=[memory_id],
            )
        if is_agent_path(actor):
            if memory.constitutional:
                raise ConstitutionalLocked(f"memory #{memory_id} is constitutional", ids=[memory_id])
            if memory.immutable_tags:
                raise ImmutableMemory(
                    f"memory #{memory_id} is tagged {', '.join(sorted(memory.immutable_tags))}; "
                    "only an admin can restore it",
                    ids=[memory_id],
                )
        return restore_memory(agent_id, memory_id, actor=actor)
