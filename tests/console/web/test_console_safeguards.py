"""The agent page's safeguards panel: held consent patches an admin confirms or declines, on the record and
without ever showing the proposed text; the retention guard's state and its lift."""

from __future__ import annotations

import sqlalchemy as sa

from models import AgentMemory, AuditLog, db
from models.changes import write
from models.changes.patch_tables import ProposedPatch
from tests.browser.support import post

SECRET = "The user goes by Zanzibar-canary-4471."


def _held(agent) -> int:
    written = write.save(
        agent.id, SECRET, actor="agent", category="preferences", field="preferred_name", turn="m1"
    )
    assert written.memory is None
    return written.patch.id


def test_the_panel_lists_held_patches_by_metadata_and_an_admin_confirms_one_on_the_record(
    web, admin, make_agent
):
    agent = make_agent(role="supervisor")
    patch_id = _held(agent)

    panel = web.get(f"/agents/{agent.id}/safeguards", headers={"HX-Request": "true"}).text
    assert f"#{patch_id}" in panel and "preferred_name" in panel and "pending" in panel
    assert "Zanzibar" not in panel  # the proposed text never reaches a console page

    confirmed = post(web, f"/agents/{agent.id}/patches/{patch_id}/confirm")
    assert confirmed.status_code == 200 and "confirmed" in confirmed.text and "Zanzibar" not in confirmed.text
    db.session.expire_all()
    patch = db.session.get(ProposedPatch, patch_id)
    assert patch.status == "confirmed" and patch.acknowledgement["by"] == f"admin:{admin.id}"
    assert db.session.scalar(sa.select(AgentMemory.id).where(AgentMemory.content == SECRET)) is not None

    again = post(web, f"/agents/{agent.id}/patches/{patch_id}/decline")
    assert again.status_code == 409 and "not pending" in again.text


def test_an_admin_declines_a_held_patch_and_nothing_is_written(web, admin, make_agent):
    agent = make_agent(role="supervisor")
    patch_id = _held(agent)
    declined = post(web, f"/agents/{agent.id}/patches/{patch_id}/decline")
    assert declined.status_code == 200
    db.session.expire_all()
    assert db.session.get(ProposedPatch, patch_id).status == "rejected"
    assert db.session.scalar(sa.select(AgentMemory.id).where(AgentMemory.content == SECRET)) is None
    other = make_agent()
    assert post(web, f"/agents/{other.id}/patches/{patch_id}/confirm").status_code == 409  # not that agent's


def test_the_panel_shows_the_retention_guard_engaged_and_an_admin_lifts_it(web, admin, client, make_agent):
    agent = make_agent(role="supervisor")
    ids = [write.save(agent.id, f"Core fact number {n}", actor="admin:1").memory.id for n in range(10)]
    token = agent.issue_token()
    db.session.commit()
    headers = {"Authorization": f"Bearer {token}"}
    codes = [client.delete(f"/api/v1/memory/{i}", headers=headers).status_code for i in ids[:6]]
    assert codes == [200] * 5 + [409]  # the free allowance (5), then 80 % of 10 must stay

    panel = web.get(f"/agents/{agent.id}/safeguards", headers={"HX-Request": "true"}).text
    assert "Guarded" in panel and "Lift the guard" in panel

    lifted = post(web, f"/agents/{agent.id}/retention-guard/lift")
    assert lifted.status_code == 200 and "lifted" in lifted.text
    record = db.session.scalar(sa.select(AuditLog).where(AuditLog.action == "retention_guard_lifted"))
    assert record.actor == f"admin:{admin.id}" and record.agent_id == agent.id
    assert client.delete(f"/api/v1/memory/{ids[5]}", headers=headers).status_code == 200
