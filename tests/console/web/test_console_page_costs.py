"""What keeps the console's pages within 100 ms at 10,000 agents / 1,000,000 memories
(docs/reference/console.md, "Performance"), checked where a regression shows without a large data set: the
dashboard's statements do not grow with the agents; its memory figures come from indexes and maintained totals
and still match the rows; a page counted from the far end is the page counted from the front; the timeline's
window walk picks the operations that grouping every record picks; the held-back flag survives the pre-filter
that spares the query."""

from __future__ import annotations

import itertools
import uuid
from collections import Counter
from datetime import timedelta

import pytest
import sqlalchemy as sa

from console.agents.overview import agent_rows
from jobs.refinement import run_refinement
from models import AgentMemory, AuditLog, db, utcnow
from models.changes.mutations import create_memory, soft_delete_memories
from models.readmodels import timeline as timeline_module
from models.readmodels.dashboard import DASHBOARD_SORTS, dashboard_agents, memory_stats
from models.readmodels.memories_list import MEMORY_SORTS, memory_page
from models.readmodels.timeline import TimelineFilters, timeline
from tests.browser.support import make_admin, signed_in


@pytest.fixture
def web(app, redis_conn):
    make_admin()
    return signed_in(app)


def _selects(web, url: str) -> list[str]:
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("SELECT"):
            statements.append(statement)

    sa.event.listen(db.engine, "before_cursor_execute", record)
    try:
        assert web.get(url).status_code == 200
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", record)
    return statements


def _agents_with_memories(make_agent, count: int, start: int = 0) -> list:
    agents = []
    for i in range(start, start + count):
        agent = make_agent(f"cost-{i:03d}", core_token_budget=10 if i % 3 == 0 else 5000)
        create_memory(agent.id, f"fact {i}: " + "x" * (40 + i), actor="admin:test", constitutional=i % 4 == 0)
        create_memory(agent.id, f"note {i}", actor="admin:test", memory_type="journal")
        agents.append(agent)
    db.session.commit()
    return agents


DASHBOARD_VIEWS = ("/", "/?sort=usage&dir=desc", "/?sort=overage&dir=desc&over=1", "/?q=cost-0", "/?never=1")


def test_dashboard_statements_do_not_grow_with_the_agents(web, make_agent):
    """One page of agents costs a fixed handful of statements (grouped over the page's ids), whether
    the console holds three agents or more than a page of them: no statement per agent."""
    _agents_with_memories(make_agent, 3)
    few = {url: len(_selects(web, url)) for url in DASHBOARD_VIEWS}
    _agents_with_memories(make_agent, 60, start=3)
    many = {url: len(_selects(web, url)) for url in DASHBOARD_VIEWS}
    assert many == few
    assert max(many.values()) <= 9  # sign-in, count, page, figures, sessions, versions, marks, grants


def test_memory_figures_read_from_indexes_match_the_rows(app, make_agent):
    agents = _agents_with_memories(make_agent, 4)
    first = agents[0]
    extra = [create_memory(first.id, f"core {i} " + "y" * 30, actor="admin:test") for i in range(3)]
    create_memory(first.id, "an episode", actor="admin:test", memory_type="episodic")
    soft_delete_memories(first.id, [extra[0].id, extra[1].id], actor="admin:test")
    db.session.commit()
    stats = memory_stats([a.id for a in agents] + [10**6])  # an id with no agent: zeros
    for agent in agents:
        rows = db.session.scalars(sa.select(AgentMemory).where(AgentMemory.agent_id == agent.id)).all()
        active = [m for m in rows if m.deleted_at is None]
        core = [m for m in active if m.memory_type == "core"]
        figures = stats[agent.id]
        assert figures.by_type == dict(Counter(m.memory_type for m in active)) and figures.active == len(
            active
        )
        assert list(figures.by_type) == [t for t in ("core", "journal", "episodic") if t in figures.by_type]
        assert (figures.core_tokens, figures.core_count) == (sum(m.token_estimate for m in core), len(core))
        assert figures.constitutional == sum(m.constitutional for m in active)
        assert figures.deleted == len(rows) - len(active)
    assert stats[first.id].deleted == 2 and stats[first.id].constitutional == 1
    assert stats[10**6].active == 0 and stats[10**6].core_tokens == 0


def _all_pages(fetch, per_page: int) -> list[int]:
    ids: list[int] = []
    for page in itertools.count(1):
        rows, total = fetch(page, per_page)
        if not rows:
            break
        ids.extend(r.id for r in rows)
    assert len(ids) == total and len(set(ids)) == total
    return ids


