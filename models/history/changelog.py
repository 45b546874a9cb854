"""The memory delta header (docs/spec/003-memory-system.md §1): per-thread revisions and a change log.

Every audited change to a memory that carries a `thread_id` bumps that thread's revision by one
(an atomic upsert: concurrent writers to one thread queue on its row, so revisions never repeat or
skip) and files a change-log entry, in the transaction of the change itself. Threads are per agent:
two agents' "t1" are different threads. Entries hold ids and metadata, never text: the header is
rendered from the memories as they are now, so a purged or deleted memory's text never reappears.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from types import SimpleNamespace
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    delete,
    func,
    select,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, mapped_column

from models.db import Model, db, utcnow
from models.history import events
from models.memories.categories import in_categories
from models.memories.fields import CATEGORY, SCOPE_ID
from models.memories.memory import AgentMemory

MAX_BULLETS = 3
KEEP_PER_THREAD = 500  # change-log entries kept per thread; older ones are pruned as new ones arrive
BULLET_CHARS = 120

# Audit actions -> change-log events (docs/spec/003-memory-system.md §1: created/updated/merged/deleted/soft_deleted/restored).
EVENTS = {
    "create": "created",
    "import": "created",
    "refinement_journal": "created",
    "update": "updated",
    "protect": "updated",
    "unprotect": "updated",
    "consolidate": "merged",
    "consolidate_source": "merged",
    "delete": "deleted",
    "dedup": "deleted",
    "ttl_expire": "soft_deleted",
    "restore": "restored",
}
SYMBOLS = {
    "created": "+created",
    "updated": "↑updated",
    "merged": "↔merged",
    "deleted": "−deleted",
    "soft_deleted": "−soft_deleted",
    "restored": "↺restored",
}


class ThreadRevision(Model):
    __tablename__ = "thread_revisions"

    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), primary_key=True)
    thread_id: Mapped[str] = mapped_column(SCOPE_ID.column(), primary_key=True)
    rev: Mapped[int] = mapped_column(BigInteger, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)


class ChangeLogEntry(Model):
    """On PostgreSQL, partitioned by month on `ts`, its audit record's time (migration 0016, `partitions.py`);
    there the unique index holds `ts` too, and a thread's revisions stay unique through `bump_revision`."""

    __tablename__ = "change_log"
    __table_args__ = (Index("uq_change_log_thread_rev", "agent_id", "thread_id", "rev", unique=True),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), nullable=False)
    thread_id: Mapped[str] = mapped_column(SCOPE_ID.column(), nullable=False)
    rev: Mapped[int] = mapped_column(BigInteger, nullable=False)
    memory_id: Mapped[int] = mapped_column(Integer, nullable=False)
    event: Mapped[str] = mapped_column(String(16), nullable=False)
    category: Mapped[str | None] = mapped_column(CATEGORY.column())
    meta: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)
    ts: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)


def _event(record: Any) -> str | None:
    if record.action == "rollback":
        was_deleted = bool((record.before or {}).get("deleted_at"))
        is_deleted = bool((record.after or {}).get("deleted_at"))
        if is_deleted and not was_deleted:
            return "deleted"
        return "restored" if was_deleted and not is_deleted else "updated"
    return EVENTS.get(record.action)


PRODUCED = "produced_revisions"  # session.info key: {(agent, thread, memory): the revision a change produced}


def bump_revision(agent_id: int, thread_id: str) -> int:
    """Increment the thread's revision atomically and return the new value (1 for a new thread)."""
    table = ThreadRevision.__table__
    dialect = db.session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    now = utcnow()
    stmt = (
        insert(table)
        .values(agent_id=agent_id, thread_id=thread_id, rev=1, updated_at=now)
        .on_conflict_do_update(
            index_elements=[table.c.agent_id, table.c.thread_id],
            set_={"rev": table.c.rev + 1, "updated_at": now},
        )
        .returning(table.c.rev)
    )
    return db.session.execute(stmt).scalar_one()


def record_memory_changes(records: list[dict[str, Any]]) -> None:
    """The audit hook, called by `write_audits` inside the same transaction for records that name a
    memory: their events in one insert, and change-log entries for those whose memory belongs to a
    thread (docs/spec/003-memory-system.md §1, §14)."""
    items = [SimpleNamespace(**record) for record in records]
    events.record_writes(items)
    for item in items:
        _record_thread_change(item)


