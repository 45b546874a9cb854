"""The audit log as the console reads it: operations (the records sharing an op_id), per agent,
session or memory (the timeline) or across every agent (the activity feed), with which later
rollback undid each. Snapshots are read for their figures, never their text
(docs/explanation/architecture.md, "Privacy: who may read memory text")."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, func, select

from models.db import db
from models.history.audit import AuditLog
from models.history.session import RefinementSession


@dataclass
class TimelineOp:
    """One call of the mutation path (or one event): all the audit records sharing an op_id."""

    op_id: str
    records: list[AuditLog]

    @property
    def first(self) -> AuditLog:
        return self.records[0]

    @property
    def created_at(self) -> datetime:
        return self.first.created_at

    @property
    def last_created_at(self) -> datetime:
        return max(r.created_at for r in self.records)

    @property
    def actor(self) -> str:
        return self.first.actor

    @property
    def session_id(self) -> int | None:
        return next((r.session_id for r in self.records if r.session_id is not None), None)

    @property
    def actions(self) -> list[tuple[str, int]]:
        counts: dict[str, int] = {}
        for record in self.records:
            counts[record.action] = counts.get(record.action, 0) + 1
        return list(counts.items())

    @property
    def memory_ids(self) -> list[int]:
        return sorted({r.memory_id for r in self.records if r.memory_id is not None})

    @property
    def token_delta(self) -> int:
        return sum(r.token_delta for r in self.records if r.memory_id is not None)

    @property
    def active_delta(self) -> int:
        def active(snap: dict | None) -> int:
            if not snap:
                return 0
            return int(not snap.get("deleted_at"))

        return sum(active(r.after) - active(r.before) for r in self.records if r.memory_id is not None)

    @property
    def touches_memories(self) -> bool:
        """Whether it changed a memory row (a `link` names memories but changes none: nothing to roll back)."""
        return any(
            r.memory_id is not None and (r.before is not None or r.after is not None) for r in self.records
        )

    @property
    def is_rollback(self) -> bool:
        return any(r.action == "rollback" for r in self.records)


def records_by_op(op_ids: Sequence[str]) -> dict[str, list[AuditLog]]:
    """Every audit record of these operations, grouped by op_id, oldest first within each."""
    records = db.session.scalars(
        select(AuditLog).where(AuditLog.op_id.in_(op_ids)).order_by(AuditLog.id)
    ).all()
    grouped: dict[str, list[AuditLog]] = defaultdict(list)
    for record in records:
        grouped[record.op_id].append(record)
    return grouped


@dataclass
class TimelinePage:
    ops: list[TimelineOp]
    next_before: int | None  # the cursor of the next (older) page, if any


@dataclass
class TimelineFilters:
    """What the audit timeline and the activity feed can be narrowed to (all optional)."""

    actor: str | None = None  # "admin", "agent", "system", or an exact actor such as "admin:3"
    action: str | None = None
    session_id: int | None = None
    since: datetime | None = None
    until: datetime | None = None

    def criteria(self) -> list[ColumnElement[bool]]:
        out: list[ColumnElement[bool]] = []
        if self.actor in ("admin", "system"):
            out.append(AuditLog.actor.like(self.actor + ":%"))
        elif self.actor:
            out.append(AuditLog.actor == self.actor)
        if self.action:
            out.append(AuditLog.action == self.action)
        if self.session_id is not None:
            out.append(AuditLog.session_id == self.session_id)
        if self.since is not None:
            out.append(AuditLog.created_at >= self.since)
        if self.until is not None:
            out.append(AuditLog.created_at <= self.until)
        return out

    @property
    def any(self) -> bool:
        return bool(self.criteria())


FEED_WINDOW = 2000


def activity(
    filters: TimelineFilters | None = None, *, before: int | None = None, per_page: int = 50
) -> TimelinePage:
    """The console-wide activity feed: operations across every agent, newest first.

    The newest FEED_WINDOW matching records (by id, the primary key read backwards) name the
    operations of the page, so the feed never groups the whole log; an operation is shown whole
    and only on the page where its newest record falls (cursor: that record's id)."""
    criteria = (filters or TimelineFilters()).criteria()
    if before is not None:
        criteria.append(AuditLog.id < before)
    window = db.session.execute(
        select(AuditLog.op_id, AuditLog.id).where(*criteria).order_by(AuditLog.id.desc()).limit(FEED_WINDOW)
    ).all()
    op_ids: list[str] = []
    seen: set[str] = set()
    cursor = None  # the next page starts below this record id
    for row in window:
        if row.op_id in seen:
            continue
        if len(op_ids) == per_page:
            cursor = row.id + 1  # the next operation's newest record opens the next page
            break
        seen.add(row.op_id)
        op_ids.append(row.op_id)
    if cursor is None and len(window) == FEED_WINDOW:
        cursor = window[-1].id  # everything newer than the window's oldest record has been looked at
    if not op_ids:
        return TimelinePage(ops=[], next_before=cursor)
    grouped = records_by_op(op_ids)
    ops = [
        TimelineOp(op_id=op_id, records=grouped[op_id])
        for op_id in op_ids
        # an operation whose newest record is past the cursor was on an earlier page
        if grouped.get(op_id) and (before is None or max(r.id for r in grouped[op_id]) < before)
    ]
    return TimelinePage(ops=ops, next_before=cursor)


def timeline(
    *,
    agent_id: int | None = None,
    session_id: int | None = None,
    memory_id: int | None = None,
    before: int | None = None,
    per_page: int = 50,
    filters: TimelineFilters | None = None,
) -> TimelinePage:
    """Operations newest first, paged by operation (never split across pages), keyset on max(id):
    a page holds the operations whose newest matching record is below `before`, newest first."""
    criteria: list[ColumnElement[bool]] = []
    if agent_id is not None:
        criteria.append(AuditLog.agent_id == agent_id)
    if session_id is not None:
        criteria.append(AuditLog.session_id == session_id)
    if memory_id is not None:
        criteria.append(AuditLog.memory_id == memory_id)
    if not criteria:
        raise ValueError("a timeline needs an agent, a session or a memory")
    if filters is not None:
        criteria.extend(filters.criteria())
    picked: list[tuple[str, int]] | None = None
    if agent_id is not None or memory_id is not None:  # (agent_id, id) and (memory_id, id) walk newest first
        picked = _newest_ops_in_window(criteria, before, per_page + 1)
    if picked is None:
        picked = _newest_ops_grouped(criteria, before, per_page + 1)
    more = len(picked) > per_page
    picked = picked[:per_page]
    op_ids = [op_id for op_id, _ in picked]
    if not op_ids:
        return TimelinePage(ops=[], next_before=None)
    grouped = records_by_op(op_ids)
    ops = [TimelineOp(op_id=op_id, records=grouped[op_id]) for op_id in op_ids if grouped.get(op_id)]
    return TimelinePage(ops=ops, next_before=picked[-1][1] if more else None)


# Records read backwards before giving up on the window and grouping (a timeline filtered to a rare
# action or actor, or a page of very large operations).
TIMELINE_WINDOW = 400


def _newest_ops_in_window(
    criteria: list[ColumnElement[bool]], before: int | None, wanted: int
) -> list[tuple[str, int]] | None:
    """The `wanted` operations with the newest matching records below `before`, as (op_id, newest
    matching record id), newest first, read from the newest TIMELINE_WINDOW matching records alone
    (an index walk backwards, however long the history); None when the window does not settle it.

    Reading records newest first, an operation's first record seen is its newest below `before`;
    one that also has a matching record at or above `before` belongs to an earlier page and is
    dropped. Every operation not in the window is older than all of those in it, so once the
    window yields `wanted` operations they are exactly the ones grouping every record would pick.
    """
    stmt = select(AuditLog.op_id, AuditLog.id).where(*criteria)
    if before is not None:
        stmt = stmt.where(AuditLog.id < before)
    window = db.session.execute(stmt.order_by(AuditLog.id.desc()).limit(TIMELINE_WINDOW)).all()
    newest: dict[str, int] = {}
    for op_id, record_id in window:
        newest.setdefault(op_id, record_id)
    if before is not None and newest:
        earlier = db.session.scalars(
            select(AuditLog.op_id)
            .where(AuditLog.op_id.in_(list(newest)), AuditLog.id >= before, *criteria)
            .distinct()
        ).all()
        for op_id in earlier:
            del newest[op_id]
    if len(newest) < wanted and len(window) == TIMELINE_WINDOW:
        return None  # older records may hold operations this page needs
    return list(newest.items())[:wanted]


def _newest_ops_grouped(
    criteria: list[ColumnElement[bool]], before: int | None, wanted: int
) -> list[tuple[str, int]]:
    """The same answer as `_newest_ops_in_window`, by grouping every matching record by operation."""
    last_id = func.max(AuditLog.id)
    stmt = select(AuditLog.op_id, last_id).where(*criteria).group_by(AuditLog.op_id)
    if before is not None:
        stmt = stmt.having(last_id < before)
    rows = db.session.execute(stmt.order_by(last_id.desc()).limit(wanted)).all()
    return [(op_id, record_id) for op_id, record_id in rows]


def undoers(ops: Sequence[TimelineOp]) -> dict[str, str]:
    """For the operations shown, which later rollback undid each (op_id → the rollback's op_id), and
    which rollback undid a whole session they belong to. A rollback that was itself undone no longer
    counts. Reads only rollback records of these agents since the oldest operation shown."""
    if not ops:
        return {}
    agent_ids = sorted({op.first.agent_id for op in ops if op.first.agent_id is not None})
    since = min(op.created_at for op in ops)
    records = db.session.scalars(
        select(AuditLog)
        .where(AuditLog.agent_id.in_(agent_ids), AuditLog.action == "rollback", AuditLog.created_at >= since)
        .order_by(AuditLog.id)
    ).all()
    of_op: dict[str, str] = {}
    of_session: dict[int, str] = {}
    for record in records:
        scope = (record.data or {}).get("rollback_of") if isinstance(record.data, dict) else None
        if not isinstance(scope, dict):
            continue
        if scope.get("rollback_of") == "operation" and isinstance(scope.get("target_op_id"), str):
            of_op.setdefault(scope["target_op_id"], record.op_id)
        elif scope.get("rollback_of") == "session" and isinstance(scope.get("session_id"), int):
            of_session.setdefault(scope["session_id"], record.op_id)
    redone = set(of_op)  # rollbacks that were themselves rolled back
    undone: dict[str, str] = {}
    for op in ops:
        by = of_op.get(op.op_id)
        if by is None and op.session_id is not None and not op.is_rollback:
            by = of_session.get(op.session_id)
        if by is not None and by not in redone and by != op.op_id:
            undone[op.op_id] = by
    return undone


def rollbacks_of_session(agent_id: int, session: RefinementSession) -> list[TimelineOp]:
    """Rollback operations that undid this session (their records name it in `data`)."""
    records = db.session.scalars(
        select(AuditLog)
        .where(
            AuditLog.agent_id == agent_id,
            AuditLog.action == "rollback",
            AuditLog.created_at >= session.started_at,
        )
        .order_by(AuditLog.id)
    ).all()
    grouped: dict[str, list[AuditLog]] = defaultdict(list)
    for record in records:
        scope = (record.data or {}).get("rollback_of") or {}
        if scope.get("rollback_of") == "session" and scope.get("session_id") == session.id:
            grouped[record.op_id].append(record)
    return [TimelineOp(op_id=op_id, records=recs) for op_id, recs in grouped.items()]
