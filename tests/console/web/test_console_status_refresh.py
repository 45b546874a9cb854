"""The console says what is true now, and every action re-sends the panels it changed.

A rolled-back session reads "rolled back" (by whom, when, a link) everywhere it is listed and offers to
undo the rollback instead of rolling back again; the answers to a rollback, a settings save, a lock and a
finished refinement carry the changed panels as htmx out-of-band swaps with the new figures.
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from rq import SimpleWorker

from jobs.refinement import run_refinement
from models import AgentMemory, AuditLog, RefinementSession, db
from models.changes.mutations import create_memory
from models.changes.timemachine import rollback_operation, rollback_session
from models.readmodels.sessions import session_statuses
from tests.browser.support import ADMIN_EMAIL, fresh


def _refined_agent(make_agent, name: str = "rolled"):
    """An agent over budget whose offline refinement merges one same-fact pair (one operation)."""
    agent = make_agent(name, core_token_budget=100)
    for i in range(12):
        create_memory(agent.id, f"{name} fact {i}: review {i} is on day {i + 3}.", actor="admin:seed")
    create_memory(agent.id, f"{name} FACT 1: review 1 is on day 4!", actor="admin:seed")
    db.session.commit()
    session_id = run_refinement(agent.id, "console", force=True)["session_id"]
    db.session.commit()
    session = db.session.get(RefinementSession, session_id)
    assert session.status == "completed" and session.ops_count == 1
    return agent, session


def _oob(html: str, element_id: str) -> str:
    """The out-of-band element with this id in an htmx answer (its opening tag to its section's end)."""
    match = re.search(rf'<(\w+)[^>]* id="{element_id}"[^>]*hx-swap-oob="true"[^>]*>.*?</\1>', html, re.S)
    assert match, f"no out-of-band #{element_id} in the answer"
    return match.group(0)


def _on(url: str) -> dict:
    return {"HX-Current-URL": "http://localhost" + url}


def post(client, url: str, data: dict | None = None, headers: dict | None = None):
    """A POST as the page's htmx sends it: the CSRF token in a header, and the page it came from."""
    sent = {"X-CSRFToken": client.csrf, "HX-Request": "true", **(headers or {})}
    return client.post(url, data=data or {}, headers=sent)


def test_a_rolled_back_session_says_rolled_back_by_whom_and_offers_to_undo_the_rollback(web, make_agent):
    agent, session = _refined_agent(make_agent)
    tokens_after_session = agent.core_tokens
    answer = post(web, f"/rollback/session/{session.id}", headers=_on(f"/agents/{agent.id}"))
    assert answer.status_code == 200, answer.text[:300]
    fresh()
    db.session.refresh(agent)
    assert agent.core_tokens > tokens_after_session  # the merge is undone
    rollback_op = db.session.scalar(
        sa.select(AuditLog.op_id).where(AuditLog.agent_id == agent.id, AuditLog.action == "rollback")
    )

    # The answer closes the dialog and re-sends the sessions list and the figures, out of band.
    assert '<div id="confirm"></div>' in answer.text
    sessions = _oob(answer.text, "sessions")
    row = re.search(rf'<tr data-session-id="{session.id}" data-status="(\w+)">.*?</tr>', sessions, re.S)
    assert row.group(1) == "rolled_back" and ADMIN_EMAIL in row.group(0)
    assert f"#op-{rollback_op}" in row.group(0) and "Undo the rollback…" in row.group(0)
    assert "Roll back…" not in row.group(0)
    summary = _oob(answer.text, "agent-summary")
    assert f'<span class="big tokens">{agent.core_tokens:,}</span>' in summary
    assert "rolled back" in _oob(answer.text, "notice").lower()

    # Every page that lists the session says the same, and none offers to roll it back again.
    for url in ("/", f"/agents/{agent.id}", f"/sessions/{session.id}"):
        html = web.get(url).text
        assert 'data-status="rolled_back"' in html, url
        assert "Roll back this session…" not in html and f"/rollback/session/{session.id}" not in html, url
    page = web.get(f"/sessions/{session.id}").text
    assert ADMIN_EMAIL in page and f"/rollback/op/{rollback_op}" in page and "Undo the rollback…" in page
    assert "made 1 operation" in page  # what the session did is still told, after the rollback


def test_undoing_the_rollback_through_the_time_machine_makes_the_session_completed_again(web, make_agent):
    agent, session = _refined_agent(make_agent, "undone")
    post(web, f"/rollback/session/{session.id}", headers=_on(f"/sessions/{session.id}"))
    fresh()
    rollback_op = db.session.scalar(
        sa.select(AuditLog.op_id).where(AuditLog.agent_id == agent.id, AuditLog.action == "rollback")
    )
    dialog = web.get(f"/rollback/op/{rollback_op}", headers={"HX-Request": "true"}).text
    title = re.search(r'<h2 id="confirm-title">(.*?)</h2>', dialog).group(1)
    assert title.startswith("Undo the rollback of") and rollback_op[:8] not in title  # when, not a hash

    answer = post(web, f"/rollback/op/{rollback_op}", headers=_on(f"/sessions/{session.id}"))
    assert answer.status_code == 200
    card = _oob(answer.text, "session-card")
    assert 'data-status="completed"' in card and "Roll back this session…" in card
    assert _oob(answer.text, "timeline-card")
    fresh()
    db.session.refresh(agent)
    merged_away = db.session.scalar(
        sa.select(sa.func.count())
        .select_from(AgentMemory)
        .where(AgentMemory.agent_id == agent.id, AgentMemory.deleted_at.is_not(None))
    )
    assert merged_away >= 1  # the session's merge is back in force
    assert 'data-status="rolled_back"' not in web.get("/").text


def test_saving_a_budget_re_sends_the_usage_figures_with_the_new_budget(web, make_agent):
    agent = make_agent("budgeted", core_token_budget=1600)
    create_memory(agent.id, "budgeted fact: the review is on Tuesday with four people.", actor="admin:seed")
    db.session.commit()
    answer = post(
        web, f"/agents/{agent.id}/settings", {"core_token_budget": "1500", "min_retention_percent": "80"}
    )
    assert answer.status_code == 200 and "Saved" in answer.text
    summary = _oob(answer.text, "agent-summary")
    assert "of 1,500 tokens" in summary and "1,600" not in summary
    # Nothing changed: nothing to refresh.
    again = post(
        web, f"/agents/{agent.id}/settings", {"core_token_budget": "1500", "min_retention_percent": "80"}
    )
    assert "Nothing changed" in again.text and 'id="agent-summary"' not in again.text


def test_locking_a_memory_re_sends_the_memory_figures_with_the_new_locked_count(web, make_agent):
    agent = make_agent("locker")
    memory = create_memory(agent.id, "locker fact: the door code changes monthly.", actor="admin:seed")
    db.session.commit()
    page = web.get(f"/agents/{agent.id}/memories").text
    assert re.search(r'class="locked-count"[^>]*>0 locked<', page)
    answer = post(web, f"/agents/{agent.id}/memories/{memory.id}/constitutional", {"value": "true"})
    assert answer.status_code == 200
    assert f'<tr id="memory-{memory.id}"' in answer.text
    assert re.search(r'class="locked-count"[^>]*>1 locked<', _oob(answer.text, "memory-figures"))


def test_a_finished_refinement_re_sends_figures_sessions_and_storage_to_the_agent_page(
    app, web, make_agent, redis_conn
):
    agent = make_agent("refined", core_token_budget=100)
    for i in range(6):
        create_memory(agent.id, f"refined fact {i}: the launch {i} is on day {i + 1}.", actor="admin:seed")
    create_memory(agent.id, "refined FACT 1: the launch 1 is on day 2!", actor="admin:seed")
    db.session.commit()
    before = agent.core_tokens
    queued = post(web, f"/agents/{agent.id}/refine", headers=_on(f"/agents/{agent.id}"))
    assert queued.status_code == 200
    session_id = int(re.search(r'data-session-id="(\d+)"', queued.text).group(1))
    assert f'data-session-id="{session_id}" data-status="queued"' in _oob(queued.text, "sessions")

    SimpleWorker(["interactive"], connection=redis_conn).work(burst=True)
    fresh()
    db.session.refresh(agent)
    assert agent.core_tokens < before
    done = web.get(
        f"/sessions/{session_id}/progress", headers={"HX-Request": "true", **_on(f"/agents/{agent.id}")}
    )
    assert done.headers.get("HX-Trigger") == "refinement-finished"
    summary = _oob(done.text, "agent-summary")
    assert f'<span class="big tokens">{agent.core_tokens:,}</span>' in summary
    assert f'data-session-id="{session_id}" data-status="completed"' in _oob(done.text, "sessions")
    storage = _oob(done.text, "agent-quotas")
    active = db.session.scalar(
        sa.select(sa.func.count())
        .select_from(AgentMemory)
        .where(AgentMemory.agent_id == agent.id, AgentMemory.deleted_at.is_(None))
    )
    assert f"{active:,} of " in storage
    # Polled from another page, the agent page's panels are not sent; on the session's own page, whose
    # card, figures and timeline all changed, the page reloads.
    elsewhere = web.get(
        f"/sessions/{session_id}/progress", headers={"HX-Request": "true", **_on("/activity")}
    )
    assert "hx-swap-oob" not in elsewhere.text and "HX-Refresh" not in elsewhere.headers
    own = web.get(
        f"/sessions/{session_id}/progress", headers={"HX-Request": "true", **_on(f"/sessions/{session_id}")}
    )
    assert own.headers.get("HX-Refresh") == "true"


def test_a_sessions_status_follows_a_chain_of_rollbacks_and_their_undoing(app, admin, make_agent):
    agent, session = _refined_agent(make_agent, "chained")
    other, untouched = _refined_agent(make_agent, "neighbour")
    assert session_statuses([session])[session.id].code == "completed"
    first = rollback_session(session.id, actor=admin.actor).op_id
    state = session_statuses([session, untouched])
    assert state[session.id].rolled_back and state[session.id].rollback.op_id == first
    assert state[session.id].by == ADMIN_EMAIL
    assert state[untouched.id].code == "completed"  # another agent's session is not touched
    undo = rollback_operation(first, actor="system:test").op_id  # the rollback undone: completed again
    assert session_statuses([session])[session.id].code == "completed"
    rollback_operation(undo, actor="system:test")  # the undoing undone: rolled back by the first again
    again = session_statuses([session])[session.id]
    assert again.rolled_back and again.rollback.op_id == first
