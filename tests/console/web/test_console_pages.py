"""The console's pages through the Flask test client: access, the dashboard, the agent page, memories,
refinement progress, timelines, rollback and the jobs page."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import sqlalchemy as sa
from rq import SimpleWorker

from console.agents.planning import next_refinement
from console.workers.board import exception_type
from models import AgentMemory, AuditLog, RefinementSession, db, utcnow
from models.changes.mutations import soft_delete_memories, update_memory
from models.readmodels.token_history import core_token_series
from tests.browser.support import client_for, make_admin, post, signed_in
from tests.job_fixtures import explode


def _get_rules(app):
    for rule in app.url_map.iter_rules():
        if "GET" in rule.methods and rule.endpoint != "static" and not rule.rule.startswith("/api/"):
            yield rule


def test_every_console_page_sends_a_signed_out_visitor_to_sign_in(app):
    client = client_for(app)
    for rule in _get_rules(app):
        if rule.endpoint in ("auth.login", "auth.login_code", "healthz", "readyz"):  # public by design
            continue
        url = re.sub(r"<(?:int:)?(\w+)>", "1", rule.rule)
        response = client.get(url)
        assert response.status_code == 302 and "/login" in response.headers["Location"], rule.rule
        fragment = client.get(url, headers={"HX-Request": "true"})
        assert fragment.status_code == 401 and "/login" in fragment.headers["HX-Redirect"], rule.rule


def test_sign_in_refuses_a_wrong_password_then_signs_in_and_out(app, admin):
    client = client_for(app)
    page = client.get("/login")
    token = re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)
    wrong = client.post(
        "/login", data={"email": admin.email, "password": "not the password", "csrf_token": token}
    )
    assert wrong.status_code == 401 and "Wrong email or password" in wrong.text
    right = client.post(
        "/login?next=/jobs",
        data={"email": admin.email, "password": "correct horse battery staple", "csrf_token": token},
    )
    assert right.status_code == 302 and right.headers["Location"] == "/jobs"
    cookie = client.get_cookie("session")
    assert cookie.http_only and cookie.same_site == "Lax"
    # Signing in starts a fresh session: the token from before no longer works.
    assert client.post("/logout", data={"csrf_token": token}).status_code == 400
    fresh = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/jobs").text).group(1)
    out = client.post("/logout", data={"csrf_token": fresh})
    assert out.status_code == 302 and out.headers["Location"] == "/login"
    assert client.get("/").status_code == 302


def test_open_redirects_after_sign_in_are_refused(app, admin):
    client = client_for(app)
    token = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/login").text).group(1)
    response = client.post(
        "/login?next=//evil.example/x",
        data={"email": admin.email, "password": "correct horse battery staple", "csrf_token": token},
    )
    assert response.headers["Location"] == "/"


def test_a_signed_in_user_who_is_not_an_admin_gets_a_clear_403(app, admin):
    user = make_admin("viewer@example.com")
    client = signed_in(app, "viewer@example.com")
    user.is_admin = False  # demoted while signed in
    db.session.commit()
    forbidden = client.get("/")
    assert (
        forbidden.status_code == 403 and "Not allowed" in forbidden.text and "site admins" in forbidden.text
    )
    # ... and the sign-in form refuses non-admins outright.
    fresh = client_for(app)
    token = re.search(r'name="csrf-token" content="([^"]+)"', fresh.get("/login").text).group(1)
    refused = fresh.post(
        "/login", data={"email": user.email, "password": "correct horse battery staple", "csrf_token": token}
    )
    assert refused.status_code == 401


def test_unknown_ids_get_a_clear_404_page(web):
    for url in (
        "/agents/999",
        "/agents/999/memories",
        "/sessions/999",
        "/rollback/op/deadbeef-0000",
        "/mechanic/grants/9",
    ):
        response = web.get(url)
        assert response.status_code == 404 and "Not found" in response.text, url


def test_pages_carry_security_headers_and_vary_on_hx_request(web, make_agent):
    agent = make_agent()
    page = web.get(f"/agents/{agent.id}")
    fragment = web.get(f"/agents/{agent.id}/summary", headers={"HX-Request": "true"})
    assert "HX-Request" in page.headers["Vary"] and "HX-Request" in fragment.headers["Vary"]
    assert page.headers["Cache-Control"] == "no-store"
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.text.startswith("<!doctype html>") and '<body hx-headers=\'{"X-CSRFToken": "' in page.text
    assert "<html" not in fragment.text and 'id="agent-summary"' in fragment.text
    assert "htmx.min.js" in page.text


# ----- the dashboard -----


def test_dashboard_shows_usage_against_budget_counts_by_type_and_flags(web, make_agent, make_memory):
    lean = make_agent("lean", core_token_budget=1000)
    heavy = make_agent("heavy", core_token_budget=100)
    make_memory(lean, "x" * 40)
    for i in range(3):
        make_memory(heavy, f"{i} " + "y" * 200, constitutional=i == 0)
    make_memory(heavy, "a journal entry", memory_type="journal")
    html = web.get("/").text
    rows = {
        m.group(1): m.group(0)
        for m in re.finditer(
            r'<tr class="[^"]*" data-agent-id="\d+">\s*<td class="agent">\s*<a[^>]*><strong>(\w+)</strong>.*?</tr>',
            html,
            re.S,
        )
    }
    assert set(rows) == {"lean", "heavy"}
    assert "over budget" not in rows["lean"] and "needs refinement" not in rows["lean"]
    assert '<span class="tokens">10</span> / 1,000' in rows["lean"]
    assert "over budget" in rows["heavy"] and "needs refinement" in rows["heavy"]
    assert '<span class="tokens">153</span> / 100' in rows["heavy"]
    assert "core <b>3</b>" in rows["heavy"] and "journal <b>1</b>" in rows["heavy"]
    assert re.search(r'class="num constitutional">1<', rows["heavy"])
    # Sparklines not cached yet come after the page, in one request, swapped into their cells...
    assert "<svg" not in rows["heavy"] and f'id="spark-{heavy.id}"' in rows["heavy"]
    loader = re.search(
        r'hx-get="(/agents/sparklines\?ids=[^"]+)" hx-trigger="load" hx-swap="none"', html
    ).group(1)
    fragment = web.get(loader.replace("%2C", ","), headers={"HX-Request": "true"}).text
    assert f'<span id="spark-{heavy.id}" hx-swap-oob="true"><svg' in fragment and "<html" not in fragment
    # ... and are cached from then on, so the next render has them inline.
    again = web.get("/").text
    assert "/agents/sparklines" not in again and again.count('<svg class="spark"') == 2


def test_dashboard_pages_and_searches_by_name(web, make_agent):
    for i in range(120):
        make_agent(f"bulk-{i:03d}")
    make_agent("zebra")
    first = web.get("/").text
    assert "121 agents" in first and "Page 1 of 3" in first and "bulk-000" in first and "zebra" not in first
    last = web.get("/?page=3").text
    assert "zebra" in last and "bulk-000" not in last
    beyond = web.get("/?page=99").text
    assert "Page 3 of 3" in beyond
    found = web.get("/?q=ZEB", headers={"HX-Request": "true"})
    assert 'id="agents-table"' in found.text and "zebra" in found.text and "bulk-" not in found.text
    assert "<html" not in found.text
    assert "1 agent matching" in found.text
    assert "No agent matches" in web.get("/?q=%25_").text


def test_next_run_forecast_follows_the_trigger_rules(make_agent):
    now = utcnow().replace(microsecond=0)
    runs = {"refinement-sweep": now + timedelta(days=2), "over-budget-scan": now + timedelta(minutes=7)}
    agent = make_agent(core_token_budget=100)
    assert next_refinement(agent, 50, 3, None, runs, now).label == "weekly sweep"
    over = next_refinement(agent, 500, 3, None, runs, now)
    assert (over.at, over.label) == (runs["over-budget-scan"], "over-budget scan")
    recent = RefinementSession(
        agent_id=agent.id, trigger="t", status="consent_declined", started_at=now - timedelta(hours=1)
    )
    cooled = next_refinement(agent, 500, 3, recent, runs, now)
    assert (
        cooled.at >= now + timedelta(hours=23)
        and cooled.at.minute % 15 == 0
        or cooled.label == "weekly sweep"
    )
    agent.last_refinement_at = now
    later = next_refinement(agent, 50, 3, None, runs, now)
    assert later.at >= now + timedelta(weeks=1) and later.at.weekday() == 0 and later.at.hour == 4
    assert next_refinement(agent, 0, 0, None, runs, now).label == "nothing to refine"
    assert next_refinement(agent, 50, 3, None, None, now).label == "scheduler unreachable"
    queued = RefinementSession(agent_id=agent.id, trigger="t", status="queued", started_at=now)
    assert next_refinement(agent, 50, 3, queued, runs, now).label == "queued now"


def test_sparkline_series_walks_back_from_todays_figure(make_agent, make_memory):
    agent = make_agent()
    first = make_memory(agent, "a" * 40)  # +10
    make_memory(agent, "b" * 80)  # +20
    make_memory(agent, "journal text", memory_type="journal")  # 0: not core
    soft_delete_memories(agent.id, [first.id], actor="admin:1")  # -10
    series = core_token_series({agent.id: agent.core_token_usage})[agent.id]
    assert [v for _, v in series.points] == [0, 10, 30, 20, 20]


# ----- the agent page -----


def test_settings_change_is_audited_with_the_admins_id_and_bad_input_changes_nothing(web, admin, make_agent):
    agent = make_agent(core_token_budget=5000)
    saved = post(
        web, f"/agents/{agent.id}/settings", {"core_token_budget": "7,500", "min_retention_percent": "80"}
    )
    assert (
        saved.status_code == 200
        and 'id="agent-settings"' in saved.text
        and "Saved: core token budget" in saved.text
    )
    db.session.refresh(agent)
    assert agent.core_token_budget == 7500 and agent.min_retention == pytest.approx(0.8)
    record = db.session.scalar(sa.select(AuditLog).where(AuditLog.action == "agent_settings"))
    assert record.actor == f"admin:{admin.id}" and record.data["after"] == {"core_token_budget": 7500}
    for bad in ({"core_token_budget": "lots"}, {"core_token_budget": "5"}, {"min_retention_percent": "0"}):
        refused = post(web, f"/agents/{agent.id}/settings", bad)
        assert refused.status_code == 422 and "inline-error" in refused.text
    db.session.refresh(agent)
    assert agent.core_token_budget == 7500
    assert (
        db.session.scalar(
            sa.select(sa.func.count()).select_from(AuditLog).where(AuditLog.action == "agent_settings")
        )
        == 1
    )


def test_trigger_refinement_queues_a_session_and_the_widget_polls_until_it_finishes(
    app, web, make_agent, make_memory, redis_conn
):
    agent = make_agent()
    for i, variant in enumerate(
        ("The team meets on Mondays.", "the team meets on Mondays!", "The team meets on Mondays")
    ):
        make_memory(agent, variant)  # the same fact, three hashes: dedup leaves them to the offline refiner
        make_memory(agent, f"Distinct fact number {i} about the roadmap.")
    widget = post(web, f"/agents/{agent.id}/refine")
    assert widget.status_code == 200 and 'id="refinement"' in widget.text
    session = db.session.scalar(sa.select(RefinementSession).where(RefinementSession.agent_id == agent.id))
    assert session.status == "queued" and session.job_id
    assert 'hx-trigger="load delay:1s"' in widget.text and "queued" in widget.text
    again = post(web, f"/agents/{agent.id}/refine")  # not queued twice
    assert (
        db.session.scalar(sa.select(sa.func.count()).select_from(RefinementSession)) == 1
        and again.status_code == 200
    )

    polling = web.get(f"/sessions/{session.id}/progress", headers={"HX-Request": "true"})
    assert "hx-trigger" in polling.text and "HX-Trigger" not in polling.headers

    SimpleWorker([app.extensions["rq"].queue("interactive")], connection=redis_conn).work(burst=True)
    db.session.expire_all()
    done = web.get(f"/sessions/{session.id}/progress", headers={"HX-Request": "true"})
    assert done.headers["HX-Trigger"] == "refinement-finished"
    assert "hx-trigger" not in done.text and "completed" in done.text
    assert re.search(r'class="ops">1<', done.text)  # one consolidation of the three variants
    sessions = web.get(f"/agents/{agent.id}/sessions", headers={"HX-Request": "true"}).text
    assert f'data-session-id="{session.id}"' in sessions and "offline" in sessions


# ----- memories -----


def test_memories_page_lists_metadata_and_never_reads_the_content_column(app, web, make_agent, make_memory):
    agent = make_agent()
    memory = make_memory(agent, "secret words", tags=["travel"], category="profile")
    gone = make_memory(agent, "more secret words")
    soft_delete_memories(agent.id, [gone.id], actor="admin:1")
    statements = []

    def record(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    sa.event.listen(db.engine, "before_cursor_execute", record)
    try:
        html = web.get(f"/agents/{agent.id}/memories").text
        deleted = web.get(f"/agents/{agent.id}/memories?state=deleted").text
        web.get("/")
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", record)
    assert f'id="memory-{memory.id}"' in html and f'id="memory-{gone.id}"' not in html
    assert "travel" in html and "profile" in html and memory.content_hash[:12] in html
    assert f'id="memory-{gone.id}"' in deleted
    assert "secret" not in html and "secret" not in deleted
    selected = [s for s in statements if "agent_memories" in s and s.lstrip().upper().startswith("SELECT")]
    assert selected and not [
        s for s in selected if "agent_memories.content," in s or "agent_memories.content " in s
    ]


def test_constitutional_toggle_is_audited_with_the_admins_id(web, admin, make_agent, make_memory):
    agent = make_agent()
    memory = make_memory(agent, "Never share the user's address.")
    on = post(web, f"/agents/{agent.id}/memories/{memory.id}/constitutional", {"value": "true"})
    assert (
        on.status_code == 200
        and f'<tr id="memory-{memory.id}"' in on.text
        and 'aria-checked="true"' in on.text
    )
    off = post(web, f"/agents/{agent.id}/memories/{memory.id}/constitutional", {"value": "false"})
    assert 'aria-checked="false"' in off.text
    records = db.session.scalars(
        sa.select(AuditLog).where(AuditLog.memory_id == memory.id).order_by(AuditLog.id)
    ).all()
    assert [(r.action, r.actor) for r in records[1:]] == [
        ("protect", f"admin:{admin.id}"),
        ("unprotect", f"admin:{admin.id}"),
    ]
    assert (
        post(web, f"/agents/{agent.id}/memories/{memory.id}/constitutional", {"value": "maybe"}).status_code
        == 400
    )
    other = make_agent()
    assert (
        post(web, f"/agents/{other.id}/memories/{memory.id}/constitutional", {"value": "true"}).status_code
        == 404
    )


# ----- timelines and rollback -----


def _session_with_a_merge(agent, make_memory) -> tuple[RefinementSession, list[int]]:
    from models.changes.mutations import consolidate_memories

    ids = [make_memory(agent, f"The standup is at nine, version {i}.").id for i in range(3)]
    session = RefinementSession(agent_id=agent.id, trigger="test", status="running", started_at=utcnow())
    db.session.add(session)
    db.session.commit()
    consolidate_memories(agent.id, ids, "The standup is at nine.", actor="agent", session_id=session.id)
    session.status, session.finished_at, session.ops_count = "completed", utcnow(), 1
    db.session.commit()
    return session, ids


def test_timeline_shows_who_what_when_ids_and_token_delta_but_no_text(web, admin, make_agent, make_memory):
    agent = make_agent()
    session, ids = _session_with_a_merge(agent, make_memory)
    html = web.get(f"/agents/{agent.id}/audit").text
    assert "The standup" not in html
    assert f"agent {agent.name}" in html and "consolidate" in html
    assert "merged from " + ", ".join(f"#{i}" for i in ids) in html
    merged_op = db.session.scalar(sa.select(AuditLog.op_id).where(AuditLog.action == "consolidate"))
    block = re.search(rf'<tbody id="op-{merged_op}".*?</tbody>', html, re.S).group(0)
    assert re.search(r'class="num delta neg">-\d+<', block) and f"/sessions/{session.id}" in block
    history = web.get(f"/agents/{agent.id}/audit?memory={ids[1]}").text
    assert f"History of memory <strong>#{ids[1]}</strong>" in history


def test_timeline_pages_by_operation(web, make_agent, make_memory):
    agent = make_agent()
    for i in range(55):
        make_memory(agent, f"memory {i}")
    first = web.get(f"/agents/{agent.id}/audit").text
    assert first.count('class="op') == 50 and 'id="timeline-more"' in first
    cursor = re.search(r'href="([^"]*before=\d+[^"]*)"', first).group(1).replace("&amp;", "&")
    more = web.get(cursor, headers={"HX-Request": "true"}).text
    assert more.count('class="op') == 5 and 'id="timeline-more"' not in more and "<html" not in more


def test_session_rollback_confirm_states_the_change_then_restores_and_can_be_undone(
    web, admin, make_agent, make_memory
):
    agent = make_agent()
    session, ids = _session_with_a_merge(agent, make_memory)
    tokens_after_session = agent.core_token_usage
    confirm = web.get(f"/rollback/session/{session.id}", headers={"HX-Request": "true"})
    assert 'id="confirm"' in confirm.text
    assert re.search(r'class="num restored">3<', confirm.text) and re.search(
        r'class="num removed">1<', confirm.text
    )
    assert "1 → 3 (+2)" in confirm.text
    applied = post(web, f"/rollback/session/{session.id}")
    assert applied.status_code == 204 and applied.headers["HX-Redirect"] == f"/agents/{agent.id}/audit"
    active = db.session.scalars(AgentMemory.active_core(agent.id)).all()
    assert sorted(m.id for m in active) == ids
    timeline = web.get(f"/agents/{agent.id}/audit").text
    assert (
        "Rolled back: 3 restored, 1 removed" in timeline
        and f"undid refinement session #{session.id}" in timeline
    )
    rollback_op = db.session.scalar(sa.select(AuditLog.op_id).where(AuditLog.action == "rollback").limit(1))
    assert "Undo rollback" in timeline
    post(web, f"/rollback/op/{rollback_op}")
    db.session.expire_all()
    assert agent.core_token_usage == tokens_after_session


def test_rollback_conflicts_are_explained_and_change_nothing(web, admin, make_agent, make_memory):
    agent = make_agent()
    memory = make_memory(agent, "first wording")
    first_op = db.session.scalar(sa.select(AuditLog.op_id).where(AuditLog.memory_id == memory.id))
    update_memory(agent.id, memory.id, actor="admin:1", content="second wording")
    confirm = web.get(f"/rollback/op/{first_op}")
    assert (
        confirm.status_code == 200
        and f"later changes touched the same memories (#{memory.id})" in confirm.text
    )
    refused = post(web, f"/rollback/op/{first_op}")
    assert refused.status_code == 409 and "later changes" in refused.text
    assert "wording" not in confirm.text + refused.text
    db.session.expire_all()
    assert db.session.get(AgentMemory, memory.id).deleted_at is None


def test_point_in_time_rollback_previews_then_applies(web, make_agent, make_memory):
    agent = make_agent()
    keep = make_memory(agent, "kept memory")
    moment = utcnow()
    later = make_memory(agent, "added later")
    preview = web.get(f"/agents/{agent.id}/rollback", query_string={"to": moment.isoformat()})
    assert re.search(r'class="num removed">1<', preview.text) and 'name="to"' in preview.text
    assert web.get(f"/agents/{agent.id}/rollback?to=yesterday").status_code == 422
    post(web, f"/agents/{agent.id}/rollback", {"to": moment.isoformat()}, htmx=False)
    db.session.expire_all()
    assert db.session.get(AgentMemory, later.id).deleted_at is not None
    assert db.session.get(AgentMemory, keep.id).deleted_at is None


# ----- jobs -----


def test_exception_type_is_read_structurally_never_from_the_message():
    text = (
        "Traceback (most recent call last):\n"
        '  File "/x/rq/job.py", line 1, in perform\n    return f()\n'
        "tests.job_fixtures.JobExploded: first line\nSecondLineLooksLikeAType\n"
    )
    assert exception_type(text) == "tests.job_fixtures.JobExploded"
    assert exception_type("garbage") == "unknown" and exception_type(None) == "unknown"


def test_jobs_page_lists_queues_recurring_jobs_and_failures_by_type_only(app, web, redis_conn):
    rq = app.extensions["rq"]
    rq.enqueue(explode, "message with private words", queue="default")
    SimpleWorker([rq.queue("default")], connection=redis_conn).work(burst=True)
    html = web.get("/jobs").text
    for queue in ("interactive", "default", "llm", "maintenance"):
        assert f'data-queue="{queue}"' in html
    assert 'data-recurring="mechanic-expiry"' in html and 'data-recurring="refinement-sweep"' in html
    assert "tests.job_fixtures.JobExploded" in html and "tests.job_fixtures.explode" in html
    assert "private words" not in html
