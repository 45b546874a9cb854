"""The audit log: append-only records with full before/after snapshots of every memory change.

Snapshots hold every column of the row; the content itself is stored once per (memory, text)
in `audit_contents` and referenced from the snapshot by id. That keeps `audit_logs` strictly
append-only (a database trigger rejects UPDATE and DELETE) while still letting the TTL purge
redact a purged memory's text from its history: it blanks the `audit_contents` rows of that
memory and leaves a tombstone (hash and token count) behind.
"""

from __future__ import annotations

import functools
import hashlib
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    ForeignKey,
    Index,
    Insert,
    Integer,
    String,
    Table,
    Text,
    event,
    func,
    insert,
    select,
)
from sqlalchemy.orm import Mapped, Session, mapped_column

from models.db import Model, db, utcnow
from models.memories.memory import DATETIME_FIELDS, SNAPSHOT_FIELDS, AgentMemory
from models.parsing import parse_utc

REDACTED = None  # the content of a purged memory in its history
CHUNK = 5000  # ids per IN (...) list and rows per multi-row INSERT on set-based paths


class AuditLog(Model):
    """On PostgreSQL, partitioned by month on `created_at` (migration 0016, `partitions.py`): the primary key
    there is (id, created_at), and `id` alone stays unique — one sequence, rows never updated — so it is the
    ORM's identity."""

    __tablename__ = "audit_logs"
    __table_args__ = (
        Index("ix_audit_logs_agent_created", "agent_id", "created_at"),
        # The timeline's walk of an agent's newest records (migration 0015).
        Index("ix_audit_logs_agent_id", "agent_id", "id"),
        Index("ix_audit_logs_memory", "memory_id", "id"),
        Index("ix_audit_logs_session", "session_id"),
        Index("ix_audit_logs_op", "op_id"),
        # The activity feed's actor filter (migration 0013): an exact actor or a prefix ("admin:%").
        Index("ix_audit_logs_actor", "actor", "id", postgresql_ops={"actor": "text_pattern_ops"}),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int | None] = mapped_column(ForeignKey("agents.id"))
    # No foreign key: history outlives a purged row.
    memory_id: Mapped[int | None] = mapped_column(Integer)
    session_id: Mapped[int | None] = mapped_column(ForeignKey("refinement_sessions.id"))
    # Every record written by one call of the mutation path shares an op_id: the unit of rollback.
    op_id: Mapped[str] = mapped_column(String(36), nullable=False)
    actor: Mapped[str] = mapped_column(String(64), nullable=False)
    action: Mapped[str] = mapped_column(String(48), nullable=False)
    before: Mapped[dict | None] = mapped_column(JSON)
    after: Mapped[dict | None] = mapped_column(JSON)
    data: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)

    def __repr__(self) -> str:
        return f"<AuditLog #{self.id} {self.action} memory={self.memory_id} by {self.actor}>"

    @property
    def token_delta(self) -> int:
        """Active core tokens this record added (positive) or removed (negative)."""
        return _active_core_tokens(self.after) - _active_core_tokens(self.before)


def _active_core_tokens(snapshot: dict | None) -> int:
    if not snapshot or snapshot.get("deleted_at") or snapshot.get("memory_type") != "core":
        return 0
    return int(snapshot.get("token_estimate") or 0)