def test_dashboard_pages_counted_from_either_end_are_one_sort_of_every_agent(app, make_agent):
    """Pages in the second half are read in the reversed order from the far end: put together, the
    pages are exactly the one-page answer, for every sort, direction and filter (ties by id)."""
    now = utcnow()
    for i in range(23):
        # budgets and sizes repeat, so usage, overage and last refinement all have ties
        agent = make_agent(f"end-{(i * 7) % 23:02d}", core_token_budget=(100, 200, 0)[i % 3])
        agent.last_refinement_at = None if i % 4 == 0 else now - timedelta(days=i % 5)
        create_memory(agent.id, "z" * (40 * (i % 4) + 4), actor="admin:test")
    db.session.commit()
    for sort, descending, filters in itertools.product(DASHBOARD_SORTS, (False, True), ((), ("over",))):

        def fetch(page, per_page, sort=sort, descending=descending, filters=filters):
            return dashboard_agents(None, page, per_page, sort=sort, descending=descending, filters=filters)

        whole, total = fetch(1, 100)
        assert total == len(whole) and total >= 5
        assert _all_pages(fetch, 2) == _all_pages(fetch, 5) == [a.id for a in whole], (sort, descending)
    names = [a.name for a in dashboard_agents(None, 1, 100, sort="name", descending=True)[0]]
    assert names == sorted(names, reverse=True)
    usage = [
        a.core_tokens / max(a.core_token_budget, 1) for a in dashboard_agents(None, 1, 100, sort="usage")[0]
    ]
    assert usage == sorted(usage)


def test_memory_pages_counted_from_either_end_are_one_sort(app, make_agent):
    agent = make_agent()
    for i in range(17):
        create_memory(agent.id, f"memory {i} " + "w" * (8 * (i % 3)), actor="admin:test")
    db.session.commit()
    for sort, descending in itertools.product(MEMORY_SORTS, (False, True)):

        def fetch(page, per_page, sort=sort, descending=descending):
            return memory_page(agent.id, sort=sort, descending=descending, page=page, per_page=per_page)

        whole, _ = fetch(1, 100)
        assert _all_pages(fetch, 3) == [m.id for m in whole], (sort, descending)


def _interleaved_history(agent_id: int) -> None:
    """Operations whose records interleave, so some straddle any page boundary, two actions."""
    ops = [str(uuid.uuid4()) for _ in range(9)]
    pattern = [0, 1, 0, 2, 3, 1, 4, 5, 5, 5, 6, 2, 7, 8, 3, 8, 6, 0]
    at = utcnow() - timedelta(hours=1)
    for n, op in enumerate(pattern):
        db.session.add(
            AuditLog(
                agent_id=agent_id,
                memory_id=None,
                op_id=ops[op],
                actor="agent" if op % 2 else "admin:1",
                action="update" if n % 3 else "link",
                data={},
                created_at=at + timedelta(seconds=n),
            )
        )
    db.session.commit()


def _walk(per_page: int, **kwargs) -> list[tuple[list[str], int | None]]:
    pages, before = [], None
    while True:
        page = timeline(per_page=per_page, before=before, **kwargs)
        pages.append(([op.op_id for op in page.ops], page.next_before))
        if page.next_before is None:
            return pages
        before = page.next_before


@pytest.mark.parametrize("window", [1, 3, 5, 400])
def test_the_timeline_window_picks_what_grouping_every_record_picks(app, make_agent, monkeypatch, window):
    agent = make_agent()
    _interleaved_history(agent.id)
    views = [
        {"agent_id": agent.id},
        {"agent_id": agent.id, "filters": TimelineFilters(action="update")},
        {"agent_id": agent.id, "filters": TimelineFilters(actor="admin")},
    ]
    expected = {}
    with monkeypatch.context() as grouped_only:
        grouped_only.setattr(timeline_module, "_newest_ops_in_window", lambda *args: None)
        for n, view in enumerate(views):
            for per_page in (1, 2, 4, 50):
                expected[n, per_page] = _walk(per_page, **view)
    monkeypatch.setattr(timeline_module, "TIMELINE_WINDOW", window)
    for n, view in enumerate(views):
        for per_page in (1, 2, 4, 50):
            assert _walk(per_page, **view) == expected[n, per_page], (view, per_page)
    # every operation appears once, on the page of its newest record
    shown = [op for ops, _ in expected[0, 2] for op in ops]
    assert len(shown) == len(set(shown)) == 9


def test_a_held_agent_is_flagged_on_the_dashboard_and_a_busy_one_is_not(app, make_agent, redis_conn):
    """`agent_rows` asks `held_agents` only about agents whose newest session finished idle."""
    agents = {}
    for name, variants in (("idle", False), ("busy", True)):
        agent = make_agent(name, core_token_budget=100)
        for i in range(12):
            create_memory(agent.id, f"{name} fact {i}: review {i} is on day {i + 3}.", actor="admin:seed")
        create_memory(agent.id, f"{name} fact 0: review 0 is on day 3.", actor="admin:seed")
        if variants:
            create_memory(agent.id, f"{name} FACT 1: review 1 is on day 4!", actor="admin:seed")
        db.session.commit()
        agents[name] = agent
    assert run_refinement(agents["idle"].id, "over_budget", force=True)["ops"] == 0
    assert run_refinement(agents["busy"].id, "over_budget", force=True)["ops"] == 1
    db.session.commit()
    rows = {
        row.agent.name: row for row in agent_rows(list(agents.values()), user_id=1, build_histories=False)
    }
    assert rows["idle"].held and not rows["busy"].held
