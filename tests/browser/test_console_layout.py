"""Every console page at 390, 768 and 1400 px in Debian's Chromium, on the demo data: the page never
scrolls sideways, every row's identifying cell and action are inside the window, axe-core finds nothing
serious; and the statuses and panels an admin acts on change in place, without a reload."""

from __future__ import annotations

import os
import re
from pathlib import Path

import sqlalchemy as sa
from playwright.sync_api import expect
from rq import SimpleWorker

from console.cli.demo import seed_demo
from jobs.refinement import run_refinement
from models import Agent, AgentMemory, RefinementSession, db
from models.admins.mechanic import decide_grant, request_grant
from models.changes.mutations import create_memory
from models.changes.timemachine import rollback_session
from tests.job_fixtures import explode

from .support import ADMIN_EMAIL

AXE = Path(
    os.environ.get("AXE_CORE_JS")
    or Path(__file__).resolve().parents[2] / ".venv/axe/node_modules/axe-core/axe.min.js"
)
WIDTHS = (390, 768, 1400)
ROW_ACTIONS = "td.act a, td.act button, td.actions a, td.actions button, td.toggle button"

FITS = """(actions) => {
  const width = window.innerWidth, out = [];
  if (document.documentElement.scrollWidth > width) out.push('page ' + document.documentElement.scrollWidth);
  const cells = document.querySelectorAll('td.key, td.agent, ' + actions);
  for (const el of cells) {
    const box = el.getBoundingClientRect();
    if (!box.width || el.closest('details:not([open])')) continue;
    if (box.left < 0 || box.right > width + 0.5) out.push((el.getAttribute('aria-label') || el.textContent).trim().slice(0, 40) + ' ' + Math.round(box.left) + '..' + Math.round(box.right));
  }
  return out.slice(0, 5);
}"""


def _demo(app, admin, redis_conn) -> dict:
    """The demo data, a session rolled back by the admin, a live grant and a failed job."""
    seed_demo()
    agents = {a.name: a for a in db.session.scalars(sa.select(Agent)).all()}
    basil, cleo = agents["basil"], agents["cleo"]
    demo_session = db.session.scalar(
        sa.select(RefinementSession.id).where(RefinementSession.agent_id == basil.id)
    )
    rollback_session(demo_session, actor=admin.actor)
    later = run_refinement(agents["esme"].id, "console", force=True)["session_id"]
    ids = [m.id for m in db.session.scalars(AgentMemory.active_core(cleo.id)).all()[:4]]
    grant = request_grant(
        cleo.id, admin.id, "A user reports that cleo mixed up two projects.", "ids", ids, 30
    )
    decide_grant(grant.id, True, decided_by="pre-consent")
    app.extensions["rq"].enqueue(explode, "private words", queue="default")
    SimpleWorker([app.extensions["rq"].queue("default")], connection=redis_conn).work(burst=True)
    db.session.commit()
    return {
        "basil": basil.id,
        "cleo": cleo.id,
        "rolled_back": demo_session,
        "later": later,
        "grant": grant.id,
    }


