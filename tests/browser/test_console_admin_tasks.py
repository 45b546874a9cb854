"""The console as an admin uses it, in Debian's Chromium: one test per task
(1-9; the command line's, 10, is tests/console/cli/test_console_cli_output.py), and axe-core's accessibility
check on every page. Each test failed before the change it names."""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path

import sqlalchemy as sa
from playwright.sync_api import expect
from rq import SimpleWorker, Worker

from console.cli.demo import seed_demo
from jobs.refinement import run_refinement
from models import Agent, AgentMemory, AuditLog, MechanicGrant, db, utcnow
from models.changes.agent_settings import update_agent_settings
from models.changes.mutations import create_memory
from models.changes.timemachine import rollback_operation
from models.refinement.due import over_budget_due
from tests.job_fixtures import explode

from .support import fresh

AXE = Path(
    os.environ.get("AXE_CORE_JS")
    or Path(__file__).resolve().parents[2] / ".venv/axe/node_modules/axe-core/axe.min.js"
)
WIDTHS = (375, 768, 1400)


def _agent(make_agent, name: str, budget: int, distinct: int = 12, duplicates: int = 0, tags=()):
    agent = make_agent(name, core_token_budget=budget)
    for i in range(distinct):
        create_memory(
            agent.id,
            f"{name} fact {i}: the project {i} review is on day {i} with {i + 2} people.",
            actor="admin:seed",
            tags=list(tags) if i == 0 else [],
        )
    for _ in range(duplicates):
        create_memory(
            agent.id, f"{name} fact 0: the project 0 review is on day 0 with 2 people.", actor="admin:seed"
        )
    db.session.commit()
    return agent


def _no_page_scroll(page) -> None:
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"the page is {width[0]} px wide in a {width[1]} px window"


# ----- 1. every screen width -----


def test_every_page_fits_375_768_and_1400_px_tables_scroll_inside_their_card_and_the_menu_collapses(
    page, make_agent, redis_conn
):
    agent = _agent(make_agent, "wide-agent-with-a-long-name", budget=100, tags=("project",))
    memory = db.session.scalars(AgentMemory.active_core(agent.id)).first()
    Worker(
        ["llm", "default"], connection=redis_conn, name="a-worker-with-a-long-name-on-host-1"
    ).register_birth()
    urls = [
        "/",
        f"/agents/{agent.id}",
        f"/agents/{agent.id}/memories",
        f"/agents/{agent.id}/audit",
        "/jobs",
        "/activity",
    ]
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for url in urls:
            page.goto(url)
            _no_page_scroll(page)
            for scroller in page.locator(".table-scroll").all():
                assert scroller.evaluate("el => getComputedStyle(el).overflowX") == "auto"
                box, card = scroller.bounding_box(), scroller.locator("xpath=..").bounding_box()
                assert box["x"] + box["width"] <= card["x"] + card["width"] + 1
        if width == 375:
            sign_out = page.get_by_role("button", name="Sign out")
            expect(sign_out).to_be_hidden()
            menu = page.get_by_role("button", name="Menu")
            menu.click()
            expect(menu).to_have_attribute("aria-expanded", "true")
            expect(sign_out).to_be_in_viewport()
            # The lock switch sits in the last column: reachable by scrolling the table, and it works.
            page.goto(f"/agents/{agent.id}/memories")
            switch = page.locator(f"#lock-{memory.id}")
            switch.scroll_into_view_if_needed()
            expect(switch).to_be_in_viewport()
            switch.click()
            expect(switch).to_have_attribute("aria-checked", "true")
            _no_page_scroll(page)
    # At 1400 px the workers table shows every column, heartbeat and OK / failed included.
    page.goto("/jobs")
    workers = page.locator("table.workers")
    expect(workers).to_contain_text("a-worker-with-a-long-name-on-host-1")
    scroller = page.locator(".table-scroll", has=workers)
    assert scroller.evaluate("el => el.scrollWidth <= el.clientWidth")
    expect(workers.get_by_role("columnheader", name="OK / failed")).to_be_in_viewport()


# ----- 2. outcomes that explain themselves; the scan does not repeat a session that found nothing -----


