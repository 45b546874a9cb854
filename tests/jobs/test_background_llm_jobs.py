"""ToM insights and journal reflection against the scripted model; offline behaviour without one."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa

from jobs.insights import tom_for_agent
from jobs.reflection import reflect_for_agent
from models import AgentMemory, AuditLog, db, utcnow
from models.changes.mutations import create_memory
from tests import scripted_llm as s


@pytest.fixture
def agent(app, make_agent, llm, monkeypatch):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    return make_agent(model_id="scripted-model", base_url=llm.url, core_token_budget=60)


def insights(*items) -> s.Step:
    return s.text(json.dumps({"insights": list(items)}))


def test_tom_creates_validated_insights_once_per_day(agent, llm):
    create_memory(agent.id, "Maya apologised for the late review", actor="agent", memory_type="episodic")
    llm.script = [insights({"summary": "Maya builds trust by owning mistakes openly.", "tags": ["trust"]})]

    result = tom_for_agent(agent.id)

    assert result["status"] == "ok" and len(result["created"]) == 1
    memory = db.session.get(AgentMemory, result["created"][0])
    assert (memory.memory_type, memory.category, memory.importance) == ("insight", "relationship_dynamic", 2)
    assert llm.requests[0]["max_tokens"] == 220 and llm.requests[0]["temperature"] == 0
    assert "Maya apologised" in llm.requests[0]["messages"][0]["content"]
    assert tom_for_agent(agent.id)["reason"] == "ran within 24 hours"
    assert len(llm.requests) == 1


def test_tom_rejects_output_that_breaks_the_schema(agent, llm):
    create_memory(agent.id, "Maya shipped the release", actor="agent", memory_type="episodic")
    llm.script = [insights({"summary": "I think the AI helped " + "x" * 300})]
    result = tom_for_agent(agent.id)
    assert result["status"] == "rejected" and result["created"] == []
    assert not db.session.scalar(sa.select(AgentMemory).where(AgentMemory.memory_type == "insight"))


def test_tom_and_reflection_do_nothing_offline(make_agent):
    agent = make_agent()
    create_memory(agent.id, "Something happened", actor="agent", memory_type="episodic")
    assert tom_for_agent(agent.id)["status"] == "skipped"
    assert reflect_for_agent(agent.id)["reason"] == "offline policy: keep journals"


def test_reflection_promotes_within_budget_and_never_asks_twice(agent, llm):
    old = utcnow() - timedelta(days=10)
    keep = create_memory(
        agent.id,
        "Maya's standing rule: no deploys on Fridays",
        actor="agent",
        memory_type="journal",
        created_at=old,
    )
    big = create_memory(
        agent.id,
        "A long lesson " + "about many things " * 20,
        actor="agent",
        memory_type="journal",
        created_at=old,
    )
    chat = create_memory(
        agent.id, "Chatted about lunch", actor="agent", memory_type="journal", created_at=old
    )
    fresh = create_memory(agent.id, "Today's note", actor="agent", memory_type="journal")
    llm.script = [s.text(json.dumps({"promote": [keep.id, big.id, 999], "reason": "lasting rules"}))]

    result = reflect_for_agent(agent.id)

    assert result["promoted"] == [keep.id] and result["held_for_budget"] == [big.id]
    db.session.expire_all()
    assert db.session.get(AgentMemory, keep.id).memory_type == "core"
    assert {db.session.get(AgentMemory, i).memory_type for i in (big.id, chat.id, fresh.id)} == {"journal"}
    prompt = llm.requests[0]["messages"][0]["content"]
    assert f"#{keep.id}" in prompt and f"#{fresh.id}" not in prompt
    assert reflect_for_agent(agent.id)["reason"] == "no aged journals"
    record = db.session.scalar(
        sa.select(AuditLog).where(AuditLog.memory_id == keep.id, AuditLog.action == "update")
    )
    assert record.actor == "system:reflection" and record.after["memory_type"] == "core"


def test_procedures_are_numbered_steps_behind_a_flag_and_stay_out_of_the_prompt(make_agent, app):
    from jobs.extraction import save_procedure
    from models import FeatureDisabled, ValidationFailed

    agent = make_agent()
    with pytest.raises(FeatureDisabled, match="disabled"):
        save_procedure(agent.id, "Deploy", ["Run the tests"])
    app.config["PROCEDURAL_MEMORY"] = True
    with pytest.raises(ValidationFailed):
        save_procedure(agent.id, "Deploy", ["x" * 201])
    memory = save_procedure(
        agent.id, "Deploy the API", ["Run the tests", "Tag the release.", "Watch the error rate"]
    )
    assert (
        memory.content == "Deploy the API:\n1. Run the tests.\n2. Tag the release.\n3. Watch the error rate."
    )
    assert (memory.memory_type, memory.category) == ("procedural", "procedural")
    assert memory.id not in {m.id for m in db.session.scalars(AgentMemory.for_prompt(agent.id))}


def test_multi_fact_extraction_writes_new_facts_within_the_per_turn_cap(agent, llm, app):
    from jobs.extraction import extract_facts

    turn = "We talked through the launch plan at length. " * 12
    assert extract_facts(agent.id, turn)["status"] == "disabled"
    app.config["MULTI_FACT_EXTRACTION"] = True
    assert extract_facts(agent.id, "short")["status"] == "skipped"
    create_memory(agent.id, "Maya owns the launch checklist", actor="agent", memory_type="semantic")
    facts = [{"text": "Maya owns the launch checklist."}] + [
        {"text": f"The launch needs sign-off number {n}", "category": "tasks", "importance": 3}
        for n in range(4)
    ]
    llm.script = [s.text(json.dumps({"facts": facts}))]

    result = extract_facts(agent.id, turn, user_id="u1")

    assert result["status"] == "ok" and len(result["created"]) == 3 and result["skipped"] == 2
    rows = [db.session.get(AgentMemory, i) for i in result["created"]]
    assert all(r.memory_type == "semantic" and r.user_id == "u1" and r.importance == 3 for r in rows)
    assert llm.requests[0]["max_tokens"] == 400
