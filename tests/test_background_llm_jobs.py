"""ToM insights and journal reflection against the scripted model; offline behaviour without one."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa

from jobs.insights import tom_for_agent
from jobs.reflection import reflect_for_agent
from models import AgentMemory, AuditLog, db, utcnow
from models.mutations import create_memory
from tests import scripted_llm as s


@pytest.fixture
def llm():
    server = s.ScriptedLLM().start()
    yield server
    server.stop()


@pytest.fixture
def agent(make_agent, llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
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
    keep = create_memory(agent.id, "Maya's standing rule: no deploys on Fridays", actor="agent",
                         memory_type="journal", created_at=old)
    big = create_memory(agent.id, "A long lesson " + "about many things " * 20, actor="agent",
                        memory_type="journal", created_at=old)
    chat = create_memory(agent.id, "Chatted about lunch", actor="agent", memory_type="journal", created_at=old)
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
    record = db.session.scalar(sa.select(AuditLog).where(AuditLog.memory_id == keep.id, AuditLog.action == "update"))
    assert record.actor == "system:reflection" and record.after["memory_type"] == "core"
