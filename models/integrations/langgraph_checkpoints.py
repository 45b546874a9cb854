"""LangGraph checkpoints per agent: LangGraph's own data model (docs/integrations.md).

The same three tables as LangGraph's PostgreSQL saver, each scoped by agent: checkpoints (id,
parent id, namespace, the checkpoint document without its channel values, metadata), channel
blobs (one per channel and version, written once and shared by every checkpoint that carries that
version) and pending writes (per task and index). Values stay opaque: the client serialises them
with its saver's `serde` and the server stores the (type, bytes) pairs it is given.

Rows belong to an agent (ON DELETE CASCADE): deleting or truncating agents clears them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    JSON,
    CursorResult,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    delete,
    func,
    literal_column,
    or_,
    select,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, mapped_column

from models.agents import quotas
from models.db import Model, atomic, db, utcnow
from models.errors import ValidationFailed

# LangGraph's special write channels keep fixed negative indexes (WRITES_IDX_MAP in
# langgraph.checkpoint.base): writing them again replaces, any other write is kept once.
SPECIAL_WRITE_CHANNELS = frozenset({"__error__", "__scheduled__", "__interrupt__", "__resume__"})
PRUNE_STRATEGIES = ("keep_latest", "delete")


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


@dataclass(frozen=True)
class Write:
    idx: int
    channel: str
    value: Blob


@dataclass
class CheckpointRecord:
    """A stored checkpoint with what LangGraph's `CheckpointTuple` needs besides deserialisation."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    channel_values: dict[str, Blob]
    pending_writes: list[tuple[str, str, Blob]]  # (task_id, channel, value) in writes_sort_key order
    row_id: int


def version_key(version: Any) -> str:
    """Channel versions are ints, floats or strings in LangGraph; blobs are keyed by their text."""
    return version if isinstance(version, str) else json.dumps(version)


def _insert():
    return postgresql.insert if db.session.get_bind().dialect.name == "postgresql" else sqlite.insert


def document_size(checkpoint: Mapping[str, Any], metadata: Mapping[str, Any]) -> int:
    """Bytes of a checkpoint's JSON documents (its blobs are counted on their own rows)."""
    documents = json.dumps(checkpoint, separators=(",", ":")) + json.dumps(metadata, separators=(",", ":"))
    return len(documents.encode("utf-8"))


def put_checkpoint(
    agent_id: int,
    *,
    thread_id: str,
    checkpoint_ns: str,
    checkpoint: dict[str, Any],
    parent_checkpoint_id: str | None,
    metadata: dict[str, Any],
    blobs: Mapping[tuple[str, str], Blob],
) -> None:
    """Store a checkpoint and the blobs of its new channel versions, together or not at all.

    A blob already stored for that (channel, version) is kept (versions identify values); a checkpoint
    stored again under the same id replaces its document and metadata, as LangGraph's savers do."""
    checkpoint_id = checkpoint.get("id")
    if not isinstance(checkpoint_id, str) or not checkpoint_id:
        raise ValidationFailed("checkpoint.id must be a non-empty string", field="checkpoint.id")
    versions = checkpoint.get("channel_versions")
    if not isinstance(versions, dict):
        raise ValidationFailed(
            "checkpoint.channel_versions must be an object", field="checkpoint.channel_versions"
        )
    insert = _insert()
    blob_table = LangGraphBlob.__table__
    cp_table = LangGraphCheckpoint.__table__
    size = document_size(checkpoint, metadata)
    key = (
        (cp_table.c.agent_id == agent_id)
        & (cp_table.c.thread_id == thread_id)
        & (cp_table.c.checkpoint_ns == checkpoint_ns)
        & (cp_table.c.checkpoint_id == checkpoint_id)
    )
    with atomic():
        # A blob re-sent at a version already stored is counted again here: a quota bounds storage.
        adding = size + sum(len(b.data or b"") for b in blobs.values())
        quotas.check_checkpoint_bytes(agent_id, adding, replacing={LangGraphCheckpoint: key})
        if blobs:
            rows = [
                {
                    "agent_id": agent_id,
                    "thread_id": thread_id,
                    "checkpoint_ns": checkpoint_ns,
                    "channel": channel,
                    "version": version,
                    "type": blob.type,
                    "blob": blob.data,
                    "size_bytes": len(blob.data or b""),
                }
                for (channel, version), blob in blobs.items()
            ]
            db.session.execute(insert(blob_table).values(rows).on_conflict_do_nothing())
        stmt = insert(cp_table).values(
            agent_id=agent_id,
            thread_id=thread_id,
            checkpoint_ns=checkpoint_ns,
            checkpoint_id=checkpoint_id,
            parent_checkpoint_id=parent_checkpoint_id,
            checkpoint=checkpoint,
            metadata=metadata,
            size_bytes=size,
            created_at=utcnow(),
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=[
                cp_table.c.agent_id,
                cp_table.c.thread_id,
                cp_table.c.checkpoint_ns,
                cp_table.c.checkpoint_id,
            ],
            # Spelled out, as in models/integrations/checkpoint.py: `stmt.excluded` costs milliseconds per call.
            set_={
                "checkpoint": literal_column("excluded.checkpoint"),
                "metadata": literal_column("excluded.metadata"),
                "size_bytes": size,
            },
        )
        db.session.execute(stmt)


