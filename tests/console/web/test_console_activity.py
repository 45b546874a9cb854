"""the activity feed pages through every operation of every
agent exactly once, each operation whole, however the read window cuts the log; and its filters."""

from __future__ import annotations

import sqlalchemy as sa

from models import AuditLog, db
from models.changes.agent_settings import update_agent_settings
from models.changes.dedup import dedup_for_agent
from models.changes.mutations import create_memory
from models.readmodels import timeline as queries
from models.readmodels.timeline import TimelineFilters, activity


def _history(make_agent) -> None:
    for name in ("north", "south", "east"):
        agent = make_agent(name, core_token_budget=5000)
        for i in range(4):
            create_memory(agent.id, f"{name} note {i} about the quarterly plan.", actor="admin:seed")
        for _ in range(3):  # exact duplicates: one dedup operation with three records
            create_memory(agent.id, f"{name} note 0 about the quarterly plan.", actor="agent")
        dedup_for_agent(agent.id)
        update_agent_settings(agent.id, actor="admin:seed", core_token_budget=4000)
    db.session.commit()


def _walk(per_page: int, filters: TimelineFilters | None = None) -> list:
    seen, before = [], None
    for _ in range(200):
        page = activity(filters, before=before, per_page=per_page)
        seen.extend(page.ops)
        if page.next_before is None:
            return seen
        before = page.next_before
    raise AssertionError("the feed never ended")


def test_the_activity_feed_shows_every_operation_once_and_whole_whatever_the_window(
    app, make_agent, monkeypatch
):
    _history(make_agent)
    stored = dict(
        db.session.execute(sa.select(AuditLog.op_id, sa.func.count()).group_by(AuditLog.op_id)).all()
    )
    for window, per_page in ((2000, 50), (2000, 4), (3, 4), (2, 1)):
        monkeypatch.setattr(queries, "FEED_WINDOW", window)
        ops = _walk(per_page)
        assert len(ops) == len({op.op_id for op in ops}), (window, per_page)  # none twice
        assert {op.op_id: len(op.records) for op in ops} == stored, (window, per_page)
        newest = [max(r.id for r in op.records) for op in ops]
        assert newest == sorted(newest, reverse=True)  # newest first, across pages


def test_activity_filters_by_actor_action_and_dates(app, make_agent):
    _history(make_agent)
    admin = _walk(50, TimelineFilters(actor="admin"))
    assert admin and all(op.actor.startswith("admin:") for op in admin)
    dedups = _walk(50, TimelineFilters(action="dedup"))
    assert len(dedups) == 3 and all(len(op.records) == 3 for op in dedups)
    agent_only = _walk(50, TimelineFilters(actor="agent"))
    assert len(agent_only) == 9 and all(op.actor == "agent" for op in agent_only)
    first = db.session.scalar(sa.select(sa.func.min(AuditLog.created_at)))
    assert _walk(50, TimelineFilters(until=first.replace(year=first.year - 1))) == []
