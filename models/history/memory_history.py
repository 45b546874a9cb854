"""A memory's history (docs/spec/003-memory-system.md §8), read from the audit log, for the agent that owns it.

Audit actions map to docs/spec/003-memory-system.md's events: ADD, UPDATE, DELETE, MERGE, LINK, RESTORE, ROLLBACK, TTL (a LINK
names the memories a relation edge joined and its strength; no state changes). Each
event carries the before and after state with the text resolved from `audit_contents`; a purged
memory's text is gone for good and shows as redacted. Callers must have checked ownership: the
text is the owner's own and goes to no one else.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from models.db import db
from models.errors import NotFound
from models.history.audit import AuditContent, AuditLog
from models.memories.categories import in_categories
from models.memories.memory import AgentMemory

EVENTS = {
    "create": "ADD",
    "import": "ADD",
    "refinement_journal": "ADD",
    "update": "UPDATE",
    "protect": "UPDATE",
    "unprotect": "UPDATE",
    "consolidate": "MERGE",
    "consolidate_source": "MERGE",
    "delete": "DELETE",
    "dedup": "DELETE",
    "restore": "RESTORE",
    "rollback": "ROLLBACK",
    "ttl_expire": "TTL",
    "purge": "TTL",
    "link": "LINK",
}
STATE_FIELDS = (
    "memory_type",
    "category",
    "tags",
    "importance",
    "pinned",
    "constitutional",
    "user_id",
    "thread_id",
    "run_id",
    "actor_id",
    "role",
    "content_hash",
    "token_estimate",
    "created_at",
    "updated_at",
    "deleted_at",
    "purge_at",
)
META_KEYS = (
    "fields",
    "merged_from",
    "merged_into",
    "reason",
    "rollback_of",
    "patch_id",
    "consent",
    "tombstone",
    "linked",
)


@dataclass
class HistoryEvent:
    id: int
    event: str
    action: str
    actor: str
    session_id: int | None
    ts: Any
    old: dict | None
    new: dict | None
    meta: dict


def _texts(memory_ids: Iterable[int], refs: Iterable[int]) -> dict[int, str | None]:
    refs = {r for r in refs if r is not None}
    if not refs:
        return {}
    rows = db.session.execute(
        select(AuditContent.id, AuditContent.content).where(
            AuditContent.id.in_(refs), AuditContent.memory_id.in_(set(memory_ids))
        )
    )
    return {row.id: row.content for row in rows}


def _state(snap: dict | None, texts: dict[int, str | None]) -> dict | None:
    if snap is None:
        return None
    state = {name: snap.get(name) for name in STATE_FIELDS}
    ref = snap.get("content_ref")
    content = texts.get(ref) if ref is not None else None
    state["content"] = content
    state["redacted"] = content is None
    return state


def _event(record: AuditLog, texts: dict[int, str | None]) -> HistoryEvent:
    data = record.data or {}
    return HistoryEvent(
        id=record.id,
        event=EVENTS.get(record.action, record.action.upper()),
        action=record.action,
        actor=record.actor,
        session_id=record.session_id,
        ts=record.created_at,
        old=_state(record.before, texts),
        new=_state(record.after, texts),
        meta={k: data[k] for k in META_KEYS if k in data},
    )


def _records(agent_id: int, memory_ids: list[int], limit: int | None = None) -> list[AuditLog]:
    stmt = (
        select(AuditLog)
        .where(AuditLog.agent_id == agent_id, AuditLog.memory_id.in_(memory_ids))
        .order_by(AuditLog.id.desc())
    )
    return list(db.session.scalars(stmt.limit(limit) if limit else stmt))


def memory_history(agent_id: int, memory_id: int, limit: int = 50) -> tuple[list[HistoryEvent], bool]:
    """The newest `limit` events of one of this agent's memories (and whether there are more).

    A memory id the agent never had is NotFound, whoever else owns it.
    """
    records = _records(agent_id, [memory_id], limit + 1)
    if not records:
        raise NotFound(f"memory #{memory_id} not found")
    more = len(records) > limit
    records = records[:limit]
    refs = [
        s["content_ref"]
        for r in records
        for s in (r.before, r.after)
        if s and s.get("content_ref") is not None
    ]
    texts = _texts([memory_id], refs)
    return [_event(r, texts) for r in records], more


def last_known_category(agent_id: int, memory_id: int) -> str | None:
    """The memory's category now, or in its last snapshot if the row was purged."""
    row = db.session.scalar(
        select(AgentMemory.category).where(AgentMemory.id == memory_id, AgentMemory.agent_id == agent_id)
    )
    if row is not None:
        return row
    record = db.session.scalar(
        select(AuditLog)
        .where(AuditLog.agent_id == agent_id, AuditLog.memory_id == memory_id)
        .order_by(AuditLog.id.desc())
        .limit(1)
    )
    snap = (record.after or record.before) if record else None
    return (snap or {}).get("category")


EXPORT_BATCH = 200


def export_user(agent_id: int, user_id: str, categories: list[str | None]) -> Iterator[dict[str, Any]]:
    """Every memory of this agent about `user_id` in the allowed categories (None: without one), active and soft-deleted
    (flagged), each with its history; read in keyset batches so memory stays flat."""
    after_id = 0
    while True:
        memories = db.session.scalars(
            select(AgentMemory)
            .where(
                AgentMemory.agent_id == agent_id,
                AgentMemory.user_id == user_id,
                in_categories(AgentMemory.category, categories),
                AgentMemory.id > after_id,
            )
            .order_by(AgentMemory.id)
            .limit(EXPORT_BATCH)
        ).all()
        if not memories:
            return
        ids = [m.id for m in memories]
        records = _records(agent_id, ids)
        refs = [
            s["content_ref"]
            for r in records
            for s in (r.before, r.after)
            if s and s.get("content_ref") is not None
        ]
        texts = _texts(ids, refs)
        by_memory: dict[int, list[HistoryEvent]] = {}
        for record in reversed(records):  # oldest first within a memory's history
            if record.memory_id is not None:  # _records() names memories; a record always has one here
                by_memory.setdefault(record.memory_id, []).append(_event(record, texts))
        for memory in memories:
            yield {
                "memory": memory,
                "deleted": memory.deleted_at is not None,
                "history": by_memory.get(memory.id, []),
            }
        after_id = ids[-1]
        for row in (*memories, *records):  # keep the session's identity map flat across batches
            db.session.expunge(row)