def put_writes(
    agent_id: int,
    *,
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str,
    task_id: str,
    task_path: str,
    writes: Sequence[Write],
) -> int:
    """Store a task's pending writes for a checkpoint. Writing the same (task, index) again keeps the
    first value, except when every write is to a special channel (errors, interrupts, resumes), which
    replace: LangGraph's PostgreSQL saver does exactly this."""
    if not writes:
        return 0
    table = LangGraphWrite.__table__
    stmt = _insert()(table).values(
        [
            {
                "agent_id": agent_id,
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint_id,
                "task_id": task_id,
                "task_path": task_path,
                "idx": w.idx,
                "channel": w.channel,
                "type": w.value.type,
                "blob": w.value.data or b"",
                "size_bytes": len(w.value.data or b""),
            }
            for w in writes
        ]
    )
    keys = [
        table.c.agent_id,
        table.c.thread_id,
        table.c.checkpoint_ns,
        table.c.checkpoint_id,
        table.c.task_id,
        table.c.idx,
    ]
    if all(w.channel in SPECIAL_WRITE_CHANNELS for w in writes):
        stmt = stmt.on_conflict_do_update(
            index_elements=keys,
            set_={
                "channel": literal_column("excluded.channel"),
                "type": literal_column("excluded.type"),
                "blob": literal_column("excluded.blob"),
            },
        )
    else:
        stmt = stmt.on_conflict_do_nothing(index_elements=keys)
    with atomic():
        quotas.check_checkpoint_bytes(agent_id, sum(len(w.value.data or b"") for w in writes))
        db.session.execute(stmt)
    return len(writes)


def _contains(document: Any, wanted: Any) -> bool:
    """JSON containment, as PostgreSQL's `@>` reads it: LangGraph's metadata filter semantics."""
    if isinstance(wanted, dict):
        return isinstance(document, dict) and all(
            k in document and _contains(document[k], v) for k, v in wanted.items()
        )
    if isinstance(wanted, list):
        return isinstance(document, list) and all(any(_contains(d, w) for d in document) for w in wanted)
    if isinstance(wanted, bool) or isinstance(document, bool):
        return type(document) is type(wanted) and document == wanted
    if isinstance(wanted, int | float):
        return isinstance(document, int | float) and document == wanted
    return type(document) is type(wanted) and document == wanted


def _records(agent_id: int, rows: Sequence[LangGraphCheckpoint]) -> list[CheckpointRecord]:
    """Attach each checkpoint's channel blobs (by its channel versions) and its pending writes."""
    if not rows:
        return []
    threads = {(r.thread_id, r.checkpoint_ns) for r in rows}
    wanted = {
        (r.thread_id, r.checkpoint_ns, ch, version_key(v))
        for r in rows
        for ch, v in (r.checkpoint.get("channel_versions") or {}).items()
    }
    blobs: dict[tuple[str, str, str, str], Blob] = {}
    writes: dict[tuple[str, str, str], list[LangGraphWrite]] = {}
    for thread_id, ns in threads:
        channels = {w[2] for w in wanted if w[0] == thread_id and w[1] == ns}
        if channels:
            for b in db.session.scalars(
                select(LangGraphBlob).where(
                    LangGraphBlob.agent_id == agent_id,
                    LangGraphBlob.thread_id == thread_id,
                    LangGraphBlob.checkpoint_ns == ns,
                    LangGraphBlob.channel.in_(sorted(channels)),
                    LangGraphBlob.version.in_(
                        sorted({w[3] for w in wanted if w[0] == thread_id and w[1] == ns})
                    ),
                )
            ):
                blobs[(b.thread_id, b.checkpoint_ns, b.channel, b.version)] = Blob(b.type, b.blob)
        ids = sorted({r.checkpoint_id for r in rows if r.thread_id == thread_id and r.checkpoint_ns == ns})
        for w in db.session.scalars(
            select(LangGraphWrite).where(
                LangGraphWrite.agent_id == agent_id,
                LangGraphWrite.thread_id == thread_id,
                LangGraphWrite.checkpoint_ns == ns,
                LangGraphWrite.checkpoint_id.in_(ids),
            )
        ):
            writes.setdefault((w.thread_id, w.checkpoint_ns, w.checkpoint_id), []).append(w)
    records = []
    for r in rows:
        values = {}
        for ch, v in (r.checkpoint.get("channel_versions") or {}).items():
            blob = blobs.get((r.thread_id, r.checkpoint_ns, ch, version_key(v)))
            if blob is not None and blob.type != "empty":
                values[ch] = blob
        pending = sorted(
            writes.get((r.thread_id, r.checkpoint_ns, r.checkpoint_id), []),
            key=lambda w: (w.task_path, w.task_id, w.idx),  # LangGraph's writes_sort_key
        )
        records.append(
            CheckpointRecord(
                thread_id=r.thread_id,
                checkpoint_ns=r.checkpoint_ns,
                checkpoint_id=r.checkpoint_id,
                parent_checkpoint_id=r.parent_checkpoint_id,
                checkpoint=r.checkpoint,
                metadata=r.metadata_,
                channel_values=values,
                pending_writes=[(w.task_id, w.channel, Blob(w.type, w.blob)) for w in pending],
                row_id=r.id,
            )
        )
    return records


