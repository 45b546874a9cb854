"""The figures shown for an agent, on the dashboard (a page of agents) and on its own page."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from models import Agent, MechanicGrant, RefinementSession, utcnow
from models.readmodels.dashboard import MemoryStats, memory_stats
from models.readmodels.grants import active_grants_by_agent
from models.readmodels.sessions import latest_sessions
from models.readmodels.token_history import TokenSeries, session_marks, token_series
from models.refinement.due import IDLE_STATUSES, held_agents

from .history_cache import cached_histories
from .planning import NextRun, next_refinement, recurring_next_runs


@dataclass
class AgentRow:
    agent: Agent
    stats: MemoryStats
    last: RefinementSession | None
    series: TokenSeries | None  # None: not cached yet, the page fetches it after rendering
    next_run: NextRun
    grant: MechanicGrant | None
    held: bool = False  # the over-budget scan waits: the last session found nothing, no memory changed since

    @property
    def tokens(self) -> int:
        return self.stats.core_tokens

    @property
    def over(self) -> bool:
        return self.tokens > self.agent.core_token_budget

    @property
    def percent(self) -> int:
        """Usage as a percentage of the budget, not capped: 180 means 80% over."""
        return round(100 * self.tokens / max(self.agent.core_token_budget, 1))

    @property
    def overage(self) -> int:
        """Core tokens above the budget (0 when within it)."""
        return max(0, self.tokens - self.agent.core_token_budget)


def agent_rows(
    agents: list[Agent], user_id: int, now: datetime | None = None, *, build_histories: bool = True
) -> list[AgentRow]:
    """Everything the dashboard shows for a page of agents, in a handful of grouped queries.

    With `build_histories=False`, sparklines not in the cache are left out (series None) for the
    page to fetch in one request after it has rendered.
    """
    now = now or utcnow()
    ids = [a.id for a in agents]
    stats = memory_stats(ids)
    last = latest_sessions(ids)
    histories = cached_histories(ids, build=build_histories)
    marks = session_marks(ids)
    grants = active_grants_by_agent(user_id, ids)
    runs = recurring_next_runs()
    held = held_agents(
        [
            a.id
            for a in agents
            if stats[a.id].core_tokens > a.core_token_budget and _may_be_held(last.get(a.id))
        ]
    )
    return [
        AgentRow(
            agent=a,
            stats=stats[a.id],
            last=last.get(a.id),
            series=(
                token_series(stats[a.id].core_tokens, histories[a.id], marks.get(a.id, []), now)
                if a.id in histories
                else None
            ),
            next_run=next_refinement(
                a, stats[a.id].core_tokens, stats[a.id].core_count, last.get(a.id), runs, now, a.id in held
            ),
            grant=grants.get(a.id),
            held=a.id in held,
        )
        for a in agents
    ]


def _may_be_held(newest: RefinementSession | None) -> bool:
    """Whether the over-budget scan could be holding this agent back, judged from its newest session
    (the page has it already): `held_agents` holds only agents whose newest session finished idle
    (models/refinement/due.py, `idle_since_last_session`). Only those are asked, so a page whose
    over-budget agents all did work in their last session asks nothing; the rule stays in due.py."""
    return (
        newest is not None
        and newest.status in IDLE_STATUSES
        and newest.ops_count == 0
        and newest.finished_at is not None
    )


def sparkline_series(agents: list[Agent], now: datetime | None = None) -> dict[int, TokenSeries]:
    """Sparkline series for these agents, building (and caching) any history not cached yet."""
    now = now or utcnow()
    ids = [a.id for a in agents]
    stats = memory_stats(ids)
    histories = cached_histories(ids)
    marks = session_marks(ids)
    return {
        a.id: token_series(stats[a.id].core_tokens, histories[a.id], marks.get(a.id, []), now) for a in agents
    }
