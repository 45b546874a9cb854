"""The events view's queries (docs/spec/003-memory-system.md §14: "basic counts by op/node over time"):
operational events filtered by agent, node, op and status over a window, counted by each of those and by
hour or day. Aggregates only: an event row holds no memory text, and none is loaded."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, func, select

from models.db import db, utcnow
from models.history.events import OpEvent

# window → (its length, the bucket it is counted in)
WINDOWS: dict[str, tuple[timedelta, str]] = {
    "24h": (timedelta(hours=24), "hour"),
    "7d": (timedelta(days=7), "day"),
    "30d": (timedelta(days=30), "day"),
}
STATUSES = ("ok", "error", "skipped")


@dataclass(frozen=True)
class EventFilters:
    window: str = "7d"
    agent_id: int | None = None
    node: str | None = None
    op: str | None = None
    status: str | None = None

    def criteria(self, now: datetime) -> list[ColumnElement[bool]]:
        length, _ = WINDOWS[self.window]
        out = [OpEvent.ts >= now - length, OpEvent.ts <= now]
        if self.agent_id is not None:
            out.append(OpEvent.agent_id == self.agent_id)
        if self.node:
            out.append(OpEvent.node == self.node)
        if self.op:
            out.append(OpEvent.op == self.op)
        if self.status:
            out.append(OpEvent.status == self.status)
        return out


@dataclass
class EventSummary:
    total: int
    by_op: list[tuple[str, int]]
    by_node: list[tuple[str, int]]
    by_status: list[tuple[str, int]]
    buckets: list[tuple[datetime, int]]  # every bucket of the window, oldest first, empty ones as 0
    bucket: str  # hour or day
    ops_seen: list[str] = field(default_factory=list)  # every op in the window, for the filter's choices


def _bucket_start(bucket: str) -> Any:
    """The SQL expression of an event's hour or day, on either database (naive UTC)."""
    if db.engine.dialect.name == "postgresql":
        return func.date_trunc(bucket, OpEvent.ts)
    return func.strftime("%Y-%m-%d %H:00:00" if bucket == "hour" else "%Y-%m-%d 00:00:00", OpEvent.ts)


def _as_time(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


def _floor(moment: datetime, bucket: str) -> datetime:
    moment = moment.replace(minute=0, second=0, microsecond=0)
    return moment.replace(hour=0) if bucket == "day" else moment


def event_summary(filters: EventFilters, now: datetime | None = None) -> EventSummary:
    """Counts of the filtered events by op, node, status and hour or day, in four aggregate queries."""
    now = now or utcnow()
    criteria = filters.criteria(now)
    length, bucket = WINDOWS[filters.window]

    def by(column: Any) -> list[tuple[str, int]]:
        rows = db.session.execute(
            select(column, func.count())
            .where(*criteria)
            .group_by(column)
            .order_by(func.count().desc(), column)
        ).all()
        return [(str(key), int(n)) for key, n in rows]

    by_op, by_node, by_status = by(OpEvent.op), by(OpEvent.node), by(OpEvent.status)
    start = _bucket_start(bucket)
    counted = {
        _floor(_as_time(key), bucket): int(n)
        for key, n in db.session.execute(select(start, func.count()).where(*criteria).group_by(start)).all()
    }
    step = timedelta(hours=1) if bucket == "hour" else timedelta(days=1)
    first, last = _floor(now - length, bucket), _floor(now, bucket)
    buckets = []
    moment = first
    while moment <= last:
        buckets.append((moment, counted.get(moment, 0)))
        moment += step
    ops_seen = sorted(
        db.session.scalars(
            select(OpEvent.op).where(*EventFilters(filters.window).criteria(now)).group_by(OpEvent.op)
        ).all()
    )
    return EventSummary(sum(n for _, n in by_op), by_op, by_node, by_status, buckets, bucket, ops_seen)
