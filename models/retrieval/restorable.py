"""What an agent can still restore (docs/spec/003-memory-system.md §7): its soft-deleted memories, and the
TTL-expired ones before their purge date, newest deletion first, a page at a time.

A memory deleted by the agent, a refinement session, a job or an admin has no purge date: it stays
restorable until restored or rolled back. A TTL-expired one (models/changes/ttl.py) is restorable until its
`purge_at`; past it the purge is due and a restore is refused (409 `purge_due`), so it is not listed. The
restore itself is `models.changes.write.restore`, the one write path.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import and_, or_, select

from models.db import db, utcnow
from models.errors import ValidationFailed
from models.memories.categories import in_categories
from models.memories.memory import AgentMemory


class BadRestorableCursor(ValidationFailed):
    """A cursor this list did not hand out (422, naming `cursor`)."""


class Restorable(NamedTuple):
    id: int
    memory_type: str
    category: str | None
    content: str
    token_estimate: int
    deleted_at: datetime
    purge_at: datetime | None  # None: deleted, never purged; else TTL-expired, purged then


def encode_cursor(memory: Restorable) -> str:
    raw = f"{memory.deleted_at.isoformat(timespec='microseconds')}|{memory.id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    """The position a cursor stands for; anything `encode_cursor` did not make is a BadRestorableCursor."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        deleted, memory_id = raw.split("|")
        return datetime.fromisoformat(deleted), int(memory_id)
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise BadRestorableCursor(
            "cursor: not a cursor this list returned", field="cursor", rule="cursor"
        ) from None


def restorable(
    agent_id: int,
    categories: Sequence[str | None],
    *,
    limit: int,
    cursor: str | None = None,
    now: datetime | None = None,
) -> tuple[list[Restorable], str | None]:
    """A page of the agent's restorable memories in these categories (None: those without one), the most
    recently deleted first (id breaks ties), and the cursor of the next page (None on the last)."""
    m = AgentMemory
    where = [
        m.agent_id == agent_id,
        m.deleted_at.is_not(None),
        or_(m.purge_at.is_(None), m.purge_at > (now or utcnow())),
        in_categories(m.category, categories),
    ]
    if cursor is not None:
        deleted_at, memory_id = decode_cursor(cursor)
        where.append(or_(m.deleted_at < deleted_at, and_(m.deleted_at == deleted_at, m.id < memory_id)))
    rows = db.session.execute(
        select(m.id, m.memory_type, m.category, m.content, m.token_estimate, m.deleted_at, m.purge_at)
        .where(*where)
        .order_by(m.deleted_at.desc(), m.id.desc())
        .limit(limit + 1)
    ).all()
    found = [Restorable(*row) for row in rows[:limit]]  # type: ignore[arg-type]  # deleted_at: not NULL here
    return found, encode_cursor(found[-1]) if len(rows) > limit else None
