"""The jobs page tells each recurring job's last run (when, how long, how it ended, a link to what it
changed; a failure's error type with a requeue), and the events view counts operational events by op,
node and status and over time, under filters kept in the URL."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import sqlalchemy as sa
from rq import SimpleWorker

from console.workers.last_runs import figures
from infra.queues import get_rq
from models import RefinementSession, db, utcnow
from models.changes.mutations import create_memory
from models.history.events import OpEvent
from tests.browser.support import make_admin, post, signed_in
from tests.job_fixtures import explode


@pytest.fixture
def web(app, redis_conn):
    make_admin()
    return signed_in(app)


def _row(html: str, name: str) -> str:
    match = re.search(rf'<tr data-recurring="{name}">.*?</tr>', html, re.S)
    assert match, f"no row for {name}"
    return match.group(0)


def test_a_recurring_job_run_by_hand_shows_when_how_long_its_result_and_what_it_changed(
    web, make_agent, redis_conn
):
    agent = make_agent("heavy", core_token_budget=100)
    for i in range(12):
        create_memory(agent.id, f"heavy fact {i}: the review {i} is on day {i + 2}.", actor="admin:seed")
    db.session.commit()
    assert "not run yet" in _row(web.get("/jobs").text, "over-budget-scan")

    assert post(web, "/jobs/recurring/over-budget-scan/run").status_code in (204, 303)
    SimpleWorker(["default"], connection=redis_conn).work(burst=True)
    row = _row(web.get("/jobs").text, "over-budget-scan")
    assert "took " in row and "run by hand" in row and 'class="badge s-ok">done' in row
    assert re.search(r"over budget\s+1\b", row), row  # the scan's own counts, not its words
    session = db.session.scalar(sa.select(RefinementSession.id).where(RefinementSession.agent_id == agent.id))
    assert f'href="/sessions/{session}"' in row  # the session it queued, linked
    link = re.search(r'<a class="changes" href="([^"]+)"', row).group(1)
    assert link.startswith("/activity?") and "since=" in link and "until=" in link
    assert web.get(link.replace("&amp;", "&")).status_code == 200


def test_a_failed_recurring_run_shows_its_error_type_never_its_message_and_can_be_requeued(web, redis_conn):
    # The scheduler runs a recurring job under its fixed id; a run that raises is recorded under it.
    get_rq().enqueue(
        explode, "the secret text of a memory", queue="maintenance", job_id="recurring-dedup-nightly"
    )
    SimpleWorker(["maintenance"], connection=redis_conn).work(burst=True)
    row = _row(web.get("/jobs").text, "dedup-nightly")
    assert "JobExploded" in row and "secret" not in row
    assert "/jobs/failed/recurring-dedup-nightly/requeue" in row
    assert post(web, "/jobs/failed/recurring-dedup-nightly/requeue").status_code in (204, 303)
    assert get_rq().queue("maintenance").count == 1


def test_only_counts_of_code_named_keys_are_read_from_a_job_result():
    assert figures({"over_budget": [1, 2], "queued": 2, "note": "a memory's words", "Bad Key": 3}) == [
        ("over budget", 2),
        ("queued", 2),
    ]
    assert figures("a memory's words") == [] and figures({"flag": True}) == []


def _event(agent_id: int, op: str, node: str, status: str, ago: timedelta) -> OpEvent:
    return OpEvent(agent_id=agent_id, op=op, node=node, status=status, ts=utcnow() - ago)


def test_the_events_view_counts_by_op_node_status_and_day_under_its_filters(web, make_agent):
    ada, bo = make_agent("ada"), make_agent("bo")
    db.session.add_all(
        [
            _event(ada.id, "search", "hotpath", "ok", timedelta(hours=1)),
            _event(ada.id, "search", "hotpath", "ok", timedelta(hours=2)),
            _event(ada.id, "create", "hotpath", "error", timedelta(days=2)),
            _event(bo.id, "merge", "worker", "ok", timedelta(days=3)),
            _event(bo.id, "merge", "worker", "ok", timedelta(days=20)),
        ]
    )
    db.session.commit()
    page = web.get("/events").text  # the last 7 days by default
    assert '<strong class="event-total">4</strong>' in page
    assert re.search(r'data-op="search">.*?<span class="count">2<', page, re.S)
    assert re.search(r'data-node="worker">.*?<span class="count">1<', page, re.S)
    assert re.search(r'data-status="error">.*?<span class="count">1<', page, re.S)
    assert page.count('class="event-bar"') == 8  # a bar per day of the window, today's included

    month = web.get(f"/events?window=30d&agent={bo.id}").text
    assert '<strong class="event-total">2</strong>' in month
    errors = web.get("/events?status=error&node=hotpath").text
    assert '<strong class="event-total">1</strong>' in errors
    day = web.get("/events?window=24h", headers={"HX-Request": "true"}).text
    assert (
        day.lstrip().startswith('<div id="event-counts">') and '<strong class="event-total">2</strong>' in day
    )
    assert day.count('class="event-bar"') == 25

    # Values that are not choices are ignored, never an error page.
    odd = web.get("/events?window=forever&agent=x&node=moon&op=%27;drop&status=maybe")
    assert odd.status_code == 200 and '<strong class="event-total">4</strong>' in odd.text
