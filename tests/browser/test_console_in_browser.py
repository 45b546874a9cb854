"""The console in a real browser (Debian's Chromium, headless, off the network): sign-in, the dashboard,
the constitutional toggle, a refinement watched to the end with a real worker, a one-click session
rollback, and the Mechanic's Exception from request to consent to view to expiry."""

from __future__ import annotations

import re
from datetime import timedelta

import sqlalchemy as sa
from playwright.sync_api import expect

from jobs.refinement import run_refinement
from models import AgentMemory, AuditLog, MechanicGrant, MechanicView, RefinementSession, db, utcnow
from models.admins.mechanic import revoke_grant
from models.changes.agent_settings import update_agent_settings
from models.changes.mutations import create_memory

from .live import sign_in
from .support import ADMIN_EMAIL, ADMIN_PASSWORD, fresh

VARIANTS = (
    "The weekly sync is on Tuesday.",
    "the weekly sync is on Tuesday!",
    "The weekly sync is on Tuesday",
)


def _agent_with_duplicates(make_agent, name: str = "ada", budget: int = 5000):
    agent = make_agent(name, core_token_budget=budget)
    for variant in VARIANTS:
        create_memory(agent.id, variant, actor="admin:seed")
    for i in range(12):  # enough that merging the three variants stays above the breaker's 80%
        create_memory(
            agent.id, f"A distinct fact number {i} about the roadmap for project {i}.", actor="admin:seed"
        )
    return agent


def _core_count(agent_id: int) -> int:
    fresh()
    return len(db.session.scalars(AgentMemory.active_core(agent_id)).all())


