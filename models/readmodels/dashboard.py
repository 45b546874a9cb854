"""The dashboard's agents: searched, filtered and sorted in SQL over the maintained per-agent totals,
and the per-agent memory figures shown beside them. Metadata only (docs/explanation/architecture.md, "Privacy:
who may read memory text")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Float, cast, func, literal, null, select, union_all

from models.admins.mechanic import MechanicGrant
from models.agents.agent import Agent
from models.db import LIKE_ESCAPE, db, like_pattern
from models.memories.memory import MEMORY_TYPES, AgentMemory
from models.parsing import parse_id
from models.readmodels.common import OrderKey, live_grants_of, page_of

DASHBOARD_SORTS = ("name", "usage", "overage", "last_refined")
DASHBOARD_FILTERS = ("over", "never", "grant")


def agent_search(query: str | None) -> ColumnElement[bool] | None:
    """Agents whose name holds `query` (case-insensitive), or whose id it is; None for no query."""
    query = (query or "").strip()
    if not query:
        return None
    condition = func.lower(Agent.name).like(like_pattern(query.lower()), escape=LIKE_ESCAPE)
    agent_id = parse_id(query)  # models/parsing.py: only ids the column can hold
    if agent_id is not None:
        return condition | (Agent.id == agent_id)
    return condition


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
    Mechanic's grant of `user_id`'s on the agent). Ties break by id (names have none: they are
    unique), so pages are stable.
    """
    criteria: list[ColumnElement[bool]] = []
    condition = agent_search(query)
    if condition is not None:
        criteria.append(condition)
    filters = set(filters)
    if "over" in filters:
        criteria.append(Agent.core_tokens > Agent.core_token_budget)
    if "never" in filters:
        criteria.append(Agent.last_refinement_at.is_(None))
    if "grant" in filters and user_id is not None:
        criteria.append(
            select(MechanicGrant.id)
            .where(MechanicGrant.agent_id == Agent.id, *live_grants_of(user_id))
            .exists()
        )
    greatest = func.greatest if db.engine.dialect.name == "postgresql" else func.max
    keys: dict[str, OrderKey] = {
        "name": Agent.name,
        # a plain float division: SQLAlchemy's `/` would cast the divisor to NUMERIC, row by row
        "usage": cast(Agent.core_tokens, Float).op("/", return_type=Float)(
            greatest(Agent.core_token_budget, 1)
        ),
        "overage": Agent.core_tokens - Agent.core_token_budget,
        "last_refined": func.coalesce(Agent.last_refinement_at, datetime(1970, 1, 1)),
    }
    key = keys.get(sort, Agent.name)
    order = [key.desc() if descending else key.asc()]
    if key is not Agent.name:  # names are unique: the name index alone gives a total order
        order.append(Agent.id.desc() if descending else Agent.id.asc())
    return page_of(Agent, criteria, order, page, per_page)


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
    """The figures of these agents in one statement that never reads a memory row (the heap), only
    indexes and the agents' own rows, so its cost follows the page, not where the memories lie:

    - counts by type, active and soft-deleted: the (agent_id, memory_type, deleted_at, created_at)
      index holds every column they need (an index-only scan);
    - constitutional (locked) active memories: the partial index of migration 0014;
    - active core tokens and count: the totals the database triggers maintain on `agents`
      (migration 0005), the same figures the dashboard sorts by.

    Reading the rows instead would cost one heap page per memory (an agent's memories arrive interleaved
    with everyone else's): thousands of pages for one dashboard page (docs/reference/console.md,
    "Performance").
    """
    stats = {agent_id: MemoryStats() for agent_id in agent_ids}
    if not agent_ids:
        return stats
    ids = list(agent_ids)
    active = AgentMemory.deleted_at.is_(None)
    by_type = (
        select(
            literal("type").label("kind"),
            AgentMemory.agent_id.label("agent_id"),
            AgentMemory.memory_type.label("memory_type"),
            func.count().filter(active).label("n"),
            func.count().filter(AgentMemory.deleted_at.is_not(None)).label("m"),
        )
        .where(AgentMemory.agent_id.in_(ids))
        .group_by(AgentMemory.agent_id, AgentMemory.memory_type)
    )
    locked = (
        select(
            literal("locked"),
            AgentMemory.agent_id,
            null(),
            func.count(),
            literal(0),
        )
        .where(AgentMemory.agent_id.in_(ids), AgentMemory.constitutional, active)  # the partial index's terms
        .group_by(AgentMemory.agent_id)
    )
    core = select(literal("core"), Agent.id, null(), Agent.core_count, Agent.core_tokens).where(
        Agent.id.in_(ids)
    )
    rows: Sequence[Any] = db.session.execute(union_all(by_type, locked, core)).all()
    for kind, agent_id, memory_type, n, m in rows:
        entry = stats[agent_id]
        if kind == "type":
            if n:
                entry.by_type[memory_type] = int(n)
            entry.deleted += int(m)
        elif kind == "locked":
            entry.constitutional = int(n)
        else:
            entry.core_count, entry.core_tokens = int(n), int(m)
    for entry in stats.values():
        entry.by_type = {t: entry.by_type[t] for t in MEMORY_TYPES if t in entry.by_type}
    return stats
