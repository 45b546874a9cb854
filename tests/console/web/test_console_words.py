"""The console's words: who did the work when no model is configured, the consent answer, sizes people
read, grants revoked by an admin's email, and date-time pickers read in the admin's own time zone."""

from __future__ import annotations

import re

from flask import g

from console.agents.outcome import session_outcome
from console.web.filters import size
from jobs.refinement import run_refinement
from models import RefinementSession, db
from models.admins.mechanic import decide_grant, request_grant, revoke_grant
from models.changes.mutations import create_memory
from tests.browser.support import ADMIN_EMAIL


def _refined(make_agent, name: str):
    agent = make_agent(name, core_token_budget=100)
    for i in range(12):
        create_memory(agent.id, f"{name} fact {i}: review {i} is on day {i + 3}.", actor="admin:seed")
    create_memory(agent.id, f"{name} FACT 1: review 1 is on day 4!", actor="admin:seed")
    db.session.commit()
    session = db.session.get(RefinementSession, run_refinement(agent.id, "console", force=True)["session_id"])
    db.session.commit()
    return agent, session


def test_with_no_model_configured_the_outcome_names_the_built_in_refiner_and_the_policys_answer(
    app, make_agent, redis_conn
):
    agent, session = _refined(make_agent, "offline")
    with app.test_request_context():
        story = session_outcome(session, agent, agent.core_tokens)
    assert story.headline == "The built-in offline refiner made 1 operation."
    told = " ".join(story.during)
    assert "The built-in policy (no model configured) answered the consent question: yes." in told
    assert "The model" not in story.headline + told and "gave a reason" not in told


def test_the_timeline_gives_the_consent_answer_and_who_gave_it(web, make_agent):
    agent, _ = _refined(make_agent, "consenting")
    html = web.get(f"/agents/{agent.id}/audit").text
    assert "the built-in policy (no model configured) answered yes" in html
    assert "decided by: policy" not in html


def test_sizes_read_in_kib_and_mib_and_storage_labels_are_words(web, make_agent):
    assert (size(0), size(1), size(1536), size(64 * 1024 * 1024), size(3 * 1024**3)) == (
        "0 bytes",
        "1 byte",
        "1.5 KiB",
        "64 MiB",
        "3 GiB",
    )
    agent = make_agent("stored")
    panel = web.get(f"/agents/{agent.id}/quotas").text
    assert re.search(r'class="checkpoint-size">0 bytes of [\d.]+ [KMG]iB<', panel)
    assert "67,108,864" not in panel and "the most this agent may store" in panel


def test_a_grant_revoked_by_an_admin_names_the_admin_by_email(web, admin, make_agent):
    agent = make_agent("inspected")
    memory = create_memory(agent.id, "inspected fact: the meeting moved to Friday.", actor="admin:seed")
    grant = request_grant(agent.id, admin.id, "A user reports a wrong meeting day.", "ids", [memory.id], 10)
    decide_grant(grant.id, True, decided_by="pre-consent")
    revoke_grant(grant.id, actor=admin.actor)
    db.session.commit()
    row = re.search(
        rf'<tr data-grant-id="{grant.id}">.*?</tr>', web.get(f"/agents/{agent.id}/mechanic").text, re.S
    )
    assert "revoked" in row.group(0) and f"by {ADMIN_EMAIL}" in row.group(0)
    assert f"admin:{admin.id}" not in row.group(0)


def test_date_time_pickers_are_read_and_shown_in_the_admins_time_zone(web, make_agent):
    agent = make_agent("zoned")
    create_memory(agent.id, "zoned fact: the launch is in spring.", actor="admin:seed")
    db.session.commit()
    web.set_cookie("tz", "Europe/Paris")
    g.pop("display_zone", None)  # the test keeps one app context: forget the zone an earlier request read
    # 05:00 in Paris in November is 04:00 UTC: the confirm step names the local time and posts the UTC one.
    dialog = web.get(
        f"/agents/{agent.id}/rollback?to=2026-11-22T05:00:00", headers={"HX-Request": "true"}
    ).text
    assert "back to 2026-11-22 05:00:00 CET" in dialog
    assert 'name="to" value="2026-11-22T04:00:00.000000Z"' in dialog
    # A time with its offset is taken as it is, whatever the zone.
    exact = web.get(
        f"/agents/{agent.id}/rollback?to=2026-11-22T05:00:00Z", headers={"HX-Request": "true"}
    ).text
    assert 'name="to" value="2026-11-22T05:00:00.000000Z"' in exact
    # The timeline's filters are date-time pickers holding the local time, the zone named beside them.
    page = web.get(f"/agents/{agent.id}/audit?since=2026-11-22T05:00:00").text
    assert '<input type="datetime-local" step="1" name="since" value="2026-11-22T05:00:00">' in page
    assert "times in Europe/Paris" in page and 'id="pit-to" type="datetime-local"' in page
