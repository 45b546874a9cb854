"""Read-only queries behind the admin console: metadata only.

Nothing here loads `agent_memories.content` or audit text for a metadata view: memory rows come
with the content column deferred *and* raise-loaded, so a template that reached for it would fail
loudly instead of leaking it. The two functions that do return text (`grant_contents`,
`audit_texts`) exist for the Mechanic's Exception and take the ids a live grant covers.

Every query is bounded by the page it serves (a page of agents, one agent, one session), so the
console stays fast with 10,000 agents and a million memories.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, case, func, or_, select
from sqlalchemy.orm import defer

from models.admins.mechanic import MechanicGrant, MechanicView
from models.admins.user import User
from models.agents.agent import Agent
from models.db import LIKE_ESCAPE, db, like_pattern, utcnow
from models.history.audit import AuditContent, AuditLog
from models.history.session import RefinementSession
from models.memories.memory import MEMORY_TYPES, AgentMemory
from models.parsing import parse_id

MEMORY_STATES = ("active", "deleted", "all")


# ----- agents -----


def search_agents(query: str | None, page: int, per_page: int) -> tuple[list[Agent], int]:
    """One page of agents by name (case-insensitive substring), and how many match in all."""
    stmt = select(Agent)
    count = select(func.count()).select_from(Agent)
    query = (query or "").strip()
    if query:
        condition = func.lower(Agent.name).like(like_pattern(query.lower()), escape=LIKE_ESCAPE)
        if parse_id(query) is not None:  # models/parsing.py: only ids the column can hold
            condition = condition | (Agent.id == parse_id(query))
        stmt, count = stmt.where(condition), count.where(condition)
    total = db.session.scalar(count) or 0
    agents = db.session.scalars(stmt.order_by(Agent.name).limit(per_page).offset((page - 1) * per_page)).all()
    return list(agents), total


DASHBOARD_SORTS = ("name", "usage", "overage", "last_refined")
DASHBOARD_FILTERS = ("over", "never", "grant")


def dashboard_agents(
    query: str | None,
    page: int,
    per_page: int,
    *,
    sort: str = "name",
    descending: bool = False,
    filters: Iterable[str] = (),
    user_id: int | None = None,
) -> tuple[list[Agent], int]:
    """One page of agents for the dashboard: searched, filtered and sorted in SQL over the maintained
    per-agent totals (`agents.core_tokens`), so ranking 10,000 agents never sums a memory.

    Sorts: name, usage (core tokens / budget), overage (core tokens - budget), last_refined (never
    refined sorts as oldest). Filters: over (over budget), never (never refined), grant (a live
    Mechanic's grant of `user_id`'s on the agent). Ties break by id, so pages are stable.
    """
    criteria = []
    query = (query or "").strip()
    if query:
        condition = func.lower(Agent.name).like(like_pattern(query.lower()), escape=LIKE_ESCAPE)
        if parse_id(query) is not None:  # models/parsing.py: only ids the column can hold
            condition = condition | (Agent.id == parse_id(query))
        criteria.append(condition)
    filters = set(filters)
    if "over" in filters:
        criteria.append(Agent.core_tokens > Agent.core_token_budget)
    if "never" in filters:
        criteria.append(Agent.last_refinement_at.is_(None))
    if "grant" in filters and user_id is not None:
        now = utcnow()
        criteria.append(
            select(MechanicGrant.id)
            .where(
                MechanicGrant.agent_id == Agent.id,
                MechanicGrant.requested_by == user_id,
                MechanicGrant.status == "active",
                MechanicGrant.expires_at > now,
            )
            .exists()
        )
    keys = {
        "name": Agent.name,
        "usage": Agent.core_tokens * 1.0 / func.greatest(Agent.core_token_budget, 1)
        if db.engine.dialect.name == "postgresql"
        else Agent.core_tokens * 1.0 / func.max(Agent.core_token_budget, 1),
        "overage": Agent.core_tokens - Agent.core_token_budget,
        "last_refined": func.coalesce(Agent.last_refinement_at, datetime(1970, 1, 1)),
    }
    key = keys.get(sort, Agent.name)
    order = [key.desc() if descending else key.asc(), Agent.id.desc() if descending else Agent.id.asc()]
    total = db.session.scalar(select(func.count()).select_from(Agent).where(*criteria)) or 0
    agents = db.session.scalars(
        select(Agent).where(*criteria).order_by(*order).limit(per_page).offset((page - 1) * per_page)
    ).all()
    return list(agents), total


@dataclass
class MemoryStats:
    """Per-agent figures: counts of active memories by type, active core tokens, constitutional count."""

    by_type: dict[str, int] = field(default_factory=dict)
    core_tokens: int = 0
    core_count: int = 0
    constitutional: int = 0
    deleted: int = 0

    @property
    def active(self) -> int:
        return sum(self.by_type.values())


def memory_stats(agent_ids: Sequence[int]) -> dict[int, MemoryStats]:
    """One grouped query over the given agents' rows (the agent/type index serves it)."""
    stats = {agent_id: MemoryStats() for agent_id in agent_ids}
    if not agent_ids:
        return stats
    active = AgentMemory.deleted_at.is_(None)
    rows = db.session.execute(
        select(
            AgentMemory.agent_id,
            AgentMemory.memory_type,
            func.count().filter(active).label("active"),
            func.count().filter(AgentMemory.deleted_at.is_not(None)).label("deleted"),
            func.coalesce(func.sum(case((active, AgentMemory.token_estimate), else_=0)), 0).label("tokens"),
            func.count().filter(active & AgentMemory.constitutional.is_(True)).label("constitutional"),
        )
        .where(AgentMemory.agent_id.in_(list(agent_ids)))
        .group_by(AgentMemory.agent_id, AgentMemory.memory_type)
    ).all()
    for row in rows:
        entry = stats[row.agent_id]
        if row.active:
            entry.by_type[row.memory_type] = int(row.active)
        entry.deleted += int(row.deleted)
        entry.constitutional += int(row.constitutional)
        if row.memory_type == "core":
            entry.core_tokens, entry.core_count = int(row.tokens), int(row.active)
    for entry in stats.values():
        entry.by_type = {t: entry.by_type[t] for t in MEMORY_TYPES if t in entry.by_type}
    return stats


