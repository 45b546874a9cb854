"""The Mechanic's Exception: the consent job, the request form, the view under a grant, expiry and revocation."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from rq import SimpleWorker

from jobs.mechanic import ask_mechanic_consent, expire_lapsed_grants
from jobs.schedule import RECURRING
from models import AuditLog, MechanicGrant, MechanicView, db, utcnow
from models.admins.mechanic import decide_grant, request_grant, revoke_grant
from models.changes.mutations import update_memory
from tests import scripted_llm as s
from tests.browser.support import make_admin, post, signed_in

PURPOSE = "Investigate a reported mix-up between two users' preferences"


@pytest.fixture
def agent(make_agent, make_memory):
    agent = make_agent("mira")
    agent.memory_list = [
        make_memory(agent, f"Mira remembers fact {i}: the user likes tea number {i}.") for i in range(3)
    ]
    return agent


@pytest.fixture
def llm():
    server = s.ScriptedLLM().start()
    yield server
    server.stop()


def _grant(agent, admin, ids=None, minutes=10) -> MechanicGrant:
    scope = "ids" if ids else "all"
    return request_grant(agent.id, admin.id, PURPOSE, scope, ids or [], minutes)


def _live(agent, admin, ids=None) -> MechanicGrant:
    grant = _grant(agent, admin, ids)
    return decide_grant(grant.id, True, decided_by="pre-consent")


# ----- the consent job -----


def test_an_offline_agent_without_standing_consent_declines(agent, admin):
    grant = _grant(agent, admin)
    result = ask_mechanic_consent(grant.id)
    assert result == {"grant_id": grant.id, "status": "declined", "decided_by": "offline-policy"}
    db.session.refresh(grant)
    assert grant.status == "declined" and grant.expires_at is None


def test_standing_consent_given_through_the_agent_api_is_honoured_offline(agent, admin):
    agent.mechanic_preconsent = True
    db.session.commit()
    grant = _grant(agent, admin, minutes=7)
    assert ask_mechanic_consent(grant.id)["status"] == "active"
    db.session.refresh(grant)
    assert grant.decided_by == "pre-consent"
    assert timedelta(minutes=6) < grant.expires_at - utcnow() <= timedelta(minutes=7)
    assert ask_mechanic_consent(grant.id)["status"] == "active"  # safe to re-run: decided once


def test_the_agents_own_model_is_asked_with_purpose_scope_and_duration(app, agent, admin, llm, monkeypatch):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    agent.model_id, agent.base_url = "scripted-model", llm.url
    db.session.commit()
    llm.script = [s.consent(True, "I trust this purpose")]
    grant = _grant(agent, admin, ids=[agent.memory_list[0].id], minutes=15)
    assert ask_mechanic_consent(grant.id)["status"] == "active"
    prompt = llm.requests[0]["messages"][0]["content"]
    assert PURPOSE in prompt and f"#{agent.memory_list[0].id}" in prompt and "15 minute" in prompt
    assert "tools" not in llm.requests[0]
    db.session.refresh(grant)
    assert grant.decided_by == "model"


@pytest.mark.parametrize("answer", [s.consent(False, "no"), s.text("Maybe later, I am not sure.")])
def test_anything_but_an_explicit_yes_from_the_model_is_a_refusal(
    app, agent, admin, llm, monkeypatch, answer
):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    agent.model_id, agent.base_url = "scripted-model", llm.url
    db.session.commit()
    llm.script = [answer]
    grant = _grant(agent, admin)
    assert ask_mechanic_consent(grant.id)["status"] == "declined"


def test_a_model_that_fails_to_answer_declines_and_the_job_fails(
    app, agent, admin, llm, monkeypatch, redis_conn
):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    app.config["LLM_MAX_RETRIES"] = 0
    agent.model_id, agent.base_url = "scripted-model", llm.url
    db.session.commit()
    llm.script = [s.error(500)]
    grant = _grant(agent, admin)
    rq = app.extensions["rq"]
    job = rq.enqueue(ask_mechanic_consent, grant.id, queue="llm")
    SimpleWorker([rq.queue("llm")], connection=redis_conn).work(burst=True)
    assert job.get_status() == "failed"
    db.session.expire_all()
    grant = db.session.get(MechanicGrant, grant.id)
    assert grant.status == "declined" and grant.decided_by == "model-error"


def test_lapsed_grants_are_closed_by_a_recurring_job(agent, admin):
    spec = next(r for r in RECURRING if r.func is expire_lapsed_grants)
    assert (spec.cron, spec.queue) == ("*/5 * * * *", "maintenance")
    grant = _live(agent, admin)
    grant.expires_at = utcnow() - timedelta(seconds=1)
    db.session.commit()
    assert expire_lapsed_grants() == {"expired": 1}
    assert db.session.get(MechanicGrant, grant.id).status == "expired"


# ----- asking, in the console -----


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"purpose": "too short", "scope": "all", "minutes": "10"}, "at least 10 characters"),
        ({"purpose": PURPOSE, "scope": "all", "minutes": "61"}, "1 to 60 minutes"),
        ({"purpose": PURPOSE, "scope": "all", "minutes": "ten"}, "whole number of minutes"),
        ({"purpose": PURPOSE, "scope": "ids", "memory_ids": "1, two", "minutes": "5"}, "List memory ids"),
        (
            {"purpose": PURPOSE, "scope": "ids", "memory_ids": "99999", "minutes": "5"},
            "not found for this agent: #99999",
        ),
        ({"purpose": PURPOSE, "scope": "some", "minutes": "5"}, "Choose a scope"),
    ],
)
def test_a_request_needs_a_purpose_a_scope_and_at_most_sixty_minutes(web, agent, form, message):
    response = post(web, f"/agents/{agent.id}/mechanic", form, htmx=False)
    assert response.status_code == 422 and message in response.text
    assert db.session.scalar(sa.select(sa.func.count()).select_from(MechanicGrant)) == 0


def test_a_request_queues_the_consent_question_and_the_status_polls_until_answered(
    app, web, agent, redis_conn
):
    agent.mechanic_preconsent = True
    db.session.commit()
    ids = f"{agent.memory_list[0].id}, #{agent.memory_list[1].id}"
    asked = post(
        web,
        f"/agents/{agent.id}/mechanic",
        {"purpose": PURPOSE, "scope": "ids", "memory_ids": ids, "minutes": "20"},
        htmx=False,
    )
    assert asked.status_code == 303
    grant = db.session.scalar(sa.select(MechanicGrant))
    assert grant.status == "pending" and grant.memory_ids == sorted(m.id for m in agent.memory_list[:2])
    assert grant.job_id in app.extensions["rq"].queue("interactive").job_ids  # an admin is waiting
    pending = web.get(f"/mechanic/grants/{grant.id}/status", headers={"HX-Request": "true"}).text
    assert 'id="grant-status"' in pending and 'hx-trigger="load delay:1s"' in pending
    SimpleWorker([app.extensions["rq"].queue("interactive")], connection=redis_conn).work(burst=True)
    db.session.expire_all()
    active = web.get(f"/mechanic/grants/{grant.id}/status", headers={"HX-Request": "true"}).text
    assert "hx-trigger" not in active and "Open the mechanic" in active and "data-countdown" in active


# ----- reading under a grant -----


def test_the_mechanics_view_shows_only_the_scope_and_records_every_view(web, agent, admin):
    inside, outside = agent.memory_list[0], agent.memory_list[1]
    grant = _live(agent, admin, ids=[inside.id])
    for _ in range(2):
        page = web.get(f"/mechanic/grants/{grant.id}")
        assert inside.content in page.text and outside.content not in page.text
        assert "data-countdown" in page.text and f"/mechanic/grants/{grant.id}/watch" in page.text
    views = db.session.scalars(sa.select(MechanicView).where(MechanicView.grant_id == grant.id)).all()
    assert len(views) == 2 and all(v.memory_ids == [inside.id] and v.user_id == admin.id for v in views)
    audits = db.session.scalars(sa.select(AuditLog).where(AuditLog.action == "mechanic_view")).all()
    assert len(audits) == 2 and all(a.actor == f"admin:{admin.id}" and a.agent_id == agent.id for a in audits)
    listing = web.get(f"/agents/{agent.id}/mechanic").text
    assert f'data-grant-id="{grant.id}"' in listing and "2 views" in listing


def test_under_a_grant_the_timeline_shows_before_and_after_text_of_covered_memories_only(web, agent, admin):
    inside, outside = agent.memory_list[0], agent.memory_list[1]
    update_memory(agent.id, inside.id, actor="admin:1", content="Inside, reworded.")
    update_memory(agent.id, outside.id, actor="admin:1", content="Outside, reworded.")
    assert "reworded" not in web.get(f"/agents/{agent.id}/audit").text
    grant = _live(agent, admin, ids=[inside.id])
    html = web.get(f"/agents/{agent.id}/audit").text
    assert "Inside, reworded." in html and "the user likes tea number 0." in html  # after and before
    assert "Outside, reworded." not in html and "tea number 1" not in html
    view = db.session.scalar(sa.select(MechanicView).where(MechanicView.grant_id == grant.id))
    assert view.memory_ids == [inside.id] and view.path.startswith(f"/agents/{agent.id}/audit")


def test_a_grant_is_personal_to_the_admin_who_asked(app, web, agent, admin):
    grant = _live(agent, admin)
    make_admin("other@example.com")
    other = signed_in(app, "other@example.com")
    for url in (
        f"/mechanic/grants/{grant.id}",
        f"/mechanic/grants/{grant.id}/status",
        f"/mechanic/grants/{grant.id}/watch",
    ):
        response = other.get(url)
        assert response.status_code == 403 and "tea" not in response.text, url
    assert post(other, f"/mechanic/grants/{grant.id}/revoke").status_code == 403
    assert "tea" not in other.get(f"/agents/{agent.id}/audit").text


def test_the_view_closes_by_itself_on_expiry_and_when_the_agent_revokes(web, agent, admin):
    grant = _live(agent, admin)
    assert web.get(f"/mechanic/grants/{grant.id}/watch").status_code == 204
    grant.expires_at = utcnow() - timedelta(seconds=1)  # the clock runs out
    db.session.commit()
    watch = web.get(f"/mechanic/grants/{grant.id}/watch", headers={"HX-Request": "true"})
    assert watch.headers.get("HX-Refresh") == "true"
    closed = web.get(f"/mechanic/grants/{grant.id}")
    assert "is closed" in closed.text and "tea" not in closed.text

    again = _live(agent, admin)
    assert "tea" in web.get(f"/mechanic/grants/{again.id}").text
    revoke_grant(again.id, actor="agent", agent_id=agent.id)
    assert web.get(f"/mechanic/grants/{again.id}/watch").headers.get("HX-Refresh") == "true"
    assert "tea" not in web.get(f"/mechanic/grants/{again.id}").text
    assert "tea" not in web.get(f"/agents/{agent.id}/audit").text
    listing = web.get(f"/agents/{agent.id}/mechanic").text
    assert "revoked" in listing and "expired" in listing


def test_the_admin_can_close_a_grant_early(web, agent, admin):
    grant = _live(agent, admin)
    closed = post(web, f"/mechanic/grants/{grant.id}/revoke", htmx=False)
    assert closed.status_code == 303
    db.session.refresh(grant)
    assert grant.status == "revoked" and grant.revoked_by == f"admin:{admin.id}"