def test_every_page_fits_390_768_and_1400_px_with_row_actions_in_view_and_no_serious_axe_violation(
    page, app, admin, redis_conn
):
    assert AXE.is_file(), f"axe-core is not installed at {AXE}: scripts/test.sh installs it from npm"
    ids = _demo(app, admin, redis_conn)
    urls = [
        "/",
        f"/agents/{ids['basil']}",
        f"/agents/{ids['cleo']}/memories",
        f"/agents/{ids['cleo']}/audit",
        f"/sessions/{ids['rolled_back']}",
        f"/sessions/{ids['later']}",
        "/activity",
        "/jobs",
        "/events",
        f"/agents/{ids['cleo']}/mechanic",
        f"/mechanic/grants/{ids['grant']}",
        "/sign-ins",
        "/preferences",
    ]
    source = AXE.read_text()
    problems: dict[str, list[str]] = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for url in urls:
            page.goto(url)
            page.wait_for_load_state("networkidle")
            found = page.evaluate(FITS, ROW_ACTIONS)
            if width != 768:  # axe's rules do not depend on the middle width's layout
                page.evaluate(source)  # through the DevTools protocol: the page's CSP forbids inline scripts
                found += page.evaluate(
                    "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                    ".filter(v => ['serious', 'critical'].includes(v.impact))"
                    ".map(v => 'axe ' + v.id + ': ' + v.nodes.slice(0, 2).map(n => n.target.join(' ')).join(' | '))"
                )
            if found:
                problems[f"{url} @ {width}px"] = found
    assert not problems, "\n".join(f"{where}: {found}" for where, found in problems.items())
    # The Mechanic's view shows the content first on a phone, above the memory's metadata.
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"/mechanic/grants/{ids['grant']}")
    row = page.locator("table.contents tbody tr").first
    assert row.locator("td.content").bounding_box()["y"] < row.locator("td.key").bounding_box()["y"]
    # An operation a rollback undid reads in the same type as the others; only its "undone by" line differs.
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"/agents/{ids['basil']}/audit")
    style = "el => [getComputedStyle(el).fontSize, getComputedStyle(el).color]"
    undone = page.locator("tbody.op.undone td.who").first.evaluate(style)
    assert undone == page.locator("tbody.op:not(.undone) td.who").first.evaluate(style)


def test_a_rollback_on_the_agent_page_turns_the_session_rolled_back_in_place_and_can_be_undone(
    page, app, admin, redis_conn, make_agent
):
    agent = make_agent("phone", core_token_budget=100)
    for i in range(12):
        create_memory(agent.id, f"phone fact {i}: review {i} is on day {i + 3}.", actor="admin:seed")
    create_memory(agent.id, "phone FACT 1: review 1 is on day 4!", actor="admin:seed")
    db.session.commit()
    session_id = run_refinement(agent.id, "console", force=True)["session_id"]
    db.session.commit()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/agents/{agent.id}")
    page.evaluate("window.__same_page = true")
    tokens = page.locator("#agent-summary .big.tokens").inner_text()
    row = page.locator(f'#sessions tr[data-session-id="{session_id}"]')
    row.get_by_role("link", name="Roll back…").click()
    page.locator("#confirm").get_by_role("button", name="Roll back").click()

    expect(row.locator(".badge")).to_have_text("rolled back")
    expect(row).to_contain_text(ADMIN_EMAIL)
    expect(page.locator("#notice")).to_contain_text("Rolled back")
    expect(page.locator("#agent-summary .big.tokens")).not_to_have_text(tokens)
    assert page.evaluate("window.__same_page") is True  # refreshed in place, not reloaded
    undo = row.get_by_role("link", name="Undo the rollback…")
    box = undo.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390

    undo.click()
    page.locator("#confirm").get_by_role("button", name="Roll back").click()
    expect(row.locator(".badge")).to_have_text("completed")
    expect(page.locator("#agent-summary .big.tokens")).to_have_text(tokens)
    page.goto("/")
    expect(page.locator(f'tr[data-agent-id="{agent.id}"] td.last .badge')).to_have_text("completed")


def test_a_budget_save_and_a_lock_refresh_the_figures_beside_them(page, make_agent):
    agent = make_agent("figures", core_token_budget=1600)
    memory = create_memory(
        agent.id, "figures fact: the review is on Tuesday with four people.", actor="admin:seed"
    )
    db.session.commit()
    page.goto(f"/agents/{agent.id}")
    expect(page.locator("#agent-summary")).to_contain_text("of 1,600 tokens")
    page.get_by_label("Core token budget").fill("1500")
    page.locator("#agent-settings").get_by_role("button", name="Save").click()
    expect(page.locator("#agent-settings .inline-ok")).to_contain_text("Saved")
    expect(page.locator("#agent-summary")).to_contain_text("of 1,500 tokens")
    assert re.search(r"\d+%", page.locator("#agent-summary .usage").inner_text())

    page.goto(f"/agents/{agent.id}/memories")
    expect(page.locator("#memory-figures .locked-count")).to_have_text("0 locked")
    page.get_by_role("switch", name=f"constitutional lock on memory #{memory.id}").click()
    expect(page.locator("#memory-figures .locked-count")).to_have_text("1 locked")
