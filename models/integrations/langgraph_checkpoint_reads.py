"""LangGraph's get_tuple and list on our tables (models/integrations/langgraph_checkpoints.py): stored
checkpoints with their channel values and pending writes attached, one or a page at a time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import or_, select, tuple_

from models.db import db
from models.integrations.langgraph_checkpoints import (
    Blob,
    LangGraphBlob,
    LangGraphCheckpoint,
    LangGraphWrite,
    batches,
    version_key,
)


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
        # Exact (channel, version) pairs, a batch per statement: a checkpoint may name thousands of
        # channels, and no statement's parameter count may grow with them.
        pairs = sorted({(w[2], w[3]) for w in wanted if w[0] == thread_id and w[1] == ns})
        for batch in batches(pairs):
            for b in db.session.scalars(
                select(LangGraphBlob).where(
                    LangGraphBlob.agent_id == agent_id,
                    LangGraphBlob.thread_id == thread_id,
                    LangGraphBlob.checkpoint_ns == ns,
                    tuple_(LangGraphBlob.channel, LangGraphBlob.version).in_(batch),
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
