"""LangGraph checkpoints per agent: LangGraph's own data model (docs/how-to/langgraph.md).

The same three tables as LangGraph's PostgreSQL saver, each scoped by agent: checkpoints (id,
parent id, namespace, the checkpoint document without its channel values, metadata), channel
blobs (one per channel and version, written once and shared by every checkpoint that carries that
version) and pending writes (per task and index). Values stay opaque: the client serialises them
with its saver's `serde` and the server stores the (type, bytes) pairs it is given.

Rows belong to an agent (ON DELETE CASCADE): deleting or truncating agents clears them.

This module holds the tables and what their readers and writers share; the saver's operations are
split by what they do: storing checkpoints and writes (langgraph_checkpoint_writes.py), reading them
back (langgraph_checkpoint_reads.py), and whole threads — delete, copy, prune
(langgraph_checkpoint_threads.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, LargeBinary, String, Table, Text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, mapped_column

from models.agents import quotas
from models.db import Model, db, utcnow

T = TypeVar("T")

# Channels one checkpoint may name in `channel_versions` (the API schema and put_checkpoint read it). Far
# above what a graph has (a channel per state key and per edge), and bounded so one document stays small.
MAX_CHECKPOINT_CHANNELS = 10_000
# Keys per statement when a read or copy names many rows: PostgreSQL takes at most 65,535 bound
# parameters in one statement and SQLite 32,766, so lists that grow with a checkpoint or a thread go in
# batches of this many.
BATCH = 500


def batches(items: Sequence[T], size: int = BATCH) -> Iterator[Sequence[T]]:
    """`items` in consecutive slices of at most `size`."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


class LangGraphCheckpoint(Model):
    __tablename__ = "langgraph_checkpoints"
    __table_args__ = (
        Index(
            "uq_langgraph_checkpoints_key",
            "agent_id",
            "thread_id",
            "checkpoint_ns",
            "checkpoint_id",
            unique=True,
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id", ondelete="CASCADE"), nullable=False)
    thread_id: Mapped[str] = mapped_column(String(255), nullable=False)
    checkpoint_ns: Mapped[str] = mapped_column(String(255), nullable=False, default="")
    checkpoint_id: Mapped[str] = mapped_column(String(128), nullable=False)
    parent_checkpoint_id: Mapped[str | None] = mapped_column(String(128))
    checkpoint: Mapped[Any] = mapped_column(JSON, nullable=False)
    metadata_: Mapped[Any] = mapped_column("metadata", JSON, nullable=False)
    size_bytes: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)


class LangGraphBlob(Model):
    __tablename__ = "langgraph_blobs"
    __table_args__ = (
        Index(
            "uq_langgraph_blobs_key",
            "agent_id",
            "thread_id",
            "checkpoint_ns",
            "channel",
            "version",
            unique=True,
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id", ondelete="CASCADE"), nullable=False)
    thread_id: Mapped[str] = mapped_column(String(255), nullable=False)
    checkpoint_ns: Mapped[str] = mapped_column(String(255), nullable=False, default="")
    channel: Mapped[str] = mapped_column(String(255), nullable=False)
    version: Mapped[str] = mapped_column(String(128), nullable=False)
    type: Mapped[str] = mapped_column(String(64), nullable=False)
    blob: Mapped[bytes | None] = mapped_column(LargeBinary)
    size_bytes: Mapped[int] = mapped_column(Integer, nullable=False, default=0)


class LangGraphWrite(Model):
    __tablename__ = "langgraph_writes"
    __table_args__ = (
        Index(
            "uq_langgraph_writes_key",
            "agent_id",
            "thread_id",
            "checkpoint_ns",
            "checkpoint_id",
            "task_id",
            "idx",
            unique=True,
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id", ondelete="CASCADE"), nullable=False)
    thread_id: Mapped[str] = mapped_column(String(255), nullable=False)
    checkpoint_ns: Mapped[str] = mapped_column(String(255), nullable=False, default="")
    checkpoint_id: Mapped[str] = mapped_column(String(128), nullable=False)
    task_id: Mapped[str] = mapped_column(String(255), nullable=False)
    task_path: Mapped[str] = mapped_column(Text, nullable=False, default="")
    idx: Mapped[int] = mapped_column(Integer, nullable=False)
    channel: Mapped[str] = mapped_column(String(255), nullable=False)
    type: Mapped[str] = mapped_column(String(64), nullable=False)
    blob: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    size_bytes: Mapped[int] = mapped_column(Integer, nullable=False, default=0)


# The per-agent checkpoint quota (models/agents/quotas.py) counts these tables' bytes with the supervisor's.
for _model in (LangGraphCheckpoint, LangGraphBlob, LangGraphWrite):
    quotas.register_checkpoint_table(_model)


@dataclass(frozen=True)
class Blob:
    """A serialised value: the serializer's type tag and its bytes (None for LangGraph's "empty")."""

    type: str
    data: bytes | None


def version_key(version: Any) -> str:
    """Channel versions are ints, floats or strings in LangGraph; blobs are keyed by their text."""
    return version if isinstance(version, str) else json.dumps(version)


def dialect_insert() -> Callable[[Table], postgresql.Insert | sqlite.Insert]:
    """The session's dialect's INSERT, which has ON CONFLICT. Public because storing checkpoints
    (langgraph_checkpoint_writes.py) and copying threads (langgraph_checkpoint_threads.py) both upsert."""
    return postgresql.insert if db.session.get_bind().dialect.name == "postgresql" else sqlite.insert
