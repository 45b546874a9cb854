"""An agent that names a model with no endpoint to call it on is reported, never quietly run offline.

The offline policy stands in only when an agent has no model (or LLM_OFFLINE=1). A `model_id` with no
`base_url`, `OPENAI_BASE_URL` or `OPENAI_API_KEY` is a configuration error: the refinement session fails
naming the setting (tests/console/api/test_spec_gaps.py), and the background jobs that would call the model skip
with that same message and change nothing — the admin must not believe the agent's model did the work.
"""

from __future__ import annotations

import sqlalchemy as sa

from jobs.consolidation import consolidate_agent
from jobs.extraction import extract_facts
from jobs.insights import tom_for_agent
from jobs.llm import missing_endpoint
from jobs.mechanic import ask_mechanic_consent
from jobs.reflection import reflect_for_agent
from models import AgentMemory, AuditLog, db
from models.admins.mechanic import request_grant
from models.admins.user import create_admin
from models.changes.mutations import create_memory


def _no_endpoint(app, monkeypatch):
    monkeypatch.setitem(app.config, "OPENAI_BASE_URL", None)
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", None)


def _counts() -> tuple[int, int]:
    return (
        db.session.scalar(sa.select(sa.func.count()).select_from(AgentMemory)),
        db.session.scalar(sa.select(sa.func.count()).select_from(AuditLog)),
    )


def test_background_jobs_skip_an_unreachable_model_naming_the_setting(
    app, redis_conn, make_agent, monkeypatch
):
    _no_endpoint(app, monkeypatch)
    app.config["MULTI_FACT_EXTRACTION"] = True
    agent = make_agent(model_id="some-model")
    for text in ("The user likes tea.", "the user likes tea", "Visited Porto last spring."):
        create_memory(agent.id, text, actor="agent", memory_type="semantic")
    create_memory(agent.id, "Went to the market yesterday.", actor="agent", memory_type="episodic")
    before = _counts()

    message = missing_endpoint(agent)
    assert message and "OPENAI_BASE_URL" in message and "some-model" in message
    results = [
        consolidate_agent(agent.id),
        tom_for_agent(agent.id),
        reflect_for_agent(agent.id),
        extract_facts(agent.id, "My sister moved to Lisbon last month and she loves her new job there. " * 8),
    ]
    for result in results:
        assert result["status"] == "skipped" and result["reason"] == message, result
    db.session.expire_all()
    assert _counts() == before  # nothing written, and no "offline" merge of the same-fact pair


def test_the_offline_policy_still_applies_to_an_agent_without_a_model(
    app, redis_conn, make_agent, monkeypatch
):
    _no_endpoint(app, monkeypatch)
    agent = make_agent()
    assert missing_endpoint(agent) is None
    assert reflect_for_agent(agent.id)["reason"] == "offline policy: keep journals"


def test_the_mechanic_consent_question_says_the_model_cannot_be_called(
    app, redis_conn, make_agent, monkeypatch
):
    _no_endpoint(app, monkeypatch)
    admin = create_admin("mechanic@example.com", "correct horse battery staple")
    agent = make_agent(model_id="some-model")
    grant = request_grant(agent.id, admin.id, "Checking why the agent repeats itself", "all", None, 10)
    result = ask_mechanic_consent(grant.id)
    assert result["status"] == "declined"
    db.session.expire_all()
    grant = db.session.get(type(grant), grant.id)
    assert (
        grant.decision_reason == "its model cannot be called (no endpoint configured) and no standing consent"
    )