def _record_thread_change(record: Any) -> None:
    event = _event(record)
    if event is None:
        return
    before, after = record.before or {}, record.after or {}
    threads = [t for t in dict.fromkeys((after.get("thread_id"), before.get("thread_id"))) if t]
    if not threads:
        return
    snap = after or before
    meta: dict[str, Any] = {"action": record.action, "audit_id": record.id}
    if snap.get("importance") is not None:
        meta["importance"] = snap["importance"]
    for key in ("merged_from", "merged_into"):
        if key in (record.data or {}):
            meta[key] = record.data[key]
    produced = db.session().info.setdefault(PRODUCED, {})
    for thread_id in threads:
        rev = bump_revision(record.agent_id, thread_id)
        produced[(record.agent_id, thread_id, record.memory_id)] = rev
        db.session.add(
            ChangeLogEntry(
                agent_id=record.agent_id,
                thread_id=thread_id,
                rev=rev,
                memory_id=record.memory_id,
                event=event,
                category=snap.get("category"),
                meta=meta,
                ts=record.created_at,
            )
        )
        if rev % 100 == 0:
            db.session.execute(
                delete(ChangeLogEntry).where(
                    ChangeLogEntry.agent_id == record.agent_id,
                    ChangeLogEntry.thread_id == thread_id,
                    ChangeLogEntry.rev <= rev - KEEP_PER_THREAD,
                )
            )


def produced_revision(agent_id: int, thread_id: str, memory_id: int) -> int | None:
    """The thread revision this session's latest change to the memory produced (None if it made none).
    A write's answer names it, not the thread's newest: another writer may have changed the memory
    since the commit, and a client that took that later revision as its own would never see that change
    in a delta. A session lives for one request or one job, so this holds only what that one wrote."""
    return db.session().info.get(PRODUCED, {}).get((agent_id, thread_id, memory_id))


def current_revision(agent_id: int, thread_id: str) -> int:
    rev = db.session.scalar(
        select(ThreadRevision.rev).where(
            ThreadRevision.agent_id == agent_id, ThreadRevision.thread_id == thread_id
        )
    )
    return int(rev or 0)


@dataclass
class Delta:
    since_rev: int
    rev: int
    changes: int = 0
    bullets: list[str] = field(default_factory=list)

    @property
    def header(self) -> str:
        return (
            "\n".join([f"Memory updates since rev {self.since_rev}:", *self.bullets]) if self.bullets else ""
        )


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= BULLET_CHARS else text[: BULLET_CHARS - 1].rstrip() + "…"


def delta_since(agent_id: int, thread_id: str, since_rev: int, categories: list[str | None]) -> Delta:
    """The changes after `since_rev` in the caller's allowed categories (None: its uncategorised memories):
    at most 3 bullets, newest last.

    Text comes from the memory as it is now, and only while it is active and still in an allowed
    category; a deleted memory is named by id.
    """
    rev = current_revision(agent_id, thread_id)
    delta = Delta(since_rev=since_rev, rev=rev)
    if rev <= since_rev or not categories:
        return delta
    e, m = ChangeLogEntry, AgentMemory
    # One round trip: the newest three entries, how many there are in all, and their memories as they are now.
    entries = db.session.execute(
        select(
            e.rev,
            e.memory_id,
            e.event,
            e.category,
            e.meta,
            func.count().over().label("total"),
            m.content,
            m.category.label("now_category"),
            m.deleted_at,
        )  # fmt: skip
        .outerjoin(m, (m.id == e.memory_id) & (m.agent_id == e.agent_id))
        .where(
            e.agent_id == agent_id,
            e.thread_id == thread_id,
            e.rev > since_rev,
            in_categories(e.category, categories),
        )
        .order_by(e.rev.desc())
        .limit(MAX_BULLETS)
    ).all()
    delta.changes = entries[0].total if entries else 0
    for entry in reversed(entries):
        visible = entry.content is not None and entry.deleted_at is None and entry.now_category in categories
        label = f"[{(entry.now_category if visible else entry.category) or 'uncategorized'}]"
        if entry.event in ("deleted", "soft_deleted") or not visible:
            text = f"{label} #{entry.memory_id}"
        else:
            text = f"{label} {_shorten(entry.content)}"
        if entry.event == "merged" and "merged_into" in entry.meta:
            text = f"{label} #{entry.memory_id} merged into #{entry.meta['merged_into']}"
        elif entry.event == "merged" and "merged_from" in entry.meta:
            text = f"Combined {len(entry.meta['merged_from'])} notes: {text}"
        if entry.event == "created" and entry.meta.get("importance") is not None and visible:
            text += f" (imp={entry.meta['importance']})"
        delta.bullets.append(f"- {SYMBOLS[entry.event]}: {text}")
    return delta