class AuditContent(Model):
    """Memory text referenced by snapshots. Append-only except for purge redaction (trigger-enforced).

    Not partitioned, on either database: it grows by distinct texts of a memory, not by records, and the
    mutation path reads it by memory id (a memory's newest text), which monthly partitions would turn into a
    probe of every partition (docs/how-to/scaling-out.md, "History partitioned by month (PostgreSQL)")."""

    __tablename__ = "audit_contents"
    __table_args__ = (Index("ix_audit_contents_memory", "memory_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    memory_id: Mapped[int] = mapped_column(Integer, nullable=False)
    sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    content: Mapped[str | None] = mapped_column(Text)
    token_estimate: Mapped[int] = mapped_column(Integer, nullable=False)
    redacted_at: Mapped[datetime | None] = mapped_column(DateTime)


def new_op_id() -> str:
    return str(uuid.uuid4())


CONTENT_REFS = "audit_content_refs"  # db.session.info key: memory id -> (id, sha256) of its newest text


@event.listens_for(Session, "after_commit")
@event.listens_for(Session, "after_rollback")
def _forget_content_refs(session: Session) -> None:
    """The cache below lives for one database transaction: what another one filed is read afresh, and
    nothing a rolled-back transaction filed is remembered."""
    session.info.pop(CONTENT_REFS, None)


def newest_content_columns() -> tuple:
    """(id, sha256) of a memory's newest audit_contents row, as scalar subqueries correlated to
    agent_memories: a loader selects them with the row, so its before-snapshot needs no query of its own.
    Table columns, not ORM attributes: the mutation path's locking read is a Core statement."""
    contents, memories = AuditContent.__table__, AgentMemory.__table__
    newest = (
        select(contents.c.id)
        .where(contents.c.memory_id == memories.c.id)
        .order_by(contents.c.id.desc())
        .limit(1)
    )
    return (
        newest.scalar_subquery().label("newest_content_id"),
        newest.with_only_columns(contents.c.sha256).scalar_subquery().label("newest_content_sha"),
    )


def remember_content_ref(memory_id: int, content_id: int | None, sha: str | None) -> None:
    """Record what a loader read as the memory's newest filed text, for this transaction."""
    if content_id is not None:
        db.session.info.setdefault(CONTENT_REFS, {})[memory_id] = (content_id, sha)


def file_content(memory_id: int, content: str, token_estimate: int, *, new: bool = False) -> int:
    """The audit_contents row holding `content` as this memory's current text, filed if it is new.

    Within a transaction the newest row is remembered (every row filed here or by `file_contents`
    updates it, and the mutation path's locking read records it), so an operation's snapshots cost
    no lookup. `new`: the row was inserted in this transaction, so nothing is filed for it yet (ids
    are never reused) and there is nothing to look up.
    """
    known = db.session.info.setdefault(CONTENT_REFS, {})
    latest = None if new else (known.get(memory_id) or _newest_content(memory_id))
    sha = text_sha(content)
    if latest is not None and latest[1] == sha:
        known[memory_id] = latest
        return latest[0]
    values = {"memory_id": memory_id, "sha256": sha, "content": content, "token_estimate": token_estimate}
    content_id = db.session.execute(insert_one(AuditContent.__table__), values).scalar_one()
    known[memory_id] = (content_id, sha)
    return content_id


def _newest_content(memory_id: int) -> tuple[int, str] | None:
    found = db.session.execute(
        select(AuditContent.id, AuditContent.sha256)
        .where(AuditContent.memory_id == memory_id)
        .order_by(AuditContent.id.desc())
        .limit(1)
    ).first()
    return (found.id, found.sha256) if found is not None else None


@functools.cache
def insert_one(table: Table) -> Insert:
    """`INSERT ... RETURNING id` for one row of `table`, built once: the values are bound at execution."""
    return insert(table).returning(table.c.id)


@functools.cache
def insert_many(table: Table) -> Insert:
    """The multi-row `INSERT ... RETURNING id` (ids in parameter order) for `table`, built once."""
    return insert(table).returning(table.c.id, sort_by_parameter_order=True)


def snapshot_values(values: Any, content_ref: int) -> dict[str, Any]:
    """The snapshot of a row given as a mapping of its columns (for set-based paths, no ORM object)."""
    snap: dict[str, Any] = {}
    for field in SNAPSHOT_FIELDS:
        value = values[field]
        if field in DATETIME_FIELDS and value is not None:
            value = value.isoformat()
        elif field == "tags":
            value = list(value or [])
        snap[field] = value
    snap["content_ref"] = content_ref
    return snap


def latest_contents(memory_ids: list[int]) -> dict[int, tuple[int, str]]:
    """memory id -> (id, sha256) of its newest audit_contents row, the one holding its current text; one
    query per 5,000 ids, and the text itself is never read."""
    found: dict[int, tuple[int, str]] = {}
    for start in range(0, len(memory_ids), CHUNK):
        newest = (
            select(func.max(AuditContent.id))
            .where(AuditContent.memory_id.in_(memory_ids[start : start + CHUNK]))
            .group_by(AuditContent.memory_id)
        )
        rows = db.session.execute(
            select(AuditContent.memory_id, AuditContent.id, AuditContent.sha256).where(
                AuditContent.id.in_(newest)
            )
        )
        found.update((memory_id, (content_id, sha)) for memory_id, content_id, sha in rows)
    return found


def file_contents(rows: list[AgentMemory]) -> list[int]:
    """File the current text of these memories as their newest audit_contents rows, in one multi-row
    INSERT; returns the new rows' ids in order (set-based counterpart of `_content_ref`)."""
    if not rows:
        return []
    table = AuditContent.__table__
    values = [
        {
            "memory_id": m.id,
            "sha256": content_sha(m),
            "content": m.content,
            "token_estimate": m.token_estimate,
        }
        for m in rows
    ]
    ids = db.session.scalars(insert_many(table), values).all()
    known = db.session.info.setdefault(CONTENT_REFS, {})
    for value, content_id in zip(values, ids, strict=True):
        known[value["memory_id"]] = (content_id, value["sha256"])
    return list(ids)


def content_sha(memory: AgentMemory) -> str:
    """SHA-256 of the exact text, as filed in audit_contents (not content_hash: that one is normalised)."""
    return text_sha(memory.content)


def text_sha(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def latest_content_refs(memory_ids: list[int]) -> dict[int, int]:
    """memory id -> the audit_contents row holding its current text; every memory must have one."""
    refs = {memory_id: content_id for memory_id, (content_id, _) in latest_contents(memory_ids).items()}
    missing = set(memory_ids) - set(refs)
    if missing:
        raise RuntimeError(f"memories {sorted(missing)[:5]} have no filed content")
    return refs


def restore_fields(snap: dict[str, Any]) -> dict[str, Any]:
    """The column values a snapshot describes, content included, ready to assign to a row."""
    values: dict[str, Any] = {}
    for field in SNAPSHOT_FIELDS:
        if field == "id":
            continue
        value = snap.get(field)
        if field in DATETIME_FIELDS and value is not None:
            value = parse_utc(value, field=field)
        values[field] = value
    content_row = db.session.get(AuditContent, snap["content_ref"])
    values["content"] = content_row.content if content_row is not None else REDACTED
    return values


def write_audit(
    *,
    op_id: str,
    actor: str,
    action: str,
    agent_id: int | None,
    memory_id: int | None = None,
    session_id: int | None = None,
    before: dict | None = None,
    after: dict | None = None,
    data: dict | None = None,
) -> int:
    """Add one audit record to the current transaction and return its id: one INSERT executed at once, so a
    failure surfaces here and fails the caller's transaction. The audit record only: a change of a memory
    row also files its change-log entry and event, through `models/changes/records.py`."""
    (record,) = insert_audits(
        [
            {
                "op_id": op_id, "actor": actor, "action": action, "agent_id": agent_id, "memory_id": memory_id,
                "session_id": session_id, "before": before, "after": after, "data": data,
            }
        ]
    )  # fmt: skip
    return int(record["id"])


def write_audits(rows: list[dict[str, Any]]) -> list[int]:
    """Add audit records to the current transaction (each row has write_audit's keyword arguments); their
    ids, in order."""
    return [record["id"] for record in insert_audits(rows)]


def insert_audits(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records as inserted, ids and times included, in multi-row INSERTs of at most 5,000 rows (a single
    record is a plain INSERT ... RETURNING)."""
    if not rows:
        return []
    now = utcnow()
    records = [
        {"memory_id": None, "session_id": None, "before": None, "after": None, **row, "created_at": now}
        for row in rows
    ]
    for record in records:
        record["data"] = record.get("data") or {}
    ids: list[int] = []
    table = AuditLog.__table__
    if len(records) == 1:
        ids.append(db.session.execute(insert_one(table), records[0]).scalar_one())
    else:
        for start in range(0, len(records), CHUNK):
            chunk = records[start : start + CHUNK]
            ids += db.session.scalars(insert_many(table), chunk).all()
    for record, record_id in zip(records, ids, strict=True):
        record["id"] = record_id
    return records
