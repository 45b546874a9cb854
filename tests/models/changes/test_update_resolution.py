"""Update resolution (docs/explanation/background-work.md, "Update resolution"): merge bands with an upper
bound, a numeric step applied as an audited update of the older fact, extraction through the bands, the
writing rules on every write path, and the episodic past-tense rule."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa

from jobs.consolidation import consolidate_agent
from jobs.extraction import extract_facts
from jobs.prefilter import SEMANTIC_BANDS, Candidate, passes, resolve
from models import AgentMemory, AuditLog, db, utcnow
from models.changes.mutations import create_memory
from models.changes.patch_tables import ProposedPatch
from models.changes.timemachine import rollback_session
from tests import scripted_llm as s

OLD = "Maya weighs 70 kg after the spring training block"
NEW = "Maya weighs 72 kg after the spring training block"


def semantic(agent, text: str, days_ago: int = 0, **fields) -> AgentMemory:
    return create_memory(
        agent.id,
        text,
        actor="agent",
        memory_type="semantic",
        created_at=utcnow() - timedelta(days=days_ago),
        **fields,
    )


def row(memory_id: int) -> AgentMemory:
    db.session.expire_all()
    return db.session.get(AgentMemory, memory_id)


def columns(memory_id: int) -> dict:
    memory = row(memory_id)
    return {c.key: getattr(memory, c.key) for c in sa.inspect(AgentMemory).column_attrs}


@pytest.fixture
def model_agent(app, make_agent, llm, monkeypatch, redis_conn):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    monkeypatch.setitem(app.config, "EMBEDDINGS", "hashed")
    return make_agent(model_id="scripted-model", base_url=llm.url)


def test_a_numeric_step_updates_the_older_fact_audited_and_reversible(
    app, make_agent, redis_conn, monkeypatch
):
    monkeypatch.setitem(app.config, "EMBEDDINGS", "hashed")
    agent = make_agent()
    older, newer = semantic(agent, OLD, days_ago=5), semantic(agent, NEW)
    before = {older.id: columns(older.id), newer.id: columns(newer.id)}

    result = consolidate_agent(agent.id)

    assert result["updated"] == 1 and result["merged"] == 0
    assert row(older.id).content == NEW and row(older.id).deleted_at is None
    assert row(older.id).created_at == before[older.id]["created_at"]  # the fact keeps its origin date
    assert row(newer.id).deleted_at is not None
    records = db.session.scalars(
        sa.select(AuditLog).where(AuditLog.session_id == result["session_id"]).order_by(AuditLog.id)
    ).all()
    update = next(r for r in records if r.action == "update")
    assert update.memory_id == older.id and update.actor == "system:consolidation"
    delete = next(r for r in records if r.action == "delete")
    assert (
        delete.memory_id == newer.id
        and delete.data["reason"] == f"superseded: its fact now updates memory #{older.id}"
    )
    link = next(r for r in records if r.action == "update_resolution")
    assert link.data["updated"] == older.id and link.data["superseded"] == newer.id
    assert OLD not in json.dumps([r.data for r in records]) and NEW not in json.dumps(
        [r.data for r in records]
    )

    rollback_session(result["session_id"], actor="admin:1")
    assert {i: columns(i) for i in before} == before  # both rows exactly as they were


def test_two_changed_numbers_are_two_facts_not_an_update():
    assert resolve(OLD, NEW) == "update"
    assert resolve("Project 1 ships on day 10", "Project 2 ships on day 20") is None
    assert resolve("Maya weighs 70 kg", "Maya never weighs 72 kg") is None  # a negation is a different fact
    assert resolve("Ana weighs 70 kg", "Bo weighs 72 kg") is None  # a different person
    assert resolve("Maya weighs 70 kg.", "maya weighs 70 kg") == "same"


def test_the_lexical_pre_filter_band_has_an_upper_bound():
    now = utcnow()
    a = Candidate(1, "The release train leaves every second Tuesday", now)
    b = Candidate(2, "Release trains depart fortnightly on Tuesdays", now)
    # Few shared words: below the check band's upper bound the pre-filter drops the pair ...
    assert not passes(a, b, SEMANTIC_BANDS.check_low - 0.01, now)
    # ... at or above it the vectors already say the texts are close: no lexical requirement.
    assert passes(a, b, SEMANTIC_BANDS.check_low, now)
    assert not passes(a, b, SEMANTIC_BANDS.fallback_low - 0.01, now)


def test_the_model_decides_updates_and_is_not_asked_what_the_same_fact_rule_settles(model_agent, llm):
    agent = model_agent
    twin_a = semantic(agent, "Maya takes her tea without sugar in the morning", days_ago=3)
    twin_b = semantic(agent, "maya takes her tea without sugar in the morning.")
    older, newer = semantic(agent, OLD, days_ago=2), semantic(agent, NEW)
    llm.script = [s.text(json.dumps({"verdicts": [{"pair": 1, "same": False, "update": True}]}))]

    result = consolidate_agent(agent.id)

    assert len(llm.requests) == 1
    prompt = llm.requests[0]["messages"][0]["content"]
    assert f"1. A: {OLD}\n   B: {NEW}" in prompt and "tea" not in prompt  # only the pair the rules left open
    assert result["merged"] == 1 and result["updated"] == 1
    assert row(twin_a.id).deleted_at and row(twin_b.id).deleted_at
    assert row(older.id).content == NEW and row(newer.id).deleted_at is not None


def test_consolidation_checks_the_writing_rules_before_it_writes(app, make_agent, redis_conn, monkeypatch):
    monkeypatch.setitem(app.config, "EMBEDDINGS", "hashed")
    agent = make_agent()
    # Written by an admin's import, past the API's writing rules: a first-person semantic memory.
    first = create_memory(agent.id, "I take two sugars in my coffee", actor="admin:1", memory_type="semantic")
    twin = create_memory(agent.id, "i take two sugars in my coffee.", actor="admin:1", memory_type="semantic")

    result = consolidate_agent(agent.id)

    assert result["merged"] == 0 and result["refused"] == 1
    assert row(first.id).deleted_at is None and row(twin.id).deleted_at is None


def test_consolidation_never_changes_a_sensitive_field_and_pairs_only_within_one_field(
    app, make_agent, redis_conn, monkeypatch
):
    monkeypatch.setitem(app.config, "EMBEDDINGS", "hashed")
    agent = make_agent()
    older = semantic(agent, "The user lives in district 3 of Lyon", days_ago=4, tags=["field:city"])
    newer = semantic(agent, "The user lives in district 5 of Lyon", tags=["field:city"])
    tone = semantic(agent, "The user likes short and direct replies", tags=["field:tone"])
    goals = semantic(agent, "The user likes short and direct replies.", tags=["field:goals"])

    result = consolidate_agent(agent.id)

    assert result["updated"] == 0 and result["merged"] == 0 and result["held"] == 1
    assert row(older.id).content.endswith("district 3 of Lyon") and row(newer.id).deleted_at is None
    patch = db.session.scalar(sa.select(ProposedPatch))
    assert (patch.op, patch.field, patch.memory_id, patch.policy, patch.proposed_by, patch.status) == (
        "update",
        "city",
        older.id,
        "consent",
        "system:consolidation",
        "pending",
    )
    assert (
        row(tone.id).deleted_at is None and row(goals.id).deleted_at is None
    )  # different fields never merge


def test_extraction_runs_each_fact_through_the_writing_rules_the_bands_and_the_consent_policy(
    model_agent, llm, app
):
    agent = model_agent
    app.config["MULTI_FACT_EXTRACTION"] = True
    held_before = semantic(agent, OLD, days_ago=3)
    known = semantic(agent, "Maya owns the launch checklist")
    facts = [
        {
            "text": "I will remember that I love green tea."
        },  # first person: the semantic writing rule refuses it
        {"text": NEW},  # one number changed: updates the fact held before this turn
        {"text": "Maya owns the launch checklist."},  # the same fact: skipped (auto band)
        {"text": "The user lives in Lyon.", "field": "city", "category": "profile"},  # sensitive: held
    ]
    llm.script = [s.text(json.dumps({"facts": facts}))]

    result = extract_facts(
        agent.id, "We talked through the plan at length. " * 12, user_id="u1", thread_id="t1"
    )

    assert result["status"] == "ok" and result["refused"] == 1 and result["skipped"] == 1
    assert result["updated"] == [held_before.id] and result["created"] == []
    assert row(held_before.id).content == NEW and row(known.id).deleted_at is None
    (patch_id,) = result["held"]
    patch = db.session.get(ProposedPatch, patch_id)
    assert (patch.field, patch.policy, patch.proposed_by) == ("city", "consent", "system:extraction")
    assert (
        db.session.scalar(
            sa.select(sa.func.count()).select_from(AgentMemory).where(AgentMemory.agent_id == agent.id)
        )
        == 2
    )  # nothing new was written
    record = db.session.scalar(sa.select(AuditLog).where(AuditLog.action == "update_resolution"))
    assert record.actor == "system:extraction" and record.data["updated"] == held_before.id


def test_facts_of_one_turn_never_update_each_other(model_agent, llm, app):
    app.config["MULTI_FACT_EXTRACTION"] = True
    facts = [{"text": f"The launch needs sign-off number {n}"} for n in range(3)]
    llm.script = [s.text(json.dumps({"facts": facts}))]
    result = extract_facts(model_agent.id, "We talked through the launch plan at length. " * 12)
    assert len(result["created"]) == 3 and result["updated"] == []


def test_episodic_memories_are_written_in_the_past_tense(client, make_agent):
    agent = make_agent(role="supervisor")
    token = agent.issue_token()
    db.session.commit()
    headers = {"Authorization": f"Bearer {token}"}

    def save(content):
        return client.post(
            "/api/v1/memory",
            headers=headers,
            json={"content": content, "memory_type": "episodic", "category": "event"},
        )

    refused = save("Maya is planning the launch for next week.")
    assert refused.status_code == 422 and refused.get_json()["rule"] == "episodic.past_tense"
    assert save("Maya will ship the launch tomorrow.").get_json()["rule"] == "episodic.past_tense"
    assert save("Maya planned the launch for next week.").status_code == 201
    assert save("Ana met Bo at the harbour and they agreed on a date.").status_code == 201