def latest_sessions(agent_ids: Sequence[int]) -> dict[int, RefinementSession]:
    """The newest refinement session of each agent (any status)."""
    if not agent_ids:
        return {}
    newest = (
        select(func.max(RefinementSession.id))
        .where(RefinementSession.agent_id.in_(list(agent_ids)))
        .group_by(RefinementSession.agent_id)
    )
    sessions = db.session.scalars(
        select(RefinementSession)
        .options(defer(RefinementSession.summary, raiseload=True))
        .where(RefinementSession.id.in_(newest))
    ).all()
    return {s.agent_id: s for s in sessions}


def recent_sessions(agent_id: int, limit: int = 25) -> list[RefinementSession]:
    """An agent's sessions, newest first. The agent-authored summary is never loaded."""
    return list(
        db.session.scalars(
            select(RefinementSession)
            .options(defer(RefinementSession.summary, raiseload=True))
            .where(RefinementSession.agent_id == agent_id)
            .order_by(RefinementSession.id.desc())
            .limit(limit)
        ).all()
    )


def session_metadata(session_id: int) -> RefinementSession | None:
    return db.session.scalar(
        select(RefinementSession)
        .options(defer(RefinementSession.summary, raiseload=True))
        .where(RefinementSession.id == session_id)
    )


# ----- core tokens over time (the sparkline) -----


def _core_tokens_of(snapshot_column) -> Any:
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


# ----- memories (metadata) -----


def _memory_filter(agent_id: int, state: str, memory_type: str | None) -> list:
    criteria = [AgentMemory.agent_id == agent_id]
    if state == "active":
        criteria.append(AgentMemory.deleted_at.is_(None))
    elif state == "deleted":
        criteria.append(AgentMemory.deleted_at.is_not(None))
    if memory_type:
        criteria.append(AgentMemory.memory_type == memory_type)
    return criteria


MEMORY_SORTS = ("created", "updated", "tokens", "id")


def _tag_contains(needle: str):
    """SQL: one of the row's tags contains `needle` (case-insensitive), on either engine."""
    from sqlalchemy import bindparam, text

    pattern = like_pattern(needle.lower())  # ESCAPE '\\' below is LIKE_ESCAPE
    if db.engine.dialect.name == "postgresql":
        sql = (
            "EXISTS (SELECT 1 FROM json_array_elements_text(agent_memories.tags::json) AS t(value) "
            "WHERE lower(t.value) LIKE :tag_pattern ESCAPE '\\')"
        )
    else:
        sql = (
            "EXISTS (SELECT 1 FROM json_each(agent_memories.tags) AS t "
            "WHERE lower(t.value) LIKE :tag_pattern ESCAPE '\\')"
        )
    return text(sql).bindparams(bindparam("tag_pattern", pattern))