def test_a_session_that_changed_nothing_tells_the_story_and_the_scan_waits_for_a_memory_change(
    page, make_agent
):
    agent = _agent(make_agent, "heavy", budget=100, distinct=12, duplicates=3)
    result = run_refinement(agent.id, "over_budget", force=True)
    db.session.commit()
    assert result["status"] == "completed" and result["ops"] == 0
    page.goto(f"/agents/{agent.id}")
    page.locator(f'#sessions tr[data-session-id="{result["session_id"]}"] a').first.click()
    story = page.locator("[data-outcome]")
    expect(story.locator(".headline")).to_have_text("The built-in offline refiner chose to change nothing.")
    expect(story.locator(".before")).to_contain_text("the content-blind dedup removed 3 exact duplicates")
    expect(story.locator(".during").first).to_contain_text(
        "offline refiner merges only memories that state exactly the same fact"
    )
    expect(story.locator(".now")).to_contain_text(re.compile(r"over budget by [\d,]+"))
    expect(story.get_by_role("link", name="Budget settings")).to_be_visible()
    expect(story.get_by_role("link", name="Model setting")).to_be_visible()
    expect(story.get_by_role("link", name="Largest memories")).to_be_visible()
    expect(story).to_contain_text("will not run this agent again until one of its memories changes")
    page.goto("/")
    expect(page.locator(f'tr[data-agent-id="{agent.id}"] .held')).to_contain_text("scan waits")
    later = utcnow() + timedelta(days=2)  # past the scan's 24 h cool-down
    assert agent.id not in over_budget_due(now=later)
    create_memory(agent.id, "A new fact about the spring planning offsite.", actor="agent")
    db.session.commit()
    assert agent.id in over_budget_due(now=later)
    page.reload()
    expect(page.locator(f'tr[data-agent-id="{agent.id}"] .held')).to_have_count(0)


# ----- 3. ranking over-budget agents -----


def test_the_dashboard_shows_usage_and_overage_sorts_filters_and_gives_sparklines_a_scale(page, make_agent):
    lean = _agent(make_agent, "lean", budget=5000, distinct=3)
    worse = _agent(make_agent, "worse", budget=100, distinct=12)
    bad = _agent(make_agent, "bad", budget=150, distinct=12)
    page.goto("/")
    row = page.locator(f'tr[data-agent-id="{worse.id}"]')
    percent = round(100 * worse.core_tokens / 100)
    expect(row.locator(".usage")).to_have_text(f"{percent}%")
    expect(row.locator(".overage")).to_have_text(f"+{worse.core_tokens - 100:,}")
    expect(row.locator(".overage-cell")).to_contain_text(f"{percent - 100}% over budget")
    spark = row.locator("svg.spark")
    expect(spark.locator("title").first).to_contain_text("Core tokens")
    expect(spark.locator("text").first).to_be_visible()  # the scale's top value
    page.get_by_role("link", name=re.compile("^Usage of budget")).click()
    expect(page).to_have_url(re.compile(r"sort=usage&dir=desc"))
    names = page.locator("tr[data-agent-id] td.agent strong")
    expect(names).to_have_text(["worse", "bad", "lean"])
    page.get_by_role("link", name=re.compile("^Over budget by")).click()
    expect(page).to_have_url(re.compile(r"sort=overage"))
    page.get_by_label("over budget").check()
    expect(page).to_have_url(re.compile(r"over=1"))
    expect(page.locator("tr[data-agent-id]")).to_have_count(2)
    assert lean.id not in [
        int(i) for i in page.locator("tr[data-agent-id]").evaluate_all("r => r.map(x => x.dataset.agentId)")
    ]
    page.reload()  # the view is in the URL
    expect(page.get_by_label("over budget")).to_be_checked()
    expect(page.locator("tr[data-agent-id]")).to_have_count(2)
    page.get_by_label("over budget").uncheck()
    page.get_by_label("never refined").check()
    expect(page.locator("tr[data-agent-id]")).to_have_count(3)
    assert bad.id


# ----- 4. the Mechanic's Exception in the demo, with one status everywhere -----