def get_checkpoint(
    agent_id: int, thread_id: str, checkpoint_ns: str, checkpoint_id: str | None
) -> CheckpointRecord | None:
    """That checkpoint, or the thread's latest in that namespace (largest id: LangGraph's ids sort by time)."""
    stmt = select(LangGraphCheckpoint).where(
        LangGraphCheckpoint.agent_id == agent_id,
        LangGraphCheckpoint.thread_id == thread_id,
        LangGraphCheckpoint.checkpoint_ns == checkpoint_ns,
    )
    if checkpoint_id:
        stmt = stmt.where(LangGraphCheckpoint.checkpoint_id == checkpoint_id)
    else:
        stmt = stmt.order_by(LangGraphCheckpoint.checkpoint_id.desc()).limit(1)
    row = db.session.scalar(stmt)
    return _records(agent_id, [row])[0] if row else None


def list_checkpoints(
    agent_id: int,
    *,
    thread_id: str | None = None,
    checkpoint_ns: str | None = None,
    checkpoint_id: str | None = None,
    metadata_filter: Mapping[str, Any] | None = None,
    before: str | None = None,
    limit: int = 50,
    after_row: tuple[str, int] | None = None,
) -> tuple[list[CheckpointRecord], tuple[str, int] | None]:
    """Newest first (checkpoint id descending), at most `limit`; returns the page and the cursor of the
    next one (None when this is the last). `before` keeps ids below it; the metadata filter is JSON
    containment, checked on the metadata only (the documents are loaded for the page's matches)."""
    order = (LangGraphCheckpoint.checkpoint_id.desc(), LangGraphCheckpoint.id.desc())
    stmt = select(
        LangGraphCheckpoint.id, LangGraphCheckpoint.checkpoint_id, LangGraphCheckpoint.metadata_
    ).where(LangGraphCheckpoint.agent_id == agent_id)
    if thread_id is not None:
        stmt = stmt.where(LangGraphCheckpoint.thread_id == thread_id)
    if checkpoint_ns is not None:
        stmt = stmt.where(LangGraphCheckpoint.checkpoint_ns == checkpoint_ns)
    if checkpoint_id:
        stmt = stmt.where(LangGraphCheckpoint.checkpoint_id == checkpoint_id)
    if before:
        stmt = stmt.where(LangGraphCheckpoint.checkpoint_id < before)
    if after_row is not None:
        cid, row_id = after_row
        stmt = stmt.where(
            or_(
                LangGraphCheckpoint.checkpoint_id < cid,
                (LangGraphCheckpoint.checkpoint_id == cid) & (LangGraphCheckpoint.id < row_id),
            )
        )
    stmt = stmt.order_by(*order)
    if not metadata_filter:
        stmt = stmt.limit(limit + 1)  # one more than the page says whether another follows
    picked: list[tuple[int, str]] = []
    more = False
    for row_id, cid, metadata in db.session.execute(stmt):
        if metadata_filter and not _contains(metadata, dict(metadata_filter)):
            continue
        if len(picked) == limit:
            more = True
            break
        picked.append((row_id, cid))
    rows = {
        r.id: r
        for r in db.session.scalars(
            select(LangGraphCheckpoint).where(LangGraphCheckpoint.id.in_([p[0] for p in picked]))
        )
    }
    records = _records(agent_id, [rows[p[0]] for p in picked])
    cursor = (picked[-1][1], picked[-1][0]) if more and picked else None
    return records, cursor


def delete_thread(agent_id: int, thread_id: str) -> int:
    """Every checkpoint, blob and write of the thread, in every namespace; the checkpoints removed."""
    with atomic():
        removed = 0
        for model in (LangGraphWrite, LangGraphBlob, LangGraphCheckpoint):
            result = db.session.execute(
                delete(model).where(model.agent_id == agent_id, model.thread_id == thread_id)
            )
            removed = cast(CursorResult, result).rowcount  # the checkpoints, deleted last
    return removed