def memory_search(search: str | None):
    """The memories list's search box: an id (`123` or `#123`), a content-hash prefix (hex, 4+
    characters) or part of a tag. Any of them matches. Never the content: it is not searched."""
    search = (search or "").strip()[:64]
    if not search:
        return None
    needle = search.lstrip("#")
    options = []
    if parse_id(needle) is not None:  # models/parsing.py: only ids the column can hold
        options.append(AgentMemory.id == parse_id(needle))
    lowered = needle.lower()
    if len(lowered) >= 4 and all(c in "0123456789abcdef" for c in lowered):
        options.append(AgentMemory.content_hash.like(lowered + "%"))
    if not search.startswith("#"):
        options.append(_tag_contains(needle))
    return or_(*options) if options else AgentMemory.id.is_(None)


def memory_page(
    agent_id: int,
    *,
    state: str = "active",
    memory_type: str | None = None,
    page: int = 1,
    per_page: int = 100,
    search: str | None = None,
    locked: bool = False,
    sort: str = "created",
    descending: bool = True,
) -> tuple[list[AgentMemory], int]:
    """One page of an agent's memories, metadata only (content deferred and raise-loaded): filtered,
    searched (`memory_search`) and sorted (created, updated, tokens or id; newest first by default)."""
    criteria = _memory_filter(agent_id, state, memory_type)
    condition = memory_search(search)
    if condition is not None:
        criteria.append(condition)
    if locked:
        criteria.append(AgentMemory.constitutional.is_(True))
    key = {
        "created": AgentMemory.created_at,
        "updated": AgentMemory.updated_at,
        "tokens": AgentMemory.token_estimate,
        "id": AgentMemory.id,
    }.get(sort, AgentMemory.created_at)
    order = [key.desc(), AgentMemory.id.desc()] if descending else [key.asc(), AgentMemory.id.asc()]
    total = db.session.scalar(select(func.count()).select_from(AgentMemory).where(*criteria)) or 0
    rows = db.session.scalars(
        select(AgentMemory)
        .options(defer(AgentMemory.content, raiseload=True))
        .where(*criteria)
        .order_by(*order)
        .limit(per_page)
        .offset((page - 1) * per_page)
    ).all()
    return list(rows), total


def memory_metadata(agent_id: int, memory_id: int) -> AgentMemory | None:
    """One memory row of this agent, content deferred and raise-loaded."""
    return db.session.scalar(
        select(AgentMemory)
        .options(defer(AgentMemory.content, raiseload=True))
        .where(AgentMemory.agent_id == agent_id, AgentMemory.id == memory_id)
    )


# ----- the audit timeline -----


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
            return int(bool(snap) and not snap.get("deleted_at"))

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

    def criteria(self) -> list:
        out = []
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
    records = db.session.scalars(
        select(AuditLog).where(AuditLog.op_id.in_(op_ids)).order_by(AuditLog.id)
    ).all()
    grouped: dict[str, list[AuditLog]] = defaultdict(list)
    for record in records:
        grouped[record.op_id].append(record)
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
    """Operations newest first, paged by operation (never split across pages), keyset on max(id)."""
    criteria = []
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
    last_id = func.max(AuditLog.id)
    ops_stmt = select(AuditLog.op_id, last_id.label("last_id")).where(*criteria).group_by(AuditLog.op_id)
    if before is not None:
        ops_stmt = ops_stmt.having(last_id < before)
    picked = db.session.execute(ops_stmt.order_by(last_id.desc()).limit(per_page + 1)).all()
    more = len(picked) > per_page
    picked = picked[:per_page]
    op_ids = [row.op_id for row in picked]
    if not op_ids:
        return TimelinePage(ops=[], next_before=None)
    records = db.session.scalars(
        select(AuditLog).where(AuditLog.op_id.in_(op_ids)).order_by(AuditLog.id)
    ).all()
    grouped: dict[str, list[AuditLog]] = defaultdict(list)
    for record in records:
        grouped[record.op_id].append(record)
    ops = [TimelineOp(op_id=op_id, records=grouped[op_id]) for op_id in op_ids if grouped.get(op_id)]
    return TimelinePage(ops=ops, next_before=picked[-1].last_id if more else None)


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


def agent_names(agent_ids: Iterable[int]) -> dict[int, Agent]:
    ids = sorted(set(agent_ids))
    if not ids:
        return {}
    return {a.id: a for a in db.session.scalars(select(Agent).where(Agent.id.in_(ids))).all()}


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


