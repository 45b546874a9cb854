"""The Time Machine: exact rollback of one operation, a refinement session, or an agent to a point in time.

A rollback reads the audit log, never the current rows' text: for every memory the chosen records
touched, the state to restore is the `before` snapshot of the earliest of those records (no
snapshot means the memory did not exist yet, so it is soft-deleted). Every restored row gets
every column back (content, flags, timestamps, deleted_at). The rollback writes its own audit
records under a fresh op_id, so it can itself be rolled back.

Rolling back an operation or a session refuses when a later change touched the same memory
(`RollbackConflict`): restoring over it would silently lose that later change. Rolling an agent
back to a point in time covers every later change by construction. The circuit breaker's session
rollback may not refuse (`leave_conflicts`): it undoes every operation that can be undone exactly
and leaves in place, and names, each operation a later change depends on.

Rows are locked, read, written and snapshotted through `rows.py`, as the mutation path's are.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select

from models.changes.records import record_changes
from models.changes.rows import (
    Row,
    file_texts,
    lock_agent,
    lock_rows,
    read_rows,
    snapshot_row,
    write_each,
    write_rows,
)
from models.changes.rules import check_actor
from models.db import atomic, db, guard_privilege, utcnow
from models.errors import NotFound, RollbackConflict, ValidationFailed
from models.history.audit import (
    AuditContent,
    AuditLog,
    new_op_id,
    restore_fields,
    snapshot_values,
    text_sha,
)
from models.history.session import RefinementSession
from models.parsing import to_utc


@dataclass
class MemoryChange:
    """What a rollback will do to one memory: metadata only, safe to show anyone."""

    memory_id: int
    action: str  # restore | remove | unrecoverable
    tokens_now: int
    tokens_after: int
    active_now: bool
    active_after: bool


@dataclass
class RollbackPlan:
    agent_id: int
    scope: dict[str, Any]
    record_ids: list[int]
    targets: OrderedDict[int, dict | None]
    changes: list[MemoryChange] = field(default_factory=list)
    rows: dict[int, Row] = field(default_factory=dict)  # the memories as read (locked when applying)
    left: dict[str, list] = field(default_factory=dict)  # op_ids / memory_ids left in place (leave_conflicts)

    @property
    def summary(self) -> dict[str, Any]:
        """Counts and token deltas for a confirm step (no content)."""

        def core_tokens(change: MemoryChange, after: bool) -> int:
            return change.tokens_after if after else change.tokens_now

        return {
            "records": len(self.record_ids),
            "memories": len(self.changes),
            "restored": sum(c.action == "restore" for c in self.changes),
            "removed": sum(c.action == "remove" for c in self.changes),
            "unrecoverable": [c.memory_id for c in self.changes if c.action == "unrecoverable"],
            "active_delta": sum(int(c.active_after) - int(c.active_now) for c in self.changes),
            "core_token_delta": sum(core_tokens(c, True) - core_tokens(c, False) for c in self.changes),
            **({"left_in_place": self.left} if self.left else {}),
        }


@dataclass
class RollbackResult:
    op_id: str | None
    agent_id: int
    scope: dict[str, Any]
    summary: dict[str, Any]
    tokens_before: int
    tokens_after: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "op_id": self.op_id,
            "agent_id": self.agent_id,
            **self.scope,
            **self.summary,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
        }


def _core_tokens(active: bool, memory_type: str | None, tokens: int | None) -> int:
    return int(tokens or 0) if active and memory_type == "core" else 0


def _changed_memory(record: AuditLog) -> int | None:
    """The memory a record changed. Only records with a snapshot describe a row change; metadata-only
    records (None) never drive a rollback."""
    return record.memory_id if record.before is not None or record.after is not None else None


def _plan(
    agent_id: int,
    records: list[AuditLog],
    scope: dict[str, Any],
    check_conflicts: bool,
    lock: bool = False,
    leave_conflicts: bool = False,
) -> RollbackPlan:
    changed = sorted(
        (
            (r, memory_id)
            for r in records
            if (memory_id := _changed_memory(r)) is not None and r.agent_id == agent_id
        ),
        key=lambda pair: pair[0].id,
    )
    touched = list(dict.fromkeys(memory_id for _, memory_id in changed))
    plan = RollbackPlan(agent_id=agent_id, scope=scope, record_ids=[], targets=OrderedDict())
    if not touched:
        return plan
    # Applying: lock the rows first (the agent's row, then the memories': rows.py), so no change can slip
    # in between the conflict check and the restore. Every lookup by memory id is also by agent: an id
    # names one memory of one agent, and this rollback may only ever touch the agent whose records it
    # replays.
    plan.rows = lock_rows(agent_id, touched) if lock else read_rows(agent_id, touched)
    if check_conflicts:
        later = _later_records(agent_id, touched, {r.id for r, _ in changed})
        if leave_conflicts:
            changed, plan.left = _undoable(changed, later)
        elif later:
            ids = sorted({memory_id for _, memory_id in later})
            raise RollbackConflict(
                "later changes touched the same memories ("
                + ", ".join(f"#{i}" for i in ids)
                + "); roll those back first, or roll the agent back to a point in time",
                memory_ids=ids,
            )
    plan.record_ids = [r.id for r, _ in changed]
    for record, memory_id in changed:
        plan.targets.setdefault(memory_id, record.before)  # earliest record wins: the state before it
    for memory_id, target in plan.targets.items():
        row = plan.rows.get(memory_id)
        if row is None:  # purged: its text is gone for good, and the purge said so in the log
            plan.changes.append(MemoryChange(memory_id, "unrecoverable", 0, 0, False, False))
            continue
        now_active = row["deleted_at"] is None
        now_tokens = _core_tokens(now_active, row["memory_type"], row["token_estimate"])
        if target is None:
            plan.changes.append(MemoryChange(memory_id, "remove", now_tokens, 0, now_active, False))
        else:
            after_active = target.get("deleted_at") is None
            after_tokens = _core_tokens(after_active, target.get("memory_type"), target.get("token_estimate"))
            plan.changes.append(
                MemoryChange(memory_id, "restore", now_tokens, after_tokens, now_active, after_active)
            )
    return plan


def _later_records(agent_id: int, memory_ids: list[int], ids: set[int]) -> list[tuple[int, int]]:
    """(record id, memory id) of every change to these memories after the first of `ids` that is not
    one of them: what a rollback of `ids` would overwrite."""
    rows = db.session.execute(
        select(AuditLog.id, AuditLog.memory_id, AuditLog.before, AuditLog.after)
        .where(AuditLog.memory_id.in_(memory_ids), AuditLog.agent_id == agent_id)
        .where(AuditLog.id > min(ids), AuditLog.id.not_in(ids))
    ).all()
    # JSON null and SQL NULL both mean "no snapshot": such a record changed no row.
    return [
        (r.id, r.memory_id) for r in rows if r.memory_id is not None and (r.before or r.after) is not None
    ]


def _undoable(
    changed: list[tuple[AuditLog, int]], later: list[tuple[int, int]]
) -> tuple[list[tuple[AuditLog, int]], dict[str, list]]:
    """The records of the operations that can be undone exactly, and what is left in place.

    An operation is left when a change to one of its memories came after it and is not undone with it
    (another actor's, or one of this session's that is itself left): restoring its before-state would
    overwrite that change. Leaving one may leave earlier ones, so this repeats until nothing changes."""
    on_memory: dict[int, list[int]] = {}
    for record_id, memory_id in [*((r.id, m) for r, m in changed), *later]:
        on_memory.setdefault(memory_id, []).append(record_id)
    undone = {r.op_id for r, _ in changed}
    while True:
        kept = {r.id for r, _ in changed if r.op_id in undone}
        blocked = {
            r.op_id
            for r, m in changed
            if r.op_id in undone and any(i > r.id and i not in kept for i in on_memory[m])
        }
        if not blocked:
            break
        undone -= blocked
    left = [(r, m) for r, m in changed if r.op_id not in undone]
    return [(r, m) for r, m in changed if r.op_id in undone], (
        {
            "op_ids": list(dict.fromkeys(r.op_id for r, _ in left)),
            "memory_ids": sorted({m for _, m in left}),
        }
        if left
        else {}
    )


def _apply(plan: RollbackPlan, actor: str) -> RollbackResult:
    """Apply a plan (see `_restore`) with the database guard open: a rollback writes back exactly what
    the audit log recorded, constitutional rows included (migration 0008)."""
    with guard_privilege("timemachine"):
        return _restore(plan, actor)


def _restore(plan: RollbackPlan, actor: str) -> RollbackResult:
    """Apply a plan whose rows `_plan` has locked. Set-based: the target texts are read once for all
    memories, the rows written in a few statements (one for every row soft-deleted, one executemany for
    every row restored), new text references and the audit records in multi-row INSERTs; so a rollback
    costs a handful of round trips whatever it touches."""
    agent_id = plan.agent_id
    tokens_before = _agent_core_tokens(agent_id)
    wanted = {t["content_ref"] for m, t in plan.targets.items() if m in plan.rows and t is not None}
    # The target texts, into the identity map (held here: it keeps objects only weakly), so
    # restore_fields reads none of them again.
    texts = (
        db.session.scalars(select(AuditContent).where(AuditContent.id.in_(wanted))).all() if wanted else []
    )
    unlock: list[Row] = []  # constitutional rows to unlock first: the database refuses to delete them
    removed: list[Row] = []  # soft-deleted: the row did not exist at the restore point
    restored: list[tuple[Row, dict[str, Any]]] = []
    befores: dict[int, tuple[dict, str]] = {}  # memory id -> (its before-snapshot, its text's sha256)
    for change in plan.changes:
        if change.action == "unrecoverable":
            continue
        row, target = plan.rows[change.memory_id], plan.targets[change.memory_id]
        if target is None:
            if row["deleted_at"] is not None:
                continue  # already in the target state: nothing changes, nothing to record
            removed.append(row)
            going = True
        else:
            values = restore_fields(target)
            if values["content"] is None:  # text redacted by a purge: nothing exact to restore
                change.action = "unrecoverable"
                continue
            restored.append((row, values))
            going = row["deleted_at"] is None and values["deleted_at"] is not None
        if row["constitutional"] and going:
            unlock.append(row)
        # The text changed outside the mutation path, or was never filed: snapshot_row files it now.
        befores[row["id"]] = snapshot_row(row), text_sha(row["content"])
    del texts
    now = utcnow()
    write_rows(unlock, {"constitutional": False})
    write_rows(removed, {"deleted_at": now, "updated_at": now})
    write_each(restored)
    pending = []  # (row, before, after without its content_ref when the text changed)
    for row in [*removed, *(r for r, _ in restored)]:
        before, sha = befores[row["id"]]
        same_text = text_sha(row["content"]) == sha
        after = snapshot_values(row, before["content_ref"] if same_text else 0)
        if same_text and after == before:  # already in the target state: nothing to record
            continue
        pending.append((row, before, after if same_text else {**after, "content_ref": None}))
    refiled = [row for row, _, after in pending if after["content_ref"] is None]
    new_refs = dict(zip((r["id"] for r in refiled), file_texts(refiled), strict=True))
    op_id = new_op_id()
    records = []
    for row, before, after in pending:
        if after["content_ref"] is None:
            after["content_ref"] = new_refs[row["id"]]
        records.append(
            {
                "op_id": op_id, "actor": actor, "action": "rollback", "agent_id": agent_id, "memory_id": row["id"],
                "before": before, "after": after, "data": {"rollback_of": plan.scope},
            }
        )  # fmt: skip
    record_changes(records)
    return RollbackResult(
        op_id=op_id if records else None,  # only if a record carries it: otherwise nothing to roll back
        agent_id=agent_id,
        scope=plan.scope,
        summary=plan.summary,
        tokens_before=tokens_before,
        tokens_after=_agent_core_tokens(agent_id),
    )


def _agent_core_tokens(agent_id: int) -> int:
    from models.agents.agent import core_totals

    return core_totals(agent_id)[0]


# ----- selecting what to roll back -----


def _op_records(op_id: str) -> tuple[int, list[AuditLog], dict]:
    if not isinstance(op_id, str) or not op_id:
        raise ValidationFailed("an operation id is required")
    records = db.session.scalars(select(AuditLog).where(AuditLog.op_id == op_id).order_by(AuditLog.id)).all()
    if not records:
        raise NotFound(f"operation {op_id} not found")
    agent_id = records[0].agent_id
    if agent_id is None or not any(_changed_memory(r) is not None for r in records):
        raise ValidationFailed(f"operation {op_id} changed no memory; there is nothing to roll back")
    return agent_id, list(records), {"rollback_of": "operation", "target_op_id": op_id}


def _session_records(session_id: int, lock: bool = False) -> tuple[int, list[AuditLog], dict]:
    session = db.session.get(RefinementSession, session_id) if isinstance(session_id, int) else None
    if session is None:
        raise NotFound(f"refinement session {session_id} not found")
    if lock:  # the agent's writers wait from here on (rows.py): no record of the session can be added
        lock_agent(session.agent_id)
    records = db.session.scalars(
        select(AuditLog)
        .where(AuditLog.session_id == session_id, AuditLog.memory_id.is_not(None))
        .order_by(AuditLog.id)
    ).all()
    return session.agent_id, list(records), {"rollback_of": "session", "session_id": session_id}


def _point_in_time_records(
    agent_id: int, to: datetime, lock: bool = False
) -> tuple[int, list[AuditLog], dict]:
    if not isinstance(to, datetime):
        raise ValidationFailed("a point in time is required")
    to = to_utc(to)
    if lock:  # the agent's writers wait from here on (rows.py): every later change is in the records read
        lock_agent(agent_id)
    records = db.session.scalars(
        select(AuditLog)
        .where(AuditLog.agent_id == agent_id, AuditLog.created_at > to, AuditLog.memory_id.is_not(None))
        .order_by(AuditLog.id)
    ).all()
    return agent_id, list(records), {"rollback_of": "point_in_time", "to": to.isoformat()}


def plan_operation_rollback(op_id: str) -> RollbackPlan:
    agent_id, records, scope = _op_records(op_id)
    return _plan(agent_id, records, scope, check_conflicts=True)


def plan_session_rollback(session_id: int) -> RollbackPlan:
    agent_id, records, scope = _session_records(session_id)
    return _plan(agent_id, records, scope, check_conflicts=True)


def plan_agent_rollback(agent_id: int, to: datetime) -> RollbackPlan:
    agent_id, records, scope = _point_in_time_records(agent_id, to)
    return _plan(agent_id, records, scope, check_conflicts=False)


def rollback_operation(op_id: str, *, actor: str) -> RollbackResult:
    """Undo one call of the mutation path (all its records), e.g. one consolidation or one rollback."""
    check_actor(actor)
    with atomic():
        agent_id, records, scope = _op_records(op_id)
        return _apply(_plan(agent_id, records, scope, check_conflicts=True, lock=True), actor)


def rollback_audit_record(audit_id: int, *, actor: str) -> RollbackResult:
    """Undo the operation an audit record belongs to."""
    record = db.session.get(AuditLog, audit_id) if isinstance(audit_id, int) else None
    if record is None:
        raise NotFound(f"audit record {audit_id} not found")
    return rollback_operation(record.op_id, actor=actor)


def rollback_session(session_id: int, *, actor: str, leave_conflicts: bool = False) -> RollbackResult:
    """Undo every memory change a refinement session made, in one transaction.

    A later change to one of its memories refuses the whole rollback (`RollbackConflict`), unless
    `leave_conflicts` (the circuit breaker, which must not fail): then every operation that can be undone
    exactly is, and the ones a later change depends on are left in place and named in the result's
    `left_in_place` (op_ids, memory_ids)."""
    check_actor(actor)
    with atomic():
        agent_id, records, scope = _session_records(session_id, lock=True)
        plan = _plan(
            agent_id, records, scope, check_conflicts=True, lock=True, leave_conflicts=leave_conflicts
        )
        return _apply(plan, actor)


def rollback_agent(agent_id: int, to: datetime, *, actor: str) -> RollbackResult:
    """Put every memory of the agent back as it was at `to` (UTC)."""
    check_actor(actor)
    with atomic():
        agent_id, records, scope = _point_in_time_records(agent_id, to, lock=True)
        return _apply(_plan(agent_id, records, scope, check_conflicts=False, lock=True), actor)
