"""Rows to response models: the one place that decides what of a row goes on the wire."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from models import AgentMemory, db
from models.admins.mechanic import MechanicGrant
from models.changes.patch_tables import ProposedPatch
from models.changes.patches import signal_kinds
from models.history.changelog import ChangeLogEntry, produced_revision
from models.history.memory_history import HistoryEvent
from models.parsing import parse_utc

from .schemas import GrantOut, HistoryEventOut, MemoryOut, MemoryState, PatchOut

_STATE_TIMES = ("created_at", "updated_at", "deleted_at", "purge_at")


def memory_out(memory: AgentMemory) -> MemoryOut:
    return MemoryOut(
        id=memory.id,
        memory_type=memory.memory_type,
        content=memory.content,
        category=memory.category,
        tags=list(memory.tags or []),
        importance=memory.importance,
        pinned=memory.pinned,
        constitutional=memory.constitutional,
        user_id=memory.user_id,
        thread_id=memory.thread_id,
        run_id=memory.run_id,
        actor_id=memory.actor_id,
        role=memory.role,
        token_estimate=memory.token_estimate,
        created_at=memory.created_at,
        updated_at=memory.updated_at,
        last_accessed_at=memory.last_accessed_at,
    )


def _state(state: dict[str, Any] | None) -> MemoryState | None:
    if state is None:
        return None
    values = dict(state)
    for name in _STATE_TIMES:
        if values.get(name):
            values[name] = parse_utc(values[name], field=name)
    return MemoryState(**values)


def history_event_out(event: HistoryEvent) -> HistoryEventOut:
    return HistoryEventOut(
        id=event.id,
        event=event.event,
        action=event.action,
        actor=event.actor,
        session_id=event.session_id,
        ts=event.ts,
        old=_state(event.old),
        new=_state(event.new),
        meta=event.meta,
    )


def patch_out(patch: ProposedPatch) -> PatchOut:
    return PatchOut(
        id=patch.id,
        op=patch.op,
        field=patch.field,
        policy=patch.policy,
        signals=signal_kinds(patch.id),
        memory_id=patch.memory_id,
        status=patch.status,
        changes=patch.changes,
        created_at=patch.created_at,
        expires_at=patch.expires_at,
        decided_at=patch.decided_at,
        decided_by=patch.decided_by,
        result_memory_id=patch.result_memory_id,
    )


def grant_out(grant: MechanicGrant) -> GrantOut:
    return GrantOut(
        id=grant.id,
        purpose=grant.purpose,
        scope=grant.scope,
        memory_ids=list(grant.memory_ids or []),
        duration_minutes=grant.duration_minutes,
        status=grant.current_status(),
        requested_at=grant.requested_at,
        decided_at=grant.decided_at,
        decided_by=grant.decided_by,
        expires_at=grant.expires_at,
        revoked_at=grant.revoked_at,
        seconds_left=grant.seconds_left(),
    )


def memory_rev(agent_id: int, memory: AgentMemory) -> int | None:
    """The thread revision this request's write of the memory produced (null for a memory without a
    thread); the memory's latest one if this request wrote none."""
    if not memory.thread_id:
        return None
    produced = produced_revision(agent_id, memory.thread_id, memory.id)
    if produced is not None:
        return produced
    return db.session.scalar(
        select(func.max(ChangeLogEntry.rev)).where(
            ChangeLogEntry.agent_id == agent_id,
            ChangeLogEntry.thread_id == memory.thread_id,
            ChangeLogEntry.memory_id == memory.id,
        )
    )