def test_the_demo_has_a_consenting_agent_and_the_grant_status_is_the_same_everywhere_without_reload(
    page, worker
):
    seed_demo()
    db.session.commit()
    agents = {a.name: a for a in db.session.scalars(sa.select(Agent)).all()}
    assert [n for n, a in agents.items() if a.mechanic_preconsent] == ["ada"]

    def ask(agent_id: int) -> None:
        page.goto(f"/agents/{agent_id}/mechanic")
        page.get_by_label("Purpose").fill("Checking a reported mix-up in a stored date.")
        page.get_by_label("all memories").check()
        page.get_by_label("Duration").fill("5")
        page.get_by_role("button", name="Ask the agent for access").click()

    ask(agents["ada"].id)
    status = page.locator("#grant-status")
    expect(status.locator(".badge")).to_have_text("active", timeout=60_000)
    expect(status).to_contain_text("the agent's standing consent")
    grant = db.session.scalar(sa.select(MechanicGrant).order_by(MechanicGrant.id.desc()).limit(1))
    expect(page.locator(f'tr[data-grant-id="{grant.id}"] .badge')).to_have_text("active")
    ask(agents["basil"].id)
    expect(status.locator(".badge")).to_have_text("declined", timeout=60_000)
    fresh()
    declined = db.session.scalar(sa.select(MechanicGrant).order_by(MechanicGrant.id.desc()).limit(1))
    expect(page.locator(f'tr[data-grant-id="{declined.id}"] .badge')).to_have_text("declined")
    expect(page.locator("#grants")).not_to_contain_text("offline-policy")


# ----- 5. find, sort and filter -----


def test_audit_filters_and_the_activity_feed_live_in_the_url(page, make_agent):
    first = _agent(make_agent, "first", budget=5000, distinct=3)
    second = _agent(make_agent, "second", budget=5000, distinct=2)
    memory = db.session.scalars(AgentMemory.active_core(first.id)).first()
    update_agent_settings(first.id, actor="admin:seed", core_token_budget=4000)
    db.session.commit()
    page.goto(f"/agents/{first.id}/audit")
    expect(page.locator("tbody.op")).to_have_count(4)
    page.get_by_label("What").select_option("agent_settings")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"action=agent_settings"))
    expect(page.locator("tbody.op")).to_have_count(1)
    expect(page.locator("tbody.op")).to_contain_text("settings changed")
    page.goto(f"/agents/{first.id}/audit?since=2000-01-01T00:00:00Z&until=2000-01-02T00:00:00Z")
    expect(page.locator("tbody.op")).to_have_count(0)
    expect(page.locator("#timeline-card")).to_contain_text("Nothing matches these filters.")
    page.get_by_role("link", name="Activity").click()
    expect(page.locator('tbody.op:has(a:text-is("second"))')).to_have_count(2)
    expect(page.locator('tbody.op:has(a:text-is("first"))')).to_have_count(4)
    page.get_by_label("What").select_option("create")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"/activity\?.*action=create"))
    expect(page.locator("tbody.op")).to_have_count(5)
    assert memory.id and second.id


def test_memories_are_found_by_id_tag_or_hash_sorted_and_the_view_is_a_link(page, make_agent):
    agent = _agent(make_agent, "finder", budget=5000, distinct=6, tags=("travel-plans",))
    rows = db.session.scalars(AgentMemory.active_core(agent.id)).all()
    tagged = next(m for m in rows if m.tags)
    target = rows[3]
    page.goto(f"/agents/{agent.id}/memories")
    search = page.get_by_role("searchbox", name="Find")
    search.fill(str(target.id))
    expect(page.locator("tbody tr[id^=memory-]")).to_have_count(1)
    expect(page).to_have_url(re.compile(rf"q={target.id}"))
    search.fill("travel")
    expect(page.locator("tbody tr[id^=memory-]")).to_have_count(1)
    expect(page.locator(f"#memory-{tagged.id}")).to_be_visible()
    search.fill(target.content_hash[:8])
    expect(page.locator(f"#memory-{target.id}")).to_be_visible()
    search.fill("")
    expect(page.locator("tbody tr[id^=memory-]")).to_have_count(6)
    page.get_by_role("link", name=re.compile("^Tokens")).click()
    expect(page).to_have_url(re.compile(r"sort=tokens&dir=desc"))
    tokens = [int(t.replace(",", "")) for t in page.locator("tbody tr[id^=memory-] td.num").all_inner_texts()]
    assert tokens == sorted(tokens, reverse=True)
    page.get_by_label("locked only").check()
    expect(page).to_have_url(re.compile(r"locked=1.*sort=tokens|sort=tokens.*locked=1"))
    page.reload()
    expect(page.get_by_label("locked only")).to_be_checked()
    expect(page.locator(".count")).to_contain_text("locked only")


