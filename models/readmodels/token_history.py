"""Active core tokens over time, for the sparkline: each agent's history computed in SQL from the
audit log's snapshots (their token figures, never their text), anchored at today's figure, with
the ends of its refinement sessions marked."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, case, func, select
from sqlalchemy.orm import InstrumentedAttribute

from models.db import db, utcnow
from models.history.audit import AuditLog
from models.history.session import RefinementSession


def _core_tokens_of(snapshot_column: InstrumentedAttribute[dict | None]) -> ColumnElement[Any]:
    """Active core tokens a snapshot describes, computed in SQL from the JSON (no text involved)."""
    return case(
        (
            and_(
                snapshot_column["memory_type"].as_string() == "core",
                snapshot_column["deleted_at"].as_string().is_(None),
            ),
            snapshot_column["token_estimate"].as_integer(),
        ),
        else_=0,
    )


@dataclass
class TokenSeries:
    """(time, active core tokens) points, oldest first, ending at `now`; session ends marked."""

    points: list[tuple[datetime, int]]
    sessions: list[tuple[datetime, int, str]]  # finished_at, tokens_after, status


@dataclass
class TokenHistory:
    """An agent's core-token history from the audit log: the running total after each operation,
    thinned for a sparkline. `total` is the sum of every delta, so today's figure minus `total`
    anchors the curve even where history predates the audit log."""

    points: list[tuple[datetime, int]]
    total: int


def audit_versions(agent_ids: Sequence[int]) -> dict[int, tuple[int, str]]:
    """(record count, newest record time) per agent: the audit log is append-only, so any change to
    an agent's history changes its version. Served from the (agent_id, created_at) index alone."""
    if not agent_ids:
        return {}
    rows = db.session.execute(
        select(AuditLog.agent_id, func.count(), func.max(AuditLog.created_at))
        .where(AuditLog.agent_id.in_(list(agent_ids)))
        .group_by(AuditLog.agent_id)
    ).all()
    versions = {agent_id: (0, "") for agent_id in agent_ids}
    for agent_id, count, newest in rows:
        if agent_id is not None:  # always: the query names agents
            versions[agent_id] = (int(count), newest.isoformat() if newest else "")
    return versions


def token_histories(agent_ids: Sequence[int], max_points: int = 96) -> dict[int, TokenHistory]:
    """The core-token history of each agent, from every audit record's snapshots (computed in SQL,
    grouped per operation). This reads every memory record of these agents: cache it by version."""
    histories = {agent_id: TokenHistory(points=[], total=0) for agent_id in agent_ids}
    if not agent_ids:
        return histories
    delta = _core_tokens_of(AuditLog.after) - _core_tokens_of(AuditLog.before)
    rows = db.session.execute(
        select(AuditLog.agent_id, func.max(AuditLog.created_at).label("at"), func.sum(delta).label("delta"))
        .where(AuditLog.agent_id.in_(list(agent_ids)), AuditLog.memory_id.is_not(None))
        .group_by(AuditLog.agent_id, AuditLog.op_id)
        .order_by(AuditLog.agent_id, func.max(AuditLog.created_at))
    ).all()
    running: dict[int, list[tuple[datetime, int]]] = defaultdict(list)
    for row in rows:
        if not row.delta:
            continue
        steps = running[row.agent_id]
        if not steps:
            steps.append((row.at, 0))  # the level before the first change
        steps.append((row.at, steps[-1][1] + int(row.delta)))
    for agent_id, steps in running.items():
        histories[agent_id] = TokenHistory(points=_thin(steps, max_points), total=steps[-1][1])
    return histories


def session_marks(
    agent_ids: Sequence[int], per_agent: int = 20
) -> dict[int, list[tuple[datetime, int, str]]]:
    """When each agent's recent refinement sessions ended, and their core tokens after."""
    marks: dict[int, list[tuple[datetime, int, str]]] = defaultdict(list)
    if not agent_ids:
        return marks
    rows = db.session.execute(
        select(
            RefinementSession.agent_id,
            RefinementSession.finished_at,
            RefinementSession.tokens_after,
            RefinementSession.status,
        )
        .where(
            RefinementSession.agent_id.in_(list(agent_ids)),
            RefinementSession.finished_at.is_not(None),
            RefinementSession.tokens_after.is_not(None),
        )
        .order_by(RefinementSession.agent_id, RefinementSession.finished_at.desc())
    ).all()
    for row in rows:
        if len(marks[row.agent_id]) < per_agent:
            marks[row.agent_id].append((row.finished_at, int(row.tokens_after), row.status))
    return marks


def token_series(
    current: int, history: TokenHistory, marks: list[tuple[datetime, int, str]], now: datetime
) -> TokenSeries:
    """Anchor a history at today's figure and end it now."""
    offset = current - history.total
    points = [(at, value + offset) for at, value in history.points]
    points.append((max(now, points[-1][0]) if points else now, current))
    return TokenSeries(points=points, sessions=list(reversed(marks)))


def core_token_series(current: dict[int, int], *, now: datetime | None = None) -> dict[int, TokenSeries]:
    """Active core tokens over time for the given agents (agent id → today's tokens), uncached."""
    now = now or utcnow()
    histories = token_histories(list(current))
    marks = session_marks(list(current))
    return {a: token_series(tokens, histories[a], marks.get(a, []), now) for a, tokens in current.items()}


def _thin(points: list[tuple[datetime, int]], limit: int) -> list[tuple[datetime, int]]:
    """Keep the first and last points and evenly spaced ones between: a sparkline needs no more."""
    if len(points) <= limit:
        return points
    step = (len(points) - 1) / (limit - 1)
    return [points[round(i * step)] for i in range(limit)]
