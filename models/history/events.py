"""Operational events (docs/spec/003-memory-system.md §14): what happened to memory, where and when, without content.

Writes are recorded in the transaction of the change itself (from the audit hook, so every path —
agent API, refinement, jobs, console — is covered). Reads (memory.query searches) and refused or
deferred writes are buffered and inserted in batches, off the request's hot path.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import DateTime, Float, ForeignKey, Index, Integer, String, case, func, insert, select
from sqlalchemy.orm import Mapped, mapped_column

from infra.batching import batch
from models.db import Model, db, utcnow
from models.memories.fields import CATEGORY, SCOPE_ID

NODES = ("hotpath", "context", "episodic", "worker", "console")
# Audit actions -> the op of docs/spec/003-memory-system.md §14 (classify | search | create | update | merge | delete, plus ttl,
# restore, rollback and link). Actions that change nothing an agent would see are not events (a relation edge
# is: memory.query returns linked memories).
OPS = {
    "create": "create",
    "import": "create",
    "refinement_journal": "create",
    "update": "update",
    "protect": "update",
    "unprotect": "update",
    "consolidate": "merge",
    "delete": "delete",
    "dedup": "delete",
    "restore": "restore",
    "rollback": "rollback",
    "ttl_expire": "ttl",
    "purge": "ttl",
    "link": "link",
}
WINDOWS = {"last_24h": timedelta(hours=24), "last_7d": timedelta(days=7)}
# One of the agent's turns, noted by the agent (POST /api/v1/turns): it recalled (called memory.query
# because it was unsure) or went on without; docs/spec/003-memory-system.md §11 wants under 10% recalled.
RECALL_TURN = "recall_turn"
RECALLED, SKIPPED = "recalled", "skipped"


class OpEvent(Model):
    """On PostgreSQL, partitioned by month on `ts`, the time of writing (migration 0016, `partitions.py`)."""

    __tablename__ = "events"
    __table_args__ = (
        Index("ix_events_user_ts", "user_id", "ts"),
        Index("ix_events_node_ts", "node", "ts"),
        Index("ix_events_agent_ts", "agent_id", "ts"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), nullable=False)
    user_id: Mapped[str | None] = mapped_column(SCOPE_ID.column())  # copies of the memory's fields
    thread_id: Mapped[str | None] = mapped_column(SCOPE_ID.column())
    node: Mapped[str] = mapped_column(String(16), nullable=False)
    op: Mapped[str] = mapped_column(String(16), nullable=False)
    status: Mapped[str] = mapped_column(String(8), nullable=False)  # ok | error | skipped
    memory_id: Mapped[int | None] = mapped_column(Integer)
    category: Mapped[str | None] = mapped_column(CATEGORY.column())
    sim: Mapped[float | None] = mapped_column(Float)
    ts: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)


def node_for(actor: str, session_id: int | None, memory_type: str | None = None) -> str:
    """The agent API is the hot path, and its writes of episodic memories the episodic node; sessions and
    jobs are workers; admins act in the console."""
    if actor.startswith("admin:"):
        return "console"
    if actor.startswith("system:") or session_id is not None:
        return "worker"
    return "episodic" if memory_type == "episodic" else "hotpath"


def _event_row(record: Any) -> dict[str, Any] | None:
    op = OPS.get(record.action)
    if op is None:
        return None
    snap = record.after or record.before or {}
    return {
        "agent_id": record.agent_id,
        "user_id": snap.get("user_id"),
        "thread_id": snap.get("thread_id"),
        "node": node_for(record.actor, record.session_id, snap.get("memory_type")),
        "op": op,
        "status": "ok",
        "memory_id": record.memory_id,
        "category": snap.get("category"),
        "ts": record.created_at,
    }


_INSERT_EVENT = insert(OpEvent.__table__)


def record_writes(records: list[Any]) -> None:
    """The events of many audited changes, in one multi-row INSERT in the current transaction."""
    rows = [row for row in map(_event_row, records) if row is not None]
    if rows:  # one statement built once, the rows bound at execution (one tool call writes one event)
        db.session.execute(_INSERT_EVENT, rows[0] if len(rows) == 1 else rows)


def _write_events(rows: list[dict[str, Any]]) -> None:
    with db.engine.begin() as conn:
        conn.execute(insert(OpEvent.__table__), rows)


def note(
    agent_id: int,
    op: str,
    status: str,
    *,
    node: str = "hotpath",
    user_id: str | None = None,
    thread_id: str | None = None,
    memory_id: int | None = None,
    category: str | None = None,
    sim: float | None = None,
) -> None:
    """Buffer an event that belongs to no memory transaction (a search, a refused or deferred write)."""
    batch("events", _write_events).add(
        [
            {
                "agent_id": agent_id,
                "user_id": user_id,
                "thread_id": thread_id,
                "node": node,
                "op": op,
                "status": status,
                "memory_id": memory_id,
                "category": category,
                "sim": sim,
                "ts": utcnow(),
            }
        ]
    )


@dataclass(frozen=True)
class EventCount:
    node: str
    op: str
    last_24h: int
    last_7d: int


def counts(agent_id: int | None = None, now: datetime | None = None) -> list[EventCount]:
    """Events by node and op over the last 24 hours and 7 days (docs/spec/003-memory-system.md §14's "basic counts by op/node over
    time"), for one agent or all; one aggregate over the 7-day window, ordered by node then op. Buffered
    events (searches, refused or held writes) count once their batch is written, within seconds."""
    now = now or utcnow()
    day = now - WINDOWS["last_24h"]
    stmt = (
        select(
            OpEvent.node,
            OpEvent.op,
            func.sum(case((OpEvent.ts >= day, 1), else_=0)).label("last_24h"),
            func.count().label("last_7d"),
        )
        .where(OpEvent.ts >= now - WINDOWS["last_7d"], OpEvent.ts <= now)
        .group_by(OpEvent.node, OpEvent.op)
        .order_by(OpEvent.node, OpEvent.op)
    )
    if agent_id is not None:
        stmt = stmt.where(OpEvent.agent_id == agent_id)
    return [EventCount(r.node, r.op, int(r.last_24h or 0), int(r.last_7d)) for r in db.session.execute(stmt)]


@dataclass(frozen=True)
class RecallShare:
    """Turns an agent noted in a window and how many recalled (docs/spec/003-memory-system.md §11)."""

    window: str
    turns: int
    recalled: int

    @property
    def share(self) -> float | None:
        return self.recalled / self.turns if self.turns else None


def recall_shares(agent_id: int, now: datetime | None = None) -> list[RecallShare]:
    """The share of the agent's noted turns that recalled, over the last 24 hours and 7 days (one aggregate)."""
    now = now or utcnow()
    day = now - WINDOWS["last_24h"]
    recalled = OpEvent.status == RECALLED
    row = db.session.execute(
        select(
            func.sum(case((OpEvent.ts >= day, 1), else_=0)),
            func.sum(case(((OpEvent.ts >= day) & recalled, 1), else_=0)),
            func.count(),
            func.sum(case((recalled, 1), else_=0)),
        ).where(
            OpEvent.agent_id == agent_id,
            OpEvent.op == RECALL_TURN,
            OpEvent.ts >= now - WINDOWS["last_7d"],
            OpEvent.ts <= now,
        )
    ).one()
    day_turns, day_recalled, week_turns, week_recalled = (int(v or 0) for v in row)
    return [
        RecallShare("last_24h", day_turns, day_recalled),
        RecallShare("last_7d", week_turns, week_recalled),
    ]
