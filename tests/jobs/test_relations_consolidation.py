"""Relations layer and daily consolidation: edges, caps, fingerprints, locks, rollback."""

from __future__ import annotations

import json

import sqlalchemy as sa

from jobs.consolidation import consolidate_agent
from jobs.relations import embed_memories, link_pending, link_related
from models import AgentMemory, AuditLog, MemoryRelation, PairFingerprint, RefinementSession, db
from models.changes.mutations import create_memory, update_memory
from models.changes.timemachine import rollback_session
from models.retrieval.relations import neighbours
from tests import scripted_llm as s


def semantic(agent, text: str, **fields) -> AgentMemory:
    return create_memory(agent.id, text, actor="agent", memory_type="semantic", **fields)


def active(memory_id: int) -> bool:
    db.session.expire_all()
    return db.session.get(AgentMemory, memory_id).deleted_at is None


def test_related_memories_are_linked_once_with_their_score_and_audited(make_agent):
    agent = make_agent()
    a = semantic(agent, "Maya prefers green tea in the morning before work")
    b = semantic(agent, "Maya prefers green tea in the morning before the standup")
    c = semantic(agent, "The quarterly platform budget is 120 thousand euros")

    added = link_related(agent.id, [a.id, b.id, c.id])

    edges = db.session.scalars(sa.select(MemoryRelation)).all()
    assert added == 1 and [(e.from_id, e.to_id) for e in edges] == [(a.id, b.id)]
    assert 0.6 <= edges[0].strength <= 1.0
    assert link_related(agent.id, [a.id, b.id, c.id]) == 0  # deduplicated by pair
    strongest = {m.id: [(n.id, n.strength) for n in neighbours(agent.id, [m.id])] for m in (a, b, c)}
    assert strongest == {a.id: [(b.id, edges[0].strength)], b.id: [(a.id, edges[0].strength)], c.id: []}
    # Each end of the edge gets a metadata-only `link` record naming it, so the link is in both histories
    # (before, the record named no memory and the link was in neither).
    records = db.session.scalars(
        sa.select(AuditLog).where(AuditLog.action == "link").order_by(AuditLog.id)
    ).all()
    assert [(r.actor, r.memory_id, r.data["linked"][0][0]) for r in records] == [
        ("system:relations", a.id, b.id),
        ("system:relations", b.id, a.id),
    ]
    assert all(r.before is None and r.after is None for r in records)


def test_embeddings_are_refreshed_when_content_changes_and_catch_up_links_new_rows(make_agent):
    agent = make_agent()
    a = semantic(agent, "Lena runs the payments on-call rotation")
    semantic(agent, "Lena runs the payments on-call rotation this quarter")
    assert embed_memories(agent.id) == 2 and embed_memories(agent.id) == 0
    update_memory(agent.id, a.id, actor="agent", content="Lena leads the payments on-call rotation")
    assert embed_memories(agent.id) == 1
    assert link_pending()["memories"] == 0  # everything current
    semantic(agent, "Lena leads the payments on-call rotation now")
    caught_up = link_pending()
    assert caught_up["memories"] == 1 and caught_up["edges"] >= 1  # it resembles both earlier memories


def test_offline_consolidation_merges_only_true_duplicates_and_respects_locks(make_agent, redis_conn):
    agent = make_agent()
    first = semantic(agent, "Maya takes two sugars in her coffee", importance=3)
    twin = semantic(agent, "maya takes two sugars in her coffee.")
    near = semantic(agent, "Maya takes three sugars in her coffee")
    vow = semantic(agent, "Maya never shares her phone number", constitutional=False)
    vow_twin = create_memory(
        agent.id,
        "Maya never shares her phone number.",
        actor="admin:1",
        memory_type="semantic",
        constitutional=True,
    )
    voice = semantic(agent, "Her laugh at the harbour", tags=["voice"])
    voice_twin = semantic(agent, "her laugh at the harbour")

    result = consolidate_agent(agent.id)

    assert result["status"] == "completed" and result["merged"] == 1
    assert not active(first.id) and not active(twin.id)
    assert all(active(m.id) for m in (near, vow, vow_twin, voice, voice_twin))
    merged = db.session.scalar(
        sa.select(AgentMemory).where(AgentMemory.content == first.content, AgentMemory.deleted_at.is_(None))
    )
    assert merged.created_at == first.created_at and merged.memory_type == "semantic"
    session = db.session.get(RefinementSession, result["session_id"])
    assert (session.trigger, session.status, session.model) == ("consolidation", "completed", "offline")

    again = consolidate_agent(agent.id)
    assert again.get("merged", 0) == 0  # idempotent: nothing more to merge

    rollback_session(result["session_id"], actor="admin:1")
    assert active(first.id) and active(twin.id) and not active(merged.id)


def test_consolidation_respects_the_daily_pair_cap(make_agent, redis_conn, app):
    app.config["CONSOLIDATION_PAIRS_PER_DAY"] = 2
    agent = make_agent()
    for i in range(5):
        semantic(agent, f"Project {i} ships on day {i * 10}")
        semantic(agent, f"project {i} ships on day {i * 10}.")
    assert consolidate_agent(agent.id)["checked"] == 2
    assert consolidate_agent(agent.id)["checked"] == 0  # the day's cap is spent
    assert db.session.scalar(sa.select(sa.func.count()).select_from(PairFingerprint)) == 2


def test_model_checks_pairs_in_batches_within_a_token_budget_and_fingerprints_suppress_rechecks(
    make_agent, redis_conn, llm, monkeypatch, app
):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    agent = make_agent(model_id="scripted-model", base_url=llm.url)
    for i in range(10):
        semantic(agent, f"Release {i} is scheduled for sprint {i}")
        semantic(agent, f"Release {i} is scheduled for sprint {i} again")
    app.config["CONSOLIDATION_TOKEN_BUDGET"] = 100  # one batch of 8 pairs costs 120 tokens
    llm.script = [
        s.text(
            json.dumps(
                {"verdicts": [{"pair": 1, "same": True}] + [{"pair": n, "same": False} for n in range(2, 9)]}
            )
        )
    ]

    result = consolidate_agent(agent.id)

    assert len(llm.requests) == 1 and llm.requests[0]["max_tokens"] == 300
    assert "1. A: Release" in llm.requests[0]["messages"][0]["content"]
    assert result["checked"] == 8 and result["merged"] == 1
    llm.script = [s.text(json.dumps({"verdicts": [{"pair": n, "same": False} for n in range(1, 9)]}))]
    again = consolidate_agent(agent.id)
    assert len(llm.requests) == 2 and again["merged"] == 0

    def asked(request) -> set[frozenset[str]]:
        lines = request["messages"][0]["content"].splitlines()
        texts = [
            line.split(": ", 1)[1]
            for line in lines
            if line.lstrip().startswith(("A: ", "B: ")) or ". A: " in line
        ]
        return {frozenset(texts[i : i + 2]) for i in range(0, len(texts), 2)}

    assert len(asked(llm.requests[0])) == 8 and len(asked(llm.requests[1])) >= 1
    assert asked(llm.requests[0]).isdisjoint(asked(llm.requests[1]))  # fingerprinted pairs are not re-asked