# ----- 6. times with their zone -----


def test_every_time_names_its_zone_with_a_relative_time_and_the_picker_takes_iso(page, make_agent):
    agent = _agent(make_agent, "clock", budget=5000, distinct=2)
    page.goto(f"/agents/{agent.id}/memories")
    stamps = page.locator("main time")
    expect(stamps.first).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC · .*ago$"))
    for text in stamps.all_inner_texts():
        assert re.search(r" UTC · (\d+ \w+ ago|in \d+ \w+)$", text), text
    page.goto(f"/agents/{agent.id}/audit")
    picker = page.get_by_label(re.compile("Roll the agent back to"))
    assert picker.get_attribute("type") == "datetime-local"  # a date-time picker, read in the admin's zone
    picker.fill("2000-01-01T00:00:00")
    page.get_by_role("button", name="Preview…").click()
    expect(page.get_by_role("dialog")).to_contain_text("2000-01-01 00:00:00 UTC")
    expect(
        page.locator(".confirm.open")
    ).to_be_visible()  # opened (the key handler looks for it), not only filled
    page.keyboard.press("Escape")
    expect(page.locator(".confirm.open")).to_have_count(0)
    page.get_by_role("link", name="UTC").click()
    page.get_by_label("Show times in").select_option("Europe/Paris")
    page.get_by_role("button", name="Save").click()
    page.goto(f"/agents/{agent.id}/memories")
    expect(page.locator("main time").first).to_have_text(re.compile(r" CES?T · "))


# ----- 7. plain words; an undone operation offers Redo -----


def test_plain_words_everywhere_and_an_undone_operation_offers_redo(page, make_agent):
    agent = _agent(make_agent, "words", budget=5000, distinct=3)
    memory = db.session.scalars(AgentMemory.active_core(agent.id)).first()
    page.goto(f"/agents/{agent.id}/memories")
    page.locator(f"#lock-{memory.id}").click()
    expect(page.locator(f"#memory-{memory.id}")).to_contain_text("locked (constitutional)")
    fresh()
    op_id = db.session.scalar(
        sa.select(AuditLog.op_id).where(AuditLog.memory_id == memory.id, AuditLog.action == "protect")
    )
    rollback_operation(op_id, actor="admin:test")
    db.session.commit()
    page.goto(f"/agents/{agent.id}/audit")
    undone = page.locator(f"#op-{op_id}")
    expect(undone).to_contain_text("locked (constitutional)")
    expect(undone).to_contain_text("undone by")
    expect(undone.get_by_role("link", name="Roll back…")).to_have_count(0)
    undone.get_by_role("link", name="Redo…").click()
    page.get_by_role("dialog").get_by_role("button", name="Roll back").click()
    expect(page.locator(".flash")).to_contain_text("Rolled back")
    fresh()
    assert db.session.get(AgentMemory, memory.id).constitutional is True
    body = page.locator("main").inner_text()
    for jargon in (
        "consolidate_source",
        "agent_settings",
        "offline-policy",
        "hashed-bow",
        "consent_reason_chars",
    ):
        assert jargon not in body


# ----- 8. feedback and accessibility -----


def test_feedback_focus_skip_link_dialog_focus_trap_and_favicon(page, make_agent):
    agent = _agent(make_agent, "keys", budget=5000, distinct=3)
    memory = db.session.scalars(AgentMemory.active_core(agent.id)).first()
    missing = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    page.goto(f"/agents/{agent.id}/memories")
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    # Lock by keyboard: a message says what happened, and focus stays on the switch.
    switch = page.locator(f"#lock-{memory.id}")
    switch.focus()
    page.keyboard.press("Space")
    expect(page.locator(f"#memory-{memory.id} .row-message")).to_contain_text(
        f"Memory #{memory.id} is locked"
    )
    expect(page.locator("#announce")).to_contain_text("is locked")
    expect(switch).to_be_focused()
    # The rollback dialog takes focus, keeps Tab inside, and gives focus back when closed.
    page.goto(f"/agents/{agent.id}/audit")
    opener = page.locator("tbody.op").first.get_by_role("link", name="Roll back…")
    opener.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    for _ in range(5):
        page.keyboard.press("Tab")
        assert dialog.evaluate("d => d.contains(document.activeElement)")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(opener).to_be_focused()
    assert page.evaluate("() => document.querySelector('link[rel=icon]').href").endswith("favicon.svg")
    page.goto("/static/favicon.svg")
    assert not missing, missing