def test_sign_in_refuses_a_wrong_password_then_signs_in_and_out(browser, live, admin):
    context = browser.new_context(base_url=live.url)
    page = context.new_page()
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login"))
    page.get_by_label("Email").fill(ADMIN_EMAIL)
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator(".flash.error")).to_have_text("Wrong email or password.")
    sign_in(page, live.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    expect(page.get_by_role("heading", name="Agents")).to_be_visible()
    cookie = next(c for c in context.cookies() if c["name"] == "session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
    page.goto("/agents/424242")
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(r"/login$"))
    page.goto("/jobs")
    expect(page).to_have_url(re.compile(r"/login\?next=%2Fjobs|/login\?next=/jobs"))
    context.close()


def test_dashboard_shows_budget_bars_and_searches_and_pages_with_htmx(page, make_agent):
    for i in range(55):
        make_agent(f"fleet-{i:02d}", core_token_budget=1000)
    heavy = _agent_with_duplicates(make_agent, "zz-heavy", budget=100)
    db.session.commit()
    page.goto("/")
    expect(page.locator("#agents-table")).to_contain_text("56 agents")
    expect(page.locator("#agents-table")).to_contain_text("Page 1 of 2")
    page.get_by_role("link", name="Next →").first.click()
    expect(page).to_have_url(re.compile(r"page=2"))
    row = page.locator(f'tr[data-agent-id="{heavy.id}"]')
    expect(row).to_have_class(re.compile(r"\bover\b"))
    expect(row).to_contain_text("over budget")
    expect(row.locator(".bar.over")).to_be_visible()
    expect(row.locator("svg.spark")).to_be_visible()
    page.get_by_placeholder("Search by name or id").fill("fleet-0")
    expect(page.locator("#agents-table")).to_contain_text("10 agents matching")
    expect(page.locator("tr[data-agent-id]")).to_have_count(10)
    expect(page).to_have_url(re.compile(r"q=fleet-0"))


def test_toggling_constitutional_on_a_memory_row_is_audited_with_the_admin(page, admin, make_agent):
    agent = _agent_with_duplicates(make_agent)
    memory = db.session.scalars(AgentMemory.active_core(agent.id)).first()
    page.goto(f"/agents/{agent.id}/memories")
    switch = page.get_by_role("switch", name=f"constitutional lock on memory #{memory.id}", exact=True)
    expect(switch).to_have_attribute("aria-checked", "false")
    switch.click()
    expect(switch).to_have_attribute("aria-checked", "true")
    expect(page.locator(f"#memory-{memory.id}")).to_contain_text("constitutional")
    page.once("dialog", lambda dialog: dialog.accept())  # clearing the lock asks first
    switch.click()
    expect(switch).to_have_attribute("aria-checked", "false")
    fresh()
    records = db.session.scalars(
        sa.select(AuditLog)
        .where(AuditLog.memory_id == memory.id, AuditLog.action.in_(("protect", "unprotect")))
        .order_by(AuditLog.id)
    ).all()
    assert [(r.action, r.actor) for r in records] == [
        ("protect", f"admin:{admin.id}"),
        ("unprotect", f"admin:{admin.id}"),
    ]


def test_triggering_a_refinement_and_watching_it_finish(page, make_agent, start_worker):
    agent = _agent_with_duplicates(make_agent)
    before = _core_count(agent.id)
    page.goto(f"/agents/{agent.id}")
    page.get_by_role("button", name="Trigger refinement").click()
    widget = page.locator("#refinement-progress")
    expect(widget).to_contain_text("queued")
    expect(widget.locator(".spinner")).to_be_visible()
    start_worker()  # the worker starts only now: the page has been polling a queued job
    expect(widget.locator(".badge")).to_have_text("completed", timeout=60_000)
    expect(widget.locator(".ops")).to_have_text("1")
    expect(widget.locator(".job")).to_have_text("finished")
    expect(widget.locator(".spinner")).to_have_count(0)
    # The sessions list and the figures refreshed themselves when the widget announced the end.
    session = db.session.scalar(sa.select(RefinementSession).where(RefinementSession.agent_id == agent.id))
    expect(page.locator(f'#sessions tr[data-session-id="{session.id}"]')).to_contain_text("completed")
    expect(page.locator("#agent-summary .core-count")).to_have_text(str(before - 2))
    assert _core_count(agent.id) == before - 2


def test_rolling_back_a_session_with_one_click_restores_the_counts(page, make_agent):
    agent = _agent_with_duplicates(make_agent)
    before = _core_count(agent.id)
    tokens_before = agent.core_token_usage
    result = run_refinement(agent.id, "test", force=True)
    assert result["status"] == "completed" and result["ops"] == 1
    db.session.commit()
    page.goto(f"/agents/{agent.id}")
    expect(page.locator("#agent-summary .core-count")).to_have_text(str(before - 2))
    page.locator(f'#sessions tr[data-session-id="{result["session_id"]}"]').get_by_role(
        "link", name="Roll back…"
    ).click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text(f"Roll back refinement session #{result['session_id']}")
    expect(dialog.locator(".restored")).to_have_text("3")
    expect(dialog.locator(".removed")).to_have_text("2")  # the merged memory and the session's journal entry
    expect(dialog.locator(".counts")).to_contain_text("(+1)")
    expect(dialog.locator(".tokens")).to_contain_text(f"→ {tokens_before:,}")
    dialog.get_by_role("button", name="Roll back").click()
    # The agent page refreshes in place: the message, the figures, the session now "rolled back".
    expect(page.locator(".flash")).to_contain_text("Rolled back: 3 restored, 2 removed")
    expect(page.locator(f'#sessions tr[data-session-id="{result["session_id"]}"] .badge')).to_have_text(
        "rolled back"
    )
    expect(page.locator("#agent-summary .core-count")).to_have_text(str(before))
    page.get_by_role("link", name="Audit timeline").click()
    expect(page.locator("tbody.op").first).to_contain_text(
        f"undid refinement session #{result['session_id']}"
    )
    page.get_by_role("link", name="Overview").click()
    expect(page.locator("#agent-summary .core-count")).to_have_text(str(before))
    expect(page.locator("#agent-summary .tokens")).to_have_text(f"{tokens_before:,}")
    assert _core_count(agent.id) == before
    # ... and the rollback itself can be undone, from the timeline.
    page.get_by_role("link", name="Audit timeline").click()
    page.locator("tbody.op.rollback").first.get_by_role("link", name="Undo rollback…").click()
    page.get_by_role("dialog").get_by_role("button", name="Roll back").click()
    expect(page.locator(".flash")).to_contain_text("Rolled back")
    assert _core_count(agent.id) == before - 2


def test_the_mechanics_exception_from_request_to_consent_to_view_to_expiry(page, admin, make_agent, worker):
    agent = _agent_with_duplicates(make_agent, "mira")
    update_agent_settings(
        agent.id, actor="agent", mechanic_preconsent=True
    )  # standing consent, via the agent API
    memories = db.session.scalars(AgentMemory.active_core(agent.id)).all()
    inside, outside = memories[0], memories[-1]
    page.goto(f"/agents/{agent.id}")
    expect(page.locator("body")).not_to_contain_text(inside.content)
    page.get_by_role("link", name="Mechanic's Exception").click()
    page.get_by_label("Purpose").fill("A user reports the sync day is wrong; check that memory.")
    page.get_by_label("listed memory ids").check()
    page.get_by_role("textbox", name="memory ids").fill(str(inside.id))
    page.get_by_label("Duration").fill("1")
    page.get_by_role("button", name="Ask the agent for access").click()
    status = page.locator("#grant-status")
    expect(status).to_contain_text("active", timeout=60_000)  # the worker asked; pre-consent answered
    expect(status.locator(".countdown")).to_have_text(re.compile(r"^[01]:\d\d$"))
    page.get_by_role("link", name="Open the mechanic's view").click()
    expect(page.locator(f'tr[data-memory-id="{inside.id}"] .content')).to_have_text(inside.content)
    expect(page.locator("body")).not_to_contain_text(outside.content)
    expect(page.locator("#grant-banner .countdown")).to_have_text(re.compile(r"^[01]:\d\d$"))
    fresh()
    grant = db.session.scalar(sa.select(MechanicGrant).where(MechanicGrant.agent_id == agent.id))
    assert grant.decided_by == "pre-consent"
    assert db.session.scalar(sa.select(sa.func.count()).where(MechanicView.grant_id == grant.id)) == 1
    page.get_by_role("link", name="Audit timeline with before/after text").click()
    expect(page.locator(".grant-text").first).to_contain_text(inside.content)
    fresh()
    assert db.session.scalar(sa.select(sa.func.count()).where(MechanicView.grant_id == grant.id)) == 2

    # Time passes: the grant has three seconds left. The open page closes itself, nobody clicks.
    grant.expires_at = utcnow() + timedelta(seconds=3)
    db.session.commit()
    page.goto(f"/mechanic/grants/{grant.id}")
    expect(page.locator(f'tr[data-memory-id="{inside.id}"]')).to_be_visible()
    expect(page.locator("#grant-closed")).to_be_visible(timeout=15_000)
    expect(page.locator("body")).not_to_contain_text(inside.content)

    # A new grant, revoked by the agent: the open timeline closes within a poll.
    page.goto(f"/agents/{agent.id}/mechanic")
    page.get_by_label("Purpose").fill("Second look at the same memory, briefly.")
    page.get_by_label("listed memory ids").check()
    page.get_by_role("textbox", name="memory ids").fill(str(inside.id))
    page.get_by_label("Duration").fill("5")
    page.get_by_role("button", name="Ask the agent for access").click()
    expect(page.locator("#grant-status")).to_contain_text("active", timeout=60_000)
    page.goto(f"/agents/{agent.id}/audit")
    expect(page.locator(".grant-text").first).to_contain_text(inside.content)
    fresh()
    second = db.session.scalar(sa.select(MechanicGrant).order_by(MechanicGrant.id.desc()).limit(1))
    assert second.id != grant.id and second.is_active()
    revoke_grant(second.id, actor="agent", agent_id=agent.id)
    expect(page.locator("#grant-banner")).to_have_count(0, timeout=15_000)
    expect(page.locator("body")).not_to_contain_text(inside.content)
    page.get_by_role("link", name="Mechanic's Exception").click()
    expect(page.locator(f'tr[data-grant-id="{grant.id}"]')).to_contain_text("expired")
    expect(page.locator(f'tr[data-grant-id="{second.id}"]')).to_contain_text("revoked")
    expect(page.locator(f'tr[data-grant-id="{grant.id}"]')).to_contain_text("3 views")  # view, timeline, view
