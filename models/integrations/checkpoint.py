"""Supervisor checkpoints (docs/spec/003-memory-system.md §15): one JSON document per (agent, user, thread), upserted."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    Text,
    cast,
    literal_column,
    select,
    type_coerce,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, mapped_column

from models.agents.quotas import check_checkpoint_bytes, register_checkpoint_table
from models.db import Model, atomic, db, utcnow
from models.errors import DomainError, NotFound
from models.memories.fields import SCOPE_ID

MAX_CHECKPOINT_BYTES = 1_048_576  # 1 MiB of compact JSON


class CheckpointTooLarge(DomainError):
    code = "checkpoint_too_large"
    http_status = 413


class SupervisorCheckpoint(Model):
    __tablename__ = "supervisor_checkpoints"
    __table_args__ = (
        Index("uq_supervisor_checkpoints_owner_thread", "agent_id", "user_id", "thread_id", unique=True),
        Index("ix_supervisor_checkpoints_updated", "updated_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), nullable=False)
    user_id: Mapped[str] = mapped_column(SCOPE_ID.column(), nullable=False)
    thread_id: Mapped[str] = mapped_column(SCOPE_ID.column(), nullable=False)
    checkpoint_data: Mapped[Any] = mapped_column(JSON, nullable=False)
    size_bytes: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)


register_checkpoint_table(SupervisorCheckpoint)  # its bytes count against the agent's quota


def _encode(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def checkpoint_size(data: Any) -> int:
    return len(_encode(data).encode("utf-8"))


def save_checkpoint(
    agent_id: int, user_id: str, thread_id: str, data: Any
) -> tuple[SupervisorCheckpoint, bool]:
    """Create or replace the checkpoint (one upsert, safe under concurrency); returns it and whether
    it was new. More than 1 MiB of JSON: 413, nothing written.

    The document is encoded once (the size check's compact JSON is what gets stored) and not read
    back: the returned row is built from what was written plus the upsert's RETURNING, and is not
    attached to the session."""
    encoded = _encode(data)
    size = len(encoded.encode("utf-8"))
    if size > MAX_CHECKPOINT_BYTES:
        raise CheckpointTooLarge(
            f"checkpoint is {size:,} bytes of JSON; the limit is {MAX_CHECKPOINT_BYTES:,}",
            limit=MAX_CHECKPOINT_BYTES,
        )
    # The per-agent storage quota (models/agents/quotas.py), the replaced checkpoint's old size not counted.
    check_checkpoint_bytes(
        agent_id,
        size,
        replacing={
            SupervisorCheckpoint: (SupervisorCheckpoint.user_id == user_id)
            & (SupervisorCheckpoint.thread_id == thread_id)
        },
    )
    table = SupervisorCheckpoint.__table__
    dialect = db.session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    # Already JSON text: PostgreSQL casts it to its json type; SQLite stores JSON as text anyway.
    document = (
        cast(type_coerce(encoded, Text), JSON) if dialect == "postgresql" else type_coerce(encoded, Text)
    )
    now = utcnow()
    row_values = insert(table).values(
        agent_id=agent_id,
        user_id=user_id,
        thread_id=thread_id,
        checkpoint_data=document,
        size_bytes=size,
        created_at=now,
        updated_at=now,
    )
    stmt = row_values.on_conflict_do_update(
        index_elements=[table.c.agent_id, table.c.user_id, table.c.thread_id],
        # Spelled out: `stmt.excluded` builds an alias of the table per call, and its foreign-key
        # proxies register event listeners (several ms per save, growing until garbage collection).
        set_={
            "checkpoint_data": literal_column("excluded.checkpoint_data"),
            "size_bytes": size,
            "updated_at": now,
        },
    ).returning(table.c.id, table.c.created_at, table.c.updated_at)
    with atomic():
        row_id, created_at, updated_at = db.session.execute(stmt).one()
    row = SupervisorCheckpoint(
        id=row_id,
        agent_id=agent_id,
        user_id=user_id,
        thread_id=thread_id,
        checkpoint_data=data,
        size_bytes=size,
        created_at=created_at,
        updated_at=updated_at,
    )
    return row, created_at == now


def load_checkpoint(agent_id: int, user_id: str, thread_id: str) -> SupervisorCheckpoint:
    row = db.session.scalar(
        select(SupervisorCheckpoint).where(
            SupervisorCheckpoint.agent_id == agent_id,
            SupervisorCheckpoint.user_id == user_id,
            SupervisorCheckpoint.thread_id == thread_id,
        )
    )
    if row is None:
        raise NotFound(f"no checkpoint for thread {thread_id!r}")
    return row