def test_axe_finds_no_serious_or_critical_violation_on_any_page(page, make_agent, redis_conn, app):
    assert AXE.is_file(), f"axe-core is not installed at {AXE}: scripts/test.sh installs it from npm"
    agent = _agent(make_agent, "axe", budget=100, distinct=4, duplicates=1)
    result = run_refinement(agent.id, "console", force=True)
    memory = db.session.scalars(AgentMemory.active_core(agent.id)).first()
    app.extensions["rq"].enqueue(explode, "private words", queue="default")
    SimpleWorker([app.extensions["rq"].queue("default")], connection=redis_conn).work(burst=True)
    db.session.commit()
    urls = [
        "/",
        f"/agents/{agent.id}",
        f"/agents/{agent.id}/memories",
        f"/agents/{agent.id}/audit",
        f"/agents/{agent.id}/audit?memory={memory.id}",
        f"/agents/{agent.id}/mechanic",
        f"/sessions/{result['session_id']}",
        f"/rollback/session/{result['session_id']}",
        "/activity",
        "/jobs",
        "/preferences",
        "/agents/999999",
    ]
    source = AXE.read_text()
    problems = {}
    for width in (375, 1400):
        page.set_viewport_size({"width": width, "height": 900})
        for url in urls:
            page.goto(url)
            page.wait_for_load_state("networkidle")
            page.evaluate(source)  # through the DevTools protocol: the page's CSP forbids inline scripts
            found = page.evaluate(
                "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                ".filter(v => ['serious', 'critical'].includes(v.impact))"
                ".map(v => v.id + ': ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '))"
            )
            if found:
                problems[f"{url} @ {width}px"] = found
    page.context.clear_cookies()  # the sign-in page too
    page.goto("/login")
    page.evaluate(source)
    found = page.evaluate(
        "async () => (await axe.run()).violations.filter(v => ['serious', 'critical'].includes(v.impact)).map(v => v.id)"
    )
    if found:
        problems["/login"] = found
    assert not problems, "\n".join(f"{where}: {found}" for where, found in problems.items())


# ----- 9. the jobs page acts and stays live -----


def test_jobs_page_requeues_deletes_runs_pauses_shows_the_stack_never_the_message_and_refreshes(
    page, app, redis_conn
):
    rq = app.extensions["rq"]
    for _ in range(2):
        rq.enqueue(explode, "private words in a message", queue="default")
    SimpleWorker([rq.queue("default")], connection=redis_conn).work(burst=True)
    page.goto("/jobs")
    failures = page.locator("table.failures tbody[data-job-id]")
    expect(failures).to_have_count(2)
    first = failures.first
    first.locator("summary").click()
    stack = first.locator("pre.traceback")
    expect(stack).to_contain_text("tests/job_fixtures.py:")
    expect(stack).to_contain_text("raise JobExploded(message)")
    expect(page.locator("main")).not_to_contain_text("private words")
    first.get_by_role("button", name=re.compile("^requeue job")).click()
    expect(page.locator(".flash")).to_contain_text("is queued again on default")
    expect(page.locator('tr[data-queue="default"] .queued')).to_have_text("1")
    expect(failures).to_have_count(1)
    failures.first.get_by_role("button", name=re.compile("^delete job")).click()
    expect(page.locator(".flash")).to_contain_text("were deleted")
    expect(failures).to_have_count(0)
    page.get_by_role("button", name="run mechanic-expiry now").click()
    expect(page.locator(".flash")).to_contain_text("queued now")
    assert rq.queue("maintenance").count == 1
    page.get_by_role("button", name="Pause workers").click()
    expect(page.locator(".paused")).to_contain_text("Workers are paused")
    page.get_by_role("button", name="Resume workers").click()
    expect(page.locator(".paused")).to_have_count(0)
    # Live: a job queued behind the page's back shows up without a reload.
    rq.enqueue(explode, "x", queue="llm")
    expect(page.locator('tr[data-queue="llm"] .queued')).to_have_text("1", timeout=12_000)