def users_by_id(user_ids: Iterable[int]) -> dict[int, User]:
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    return {u.id: u for u in db.session.scalars(select(User).where(User.id.in_(ids))).all()}


# ----- the Mechanic's Exception -----


@dataclass
class GrantRow:
    grant: MechanicGrant
    views: list[MechanicView]
    requester: User | None


def grants_with_views(agent_id: int, limit: int = 50) -> list[GrantRow]:
    """Every grant on this agent (newest first, bounded) with each view recorded under it."""
    grants = db.session.scalars(
        select(MechanicGrant)
        .where(MechanicGrant.agent_id == agent_id)
        .order_by(MechanicGrant.id.desc())
        .limit(limit)
    ).all()
    if not grants:
        return []
    views = db.session.scalars(
        select(MechanicView)
        .where(MechanicView.grant_id.in_([g.id for g in grants]))
        .order_by(MechanicView.viewed_at.desc(), MechanicView.id.desc())
    ).all()
    by_grant: dict[int, list[MechanicView]] = defaultdict(list)
    for view in views:
        by_grant[view.grant_id].append(view)
    users = users_by_id([g.requested_by for g in grants] + [v.user_id for v in views])
    return [GrantRow(grant=g, views=by_grant[g.id], requester=users.get(g.requested_by)) for g in grants]


def grant_contents(
    grant: MechanicGrant, *, state: str = "active", page: int = 1, per_page: int = 100
) -> tuple[list[AgentMemory], int]:
    """Memories a live grant covers, with their content. Callers must check the grant and record the view."""
    if not grant.is_active():
        raise PermissionError("the grant is not active")
    criteria = _memory_filter(grant.agent_id, state, None)
    if grant.scope != "all":
        criteria.append(AgentMemory.id.in_(list(grant.memory_ids or [])))
    total = db.session.scalar(select(func.count()).select_from(AgentMemory).where(*criteria)) or 0
    rows = db.session.scalars(
        select(AgentMemory)
        .where(*criteria)
        .order_by(AgentMemory.created_at.desc(), AgentMemory.id.desc())
        .limit(per_page)
        .offset((page - 1) * per_page)
    ).all()
    return list(rows), total


def audit_texts(grant: MechanicGrant, records: Iterable[AuditLog]) -> dict[int, dict[str, str | None]]:
    """Before/after text of the given audit records whose memory a live grant covers (record id → texts).

    A purged memory's text was redacted from its history: it comes back as None.
    """
    if not grant.is_active():
        raise PermissionError("the grant is not active")
    covered = [
        r
        for r in records
        if r.memory_id is not None and r.agent_id == grant.agent_id and grant.covers(r.memory_id)
    ]
    refs = {
        snap["content_ref"]
        for r in covered
        for snap in (r.before, r.after)
        if snap and snap.get("content_ref") is not None
    }
    texts: dict[int, str | None] = {}
    if refs:
        for row in db.session.execute(
            select(AuditContent.id, AuditContent.content).where(AuditContent.id.in_(sorted(refs)))
        ):
            texts[row.id] = row.content
    result: dict[int, dict[str, str | None]] = {}
    for record in covered:
        result[record.id] = {
            side: texts.get(snap["content_ref"]) if snap and snap.get("content_ref") is not None else None
            for side, snap in (("before", record.before), ("after", record.after))
        }
    return result


def active_grants_by_agent(user_id: int, agent_ids: Sequence[int]) -> dict[int, MechanicGrant]:
    """The admin's live grants on these agents (for a badge on lists)."""
    if not agent_ids:
        return {}
    now = utcnow()
    grants = db.session.scalars(
        select(MechanicGrant).where(
            MechanicGrant.agent_id.in_(list(agent_ids)),
            MechanicGrant.requested_by == user_id,
            MechanicGrant.status == "active",
            MechanicGrant.expires_at > now,
        )
    ).all()
    return {g.agent_id: g for g in grants}


def pending_or_active_grant(agent_id: int, user_id: int) -> MechanicGrant | None:
    """The admin's newest grant on this agent that is still pending or live."""
    now = utcnow()
    return db.session.scalar(
        select(MechanicGrant)
        .where(
            MechanicGrant.agent_id == agent_id,
            MechanicGrant.requested_by == user_id,
            or_(
                MechanicGrant.status == "pending",
                and_(MechanicGrant.status == "active", MechanicGrant.expires_at > now),
            ),
        )
        .order_by(MechanicGrant.id.desc())
    )
