"""Read-side bookkeeping: a memory's `last_accessed_at`, touched when memory.query returns it.

The TTL policy of docs/spec/003-memory-system.md §7 reads `last_accessed_at`, but a read is not a
change: no audit record, and no write on the request's hot path. Touches go into a buffer of
infra/batching.py and are written here, one UPDATE a batch (SQLite: per chunk of ids), on a connection
of their own, and only where the stored time is older than RESOLUTION. This module is the one writer of
`agent_memories` outside models/changes/, and it writes nothing but `last_accessed_at`. Losing a buffer
(a killed process) loses a few seconds of access times, never a memory change.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from sqlalchemy import BigInteger, String, any_, bindparam, cast, or_, update
from sqlalchemy.dialects.postgresql import ARRAY

from infra.batching import batch
from models.db import db, utcnow
from models.memories.memory import AgentMemory
from models.retrieval.term_stats import array_literal

CHUNK = 500
# How fresh `last_accessed_at` is kept: a memory read again within this long of its stored time is not
# written again. Its readers count in days (the TTL policy: 60 days unread; consolidation's "recently
# read"); a memory an agent reads on every turn was rewritten every flush, the bulk of the writes a
# read-only load made (in bench/api_load.py's, three row updates a request).
RESOLUTION = timedelta(minutes=1)


def _write_touches(items: list[tuple[int, datetime]]) -> None:
    latest: dict[int, datetime] = {}
    for memory_id, when in items:
        if memory_id not in latest or when > latest[memory_id]:
            latest[memory_id] = when
    # One timestamp per batch keeps it to one UPDATE per chunk; the batch spans a few seconds.
    stamp = max(latest.values())
    ids = sorted(latest)  # a fixed lock order, so concurrent flushes cannot deadlock each other
    table = AgentMemory.__table__
    stale = or_(table.c.last_accessed_at.is_(None), table.c.last_accessed_at < stamp - RESOLUTION)
    touched = update(table).where(stale).values(last_accessed_at=stamp)
    with db.engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            # All ids as one bigint[] parameter: an IN list is a statement text of its own for every count
            # of ids, which SQLAlchemy and psycopg then convert afresh.
            listed = table.c.id == any_(cast(bindparam("ids", type_=String), ARRAY(BigInteger)))
            conn.execute(touched.where(listed), {"ids": array_literal(map(str, ids))})
            return
        for start in range(0, len(ids), CHUNK):
            conn.execute(touched.where(table.c.id.in_(ids[start : start + CHUNK])))


def touch(memory_ids: Iterable[int], when: datetime | None = None) -> None:
    """Note that these memories were read (written later, in a batch)."""
    when = when or utcnow()
    batch("last_accessed_at", _write_touches).add((memory_id, when) for memory_id in memory_ids)


def flush_access() -> int:
    """Write all buffered touches now."""
    return batch("last_accessed_at", _write_touches).flush()
