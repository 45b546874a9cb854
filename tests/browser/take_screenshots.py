"""Screenshots for docs/: the console on the demo data set, in Debian's Chromium.

    python tests/browser/take_screenshots.py [OUTDIR]      # default: docs/

The four of docs/reference/console.md (dashboard, agent, audit, mechanic) at 1440 px, and every main page at
the three widths the layout is checked at (390, 768 and 1400 px) as `docs/screens/<page>-<width>.png`.

A scratch SQLite database and an embedded Redis under a temporary directory: `flask demo`'s data,
the recurring schedule registered (so next runs show), then a little real activity a few seconds
apart through the same paths the console and the jobs use — refinement sessions by the offline
refiner, a session rolled back, a Mechanic's grant the agent consented to in advance — and then
the pages docs/reference/console.md lists. Nothing here touches the instance/ database.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SHOTS = ("dashboard", "agent", "audit", "mechanic")
WIDTHS = {390: 844, 768: 1024, 1400: 900}


def main(outdir: Path) -> None:
    from flask_migrate import upgrade
    from rq_scheduler import Scheduler
    from sqlalchemy import select

    from console import create_app
    from console.cli.demo import seed_demo
    from infra import embedded_redis
    from jobs.mechanic import ask_mechanic_consent
    from jobs.refinement import run_refinement
    from jobs.schedule import reconcile
    from models import Agent, AgentMemory, RefinementSession, db, utcnow
    from models.admins.mechanic import request_grant
    from models.changes.agent_settings import update_agent_settings
    from models.changes.mutations import soft_delete_memories
    from models.changes.timemachine import rollback_agent, rollback_session
    from tests.browser.live import LiveServer, chromium, sign_in
    from tests.browser.support import ADMIN_EMAIL, ADMIN_PASSWORD, make_admin

    outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        redis_url = embedded_redis.ensure_running(str(Path(scratch) / "redis"))
        app = create_app(
            {
                "DATABASE_URL": f"sqlite:///{scratch}/demo.sqlite",
                "REDIS_URL": redis_url,
                "SECRET_KEY": "screenshots",
                "LLM_OFFLINE": True,
            }
        )
        try:
            with app.app_context():
                upgrade(revision="heads")  # sibling revisions may be open until they are chained
                seed_demo()
                admin = make_admin()
                reconcile(Scheduler(connection=app.extensions["rq"].connection))
                agents = {a.name: a for a in db.session.scalars(select(Agent)).all()}
                # A little history, a few seconds apart, so the sparklines have a shape: the demo's session
                # undone and redone by the offline refiner, memories deleted and a point-in-time rollback.
                basil, cleo = agents["basil"], agents["cleo"]
                demo_session = db.session.scalar(
                    select(RefinementSession.id).where(RefinementSession.agent_id == basil.id)
                )
                cleo_core = [
                    m.id
                    for m in db.session.scalars(AgentMemory.active_core(cleo.id)).all()
                    if not m.constitutional
                ]
                time.sleep(2)
                rollback_session(demo_session, actor=admin.actor)
                time.sleep(2)
                soft_delete_memories(cleo.id, cleo_core[:4], actor=admin.actor, reason="screenshots")
                checkpoint = utcnow()
                time.sleep(2)
                run_refinement(basil.id, "console", force=True)
                soft_delete_memories(cleo.id, cleo_core[4:10], actor=admin.actor, reason="screenshots")
                time.sleep(2)
                run_refinement(agents["esme"].id, "schedule", force=True)
                rollback_agent(cleo.id, checkpoint, actor=admin.actor)
                time.sleep(2)
                dorian_session = run_refinement(agents["dorian"].id, "over_budget", force=True)["session_id"]
                mira = agents["basil"]
                update_agent_settings(mira.id, actor="agent", mechanic_preconsent=True)
                ids = [m.id for m in db.session.scalars(AgentMemory.active_core(mira.id)).all()[:6]]
                grant = request_grant(
                    mira.id,
                    admin.id,
                    "A user reports that basil mixed up two projects' deadlines.",
                    "ids",
                    ids,
                    30,
                )
                ask_mechanic_consent(grant.id)
                basil_id, cleo_id, grant_id = mira.id, agents["cleo"].id, grant.id
                db.session.remove()
            with LiveServer(app) as server, chromium() as browser:
                page = browser.new_page(viewport={"width": 1440, "height": 900}, device_scale_factor=1)
                sign_in(page, server.url, ADMIN_EMAIL, ADMIN_PASSWORD)
                shots = {
                    "dashboard": "/",
                    "agent": f"/agents/{basil_id}",
                    "audit": f"/agents/{cleo_id}/audit",
                    "mechanic": f"/mechanic/grants/{grant_id}",
                }
                for name, url in shots.items():
                    page.goto(server.url + url)
                    page.wait_for_load_state("networkidle")
                    page.screenshot(path=str(outdir / f"{name}.png"))
                    print(f"wrote {outdir / (name + '.png')}")
                pages = {
                    **shots,
                    "memories": f"/agents/{cleo_id}/memories",
                    "session": f"/sessions/{dorian_session}",
                    "activity": "/activity",
                    "jobs": "/jobs",
                    "events": "/events",
                }
                (outdir / "screens").mkdir(exist_ok=True)
                for width, height in WIDTHS.items():
                    page.set_viewport_size({"width": width, "height": height})
                    for name, url in pages.items():
                        page.goto(server.url + url)
                        page.wait_for_load_state("networkidle")
                        path = outdir / "screens" / f"{name}-{width}.png"
                        page.screenshot(path=str(path))
                        print(f"wrote {path}")
        finally:
            embedded_redis.stop(str(Path(scratch) / "redis"))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs")
