"""LangGraph's put and put_writes on our tables (models/integrations/langgraph_checkpoints.py): a
checkpoint with the blobs of its new channel versions, and a task's pending writes, each stored in
one transaction and counted against the agent's checkpoint quota (models/agents/quotas.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import literal_column

from models.agents import quotas
from models.db import atomic, db, utcnow
from models.errors import ValidationFailed
from models.integrations.langgraph_checkpoints import (
    MAX_CHECKPOINT_CHANNELS,
    Blob,
    LangGraphBlob,
    LangGraphCheckpoint,
    LangGraphWrite,
    dialect_insert,
)

# LangGraph's special write channels keep fixed negative indexes (WRITES_IDX_MAP in
# langgraph.checkpoint.base): writing them again replaces, any other write is kept once.
SPECIAL_WRITE_CHANNELS = frozenset({"__error__", "__scheduled__", "__interrupt__", "__resume__"})


@dataclass(frozen=True)
class Write:
    """One of a task's pending writes: its index (LangGraph's; special channels' are negative)."""

    idx: int
    channel: str
    value: Blob


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
    if len(versions) > MAX_CHECKPOINT_CHANNELS:
        raise ValidationFailed(
            f"checkpoint.channel_versions names {len(versions):,} channels; the limit is "
            f"{MAX_CHECKPOINT_CHANNELS:,} (MAX_CHECKPOINT_CHANNELS)",
            field="checkpoint.channel_versions",
            rule="max_length",
        )
    insert = dialect_insert()
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
    stmt = dialect_insert()(table).values(
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
