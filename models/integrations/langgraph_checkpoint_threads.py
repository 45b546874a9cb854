"""LangGraph's whole-thread operations on our tables (models/integrations/langgraph_checkpoints.py):
delete_thread, copy_thread and prune, each in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from sqlalchemy import CursorResult, delete, func, select

from models.agents import quotas
from models.db import atomic, db, utcnow
from models.errors import ValidationFailed
from models.integrations.langgraph_checkpoints import (
    LangGraphBlob,
    LangGraphCheckpoint,
    LangGraphWrite,
    batches,
    dialect_insert,
    version_key,
)

PRUNE_STRATEGIES = ("keep_latest", "delete")


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
    insert = dialect_insert()
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
            for batch in batches(values):  # a thread's rows, a bounded number of parameters at a time
                db.session.execute(insert(model.__table__).values(list(batch)).on_conflict_do_nothing())
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
                for batch in batches(gone):
                    db.session.execute(
                        delete(LangGraphWrite).where(
                            LangGraphWrite.agent_id == scope[0],
                            LangGraphWrite.thread_id == scope[1],
                            LangGraphWrite.checkpoint_ns == scope[2],
                            LangGraphWrite.checkpoint_id.in_(batch),
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
