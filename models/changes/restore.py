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

from models.changes.mutations import restore_memory
from models.changes.rows import load_row
from models.changes.rules import is_agent_path
from models.db import atomic, utcnow
from models.errors import ConstitutionalLocked, DomainError, ImmutableMemory, ValidationFailed
from models.memories.memory import AgentMemory, immutable_tags


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
        # Locked through the row layer (the agent's row first, then the memory's: rows.py), so the
        # checks below read the row the restore will write.
        memory = load_row(agent_id, memory_id, active=False)
        purge_at = memory["purge_at"]
        if purge_at is not None and purge_at <= (now or utcnow()):
            raise PurgeDue(
                f"memory #{memory_id} passed its purge date ({purge_at:%Y-%m-%d %H:%M} UTC) and is no "
                "longer restorable",
                ids=[memory_id],
            )
        if is_agent_path(actor):
            if memory["constitutional"]:
                raise ConstitutionalLocked(f"memory #{memory_id} is constitutional", ids=[memory_id])
            tags = immutable_tags(memory["tags"])
            if tags:
                raise ImmutableMemory(
                    f"memory #{memory_id} is tagged {', '.join(sorted(tags))}; only an admin can restore it",
                    ids=[memory_id],
                )
        return restore_memory(agent_id, memory_id, actor=actor)