def copy_thread(agent_id: int, source_thread_id: str, target_thread_id: str) -> int:
    """Copy every checkpoint, blob and write of one thread into another (the whole parent chain, so
    nothing the target needs is left behind); rows the target already has are kept. Returns the
    checkpoints copied."""
    insert = _insert()
    copied = 0
    with atomic():
        source_bytes = sum(
            db.session.scalar(
                select(func.coalesce(func.sum(model.size_bytes), 0)).where(
                    model.agent_id == agent_id, model.thread_id == source_thread_id
                )
            )
            for model in (LangGraphCheckpoint, LangGraphBlob, LangGraphWrite)
        )
        quotas.check_checkpoint_bytes(agent_id, int(source_bytes))
        for model, keys in (
            (LangGraphBlob, ("checkpoint_ns", "channel", "version", "type", "blob", "size_bytes")),
            (
                LangGraphWrite,
                (
                    "checkpoint_ns",
                    "checkpoint_id",
                    "task_id",
                    "task_path",
                    "idx",
                    "channel",
                    "type",
                    "blob",
                    "size_bytes",
                ),
            ),
            (
                LangGraphCheckpoint,
                (
                    "checkpoint_ns",
                    "checkpoint_id",
                    "parent_checkpoint_id",
                    "checkpoint",
                    "metadata_",
                    "size_bytes",
                ),
            ),
        ):
            rows = db.session.scalars(
                select(model).where(model.agent_id == agent_id, model.thread_id == source_thread_id)
            ).all()
            if not rows:
                continue
            values = []
            for r in rows:
                item = {k: getattr(r, k) for k in keys}
                if "metadata_" in item:
                    item["metadata"] = item.pop("metadata_")
                    item["created_at"] = utcnow()
                values.append({"agent_id": agent_id, "thread_id": target_thread_id, **item})
            db.session.execute(insert(model.__table__).values(values).on_conflict_do_nothing())
            if model is LangGraphCheckpoint:
                copied = len(values)
    return copied


def prune(agent_id: int, thread_ids: Sequence[str], strategy: str = "keep_latest") -> int:
    """`delete`: the threads go entirely. `keep_latest`: per thread and namespace only the latest
    checkpoint stays, without a parent link, with its own pending writes and the blobs it refers to.
    Returns the checkpoints removed."""
    if strategy not in PRUNE_STRATEGIES:
        raise ValidationFailed(f"strategy must be one of {', '.join(PRUNE_STRATEGIES)}", field="strategy")
    removed = 0
    with atomic():
        for thread_id in dict.fromkeys(thread_ids):
            if strategy == "delete":
                removed += delete_thread(agent_id, thread_id)
                continue
            rows = db.session.scalars(
                select(LangGraphCheckpoint)
                .where(LangGraphCheckpoint.agent_id == agent_id, LangGraphCheckpoint.thread_id == thread_id)
                .order_by(LangGraphCheckpoint.checkpoint_ns, LangGraphCheckpoint.checkpoint_id.desc())
            ).all()
            latest: dict[str, LangGraphCheckpoint] = {}
            for r in rows:
                latest.setdefault(r.checkpoint_ns, r)
            for ns, keep in latest.items():
                gone = [r.checkpoint_id for r in rows if r.checkpoint_ns == ns and r.id != keep.id]
                if not gone:
                    continue
                scope = (agent_id, thread_id, ns)
                db.session.execute(
                    delete(LangGraphWrite).where(
                        LangGraphWrite.agent_id == scope[0],
                        LangGraphWrite.thread_id == scope[1],
                        LangGraphWrite.checkpoint_ns == scope[2],
                        LangGraphWrite.checkpoint_id.in_(gone),
                    )
                )
                db.session.execute(
                    delete(LangGraphCheckpoint).where(
                        LangGraphCheckpoint.agent_id == scope[0],
                        LangGraphCheckpoint.thread_id == scope[1],
                        LangGraphCheckpoint.checkpoint_ns == scope[2],
                        LangGraphCheckpoint.id != keep.id,
                    )
                )
                keep.parent_checkpoint_id = None
                referenced = {
                    (ch, version_key(v)) for ch, v in (keep.checkpoint.get("channel_versions") or {}).items()
                }
                for b in db.session.scalars(
                    select(LangGraphBlob).where(
                        LangGraphBlob.agent_id == scope[0],
                        LangGraphBlob.thread_id == scope[1],
                        LangGraphBlob.checkpoint_ns == scope[2],
                    )
                ):
                    if (b.channel, b.version) not in referenced:
                        db.session.delete(b)
                removed += len(gone)
        db.session.flush()
    return removed
