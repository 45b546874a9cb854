"""Refinement sessions against a scripted model over real HTTP: invariants 1-5, 8 and 9."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa

from jobs.prompts import ledger_line
from jobs.refinement import run_refinement
from models import Agent, AgentMemory, AuditLog, RefinementSession, db, utcnow
from models.changes.mutations import create_memory
from models.refinement.toolbox import HARD_CAP, TERMINATED_MESSAGE, RefinementToolbox
from tests import scripted_llm as s


@pytest.fixture
def agent(app, make_agent, llm, monkeypatch, redis_conn):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    return make_agent(model_id="scripted-model", base_url=llm.url, core_token_budget=100)


def seed(agent, n: int = 20, **fields) -> list[AgentMemory]:
    start = utcnow() - timedelta(days=200)
    return [
        create_memory(
            agent.id,
            f"Distinct memory number {i} about topic {i * 7}",
            actor="admin:seed",
            created_at=start + timedelta(days=i),
            **fields,
        )
        for i in range(n)
    ]


def state(agent_id: int) -> dict[int, dict]:
    """Every column of every memory of the agent."""
    db.session.expire_all()
    rows = db.session.scalars(sa.select(AgentMemory).where(AgentMemory.agent_id == agent_id)).all()
    return {r.id: {c.key: getattr(r, c.key) for c in sa.inspect(AgentMemory).column_attrs} for r in rows}


def core_state(agent_id: int) -> dict[int, dict]:
    return {i: row for i, row in state(agent_id).items() if row["memory_type"] == "core"}


def tool_results(llm: s.ScriptedLLM) -> list[dict]:
    """What the toolbox answered, as the model saw it in the last request."""
    last = llm.tool_requests[-1]
    return [json.loads(m["content"]) for m in last["messages"] if m["role"] == "tool"]


def run(agent) -> dict:
    return run_refinement(agent.id, "test", force=True)


# ----- outcomes -----


def test_zero_operation_session_completes_and_writes_the_journal(agent, llm):
    seed(agent, 5)
    before = core_state(agent.id)
    llm.script = [s.consent(), s.complete("No duplicates; zero operations")]

    result = run(agent)

    assert result["status"] == "completed" and result["ops"] == 0
    assert core_state(agent.id) == before
    journal = db.session.scalar(sa.select(AgentMemory).where(AgentMemory.memory_type == "journal"))
    assert journal.content == "Refinement session: No duplicates; zero operations"
    assert db.session.get(Agent, agent.id).last_refinement_at is not None
    done = db.session.scalar(sa.select(AuditLog).where(AuditLog.action == "refinement_complete"))
    assert done.session_id == result["session_id"] and done.data["ops"] == 0
    assert result["turns"] == 2 and result["prompt_tokens"] == 200 and result["model"] == "scripted-model"


def test_normal_session_consolidates_true_duplicates_keeping_the_earliest_date(agent, llm):
    memories = seed(agent, 10)
    a = create_memory(
        agent.id,
        "Maya takes her tea without sugar",
        actor="admin:seed",
        created_at=utcnow() - timedelta(days=300),
    )
    b = create_memory(agent.id, "Maya drinks tea without sugar", actor="admin:seed")
    llm.script = [
        s.consent(),
        s.tools(
            ("consolidate_memories", {"ids": [a.id, b.id], "new_content": "Maya takes tea without sugar"}),
            ("update_memory", {"id": memories[0].id, "content": "Memory 0 on topic 0"}),
        ),
        s.complete("Merged 2 duplicates"),
    ]

    result = run(agent)

    assert result["status"] == "completed" and result["ops"] == 2
    assert all(r["ok"] for r in tool_results(llm))
    merged = db.session.scalar(
        sa.select(AgentMemory).where(AgentMemory.content == "Maya takes tea without sugar")
    )
    assert merged.created_at == a.created_at
    records = db.session.scalars(sa.select(AuditLog).where(AuditLog.session_id == result["session_id"])).all()
    assert {r.action for r in records} >= {
        "consolidate",
        "consolidate_source",
        "update",
        "refinement_complete",
    }
    assert all(r.actor == "agent" for r in records)
    assert result["stats"]["consolidations"] == 1 and result["stats"]["updated"] == 1


def test_nuclear_model_trips_the_breaker_and_nothing_survives(agent, llm):
    memories = seed(agent, 30)
    before = core_state(agent.id)
    ids = [m.id for m in memories]
    nuclear = [("delete_memory", {"id": i}) for i in ids[:20]] + [
        ("consolidate_memories", {"ids": ids[20:30], "new_content": "Everything, summarised."})
    ]
    llm.script = [s.consent(), s.tools(*nuclear), s.tools(("delete_memory", {"ids": ids[:5]}))]

    result = run(agent)

    assert result["status"] == "terminated"
    assert core_state(agent.id) == before  # the whole session rolled back, every column exact
    results = tool_results(llm) if len(llm.tool_requests) > 1 else None
    session = db.session.get(RefinementSession, result["session_id"])
    assert "circuit breaker" in session.error and session.stats["breaker_trips"] == 1
    # The breaker trips at 80% of 30 memories: the 7th deletion; nothing after it lands.
    assert result["tokens_after"] == result["tokens_before"]
    assert len(llm.tool_requests) == 1 and results is None  # the loop stopped: no further turn


def test_fifteen_deletions_in_one_message_stop_at_the_hard_cap(agent, llm, app):
    agent.min_retention = 0.5
    db.session.commit()
    memories = seed(agent, 60)
    llm.script = [
        s.consent(),
        s.tools(*[("delete_memory", {"id": m.id}) for m in memories[:15]]),
        s.complete("done"),
    ]

    result = run(agent)

    outcomes = tool_results(llm)
    assert [o["ok"] for o in outcomes] == [True] * HARD_CAP + [False] * 5
    assert {o["error"] for o in outcomes[HARD_CAP:]} == {"hard_cap"}
    assert result["ops"] == HARD_CAP and result["status"] == "completed"
    assert sum(1 for m in core_state(agent.id).values() if m["deleted_at"] is not None) == HARD_CAP


def test_locked_and_foreign_memories_are_refused_and_unchanged(agent, llm, make_agent):
    seed(agent, 10)
    vow = create_memory(agent.id, "I never lie", actor="admin:seed", constitutional=True)
    voice = create_memory(agent.id, "Her voice at the harbour", actor="admin:seed", tags=["voice"])
    twin = create_memory(agent.id, "Her voice at the harbour.", actor="admin:seed")
    stranger = make_agent()
    foreign = create_memory(stranger.id, "Someone else's memory", actor="admin:seed")
    before, foreign_before = core_state(agent.id), state(stranger.id)
    llm.script = [
        s.consent(),
        s.tools(
            ("delete_memory", {"id": vow.id}),
            ("consolidate_memories", {"ids": [vow.id, twin.id], "new_content": "x"}),
            ("update_memory", {"id": voice.id, "content": "A voice"}),
            ("consolidate_memories", {"ids": [voice.id, twin.id], "new_content": "A voice"}),
            ("delete_memory", {"id": foreign.id}),
            ("update_memory", {"id": foreign.id, "content": "mine"}),
            ("delete_memory", {"id": 987654}),
            ("protect_memory", {"id": foreign.id}),
        ),
        s.complete("Nothing to do"),
    ]

    result = run(agent)

    codes = [o.get("error") for o in tool_results(llm)]
    assert codes == [
        "constitutional",
        "constitutional",
        "immutable",
        "immutable",
        "not_found",
        "not_found",
        "not_found",
        "not_found",
    ]
    assert result["ops"] == 0 and result["status"] == "completed"
    assert core_state(agent.id) == before and state(stranger.id) == foreign_before
    # A refusal names ids, never content.
    assert "harbour" not in json.dumps(tool_results(llm))


def test_malformed_arguments_get_structured_errors_and_change_nothing(agent, llm):
    memories = seed(agent, 10)
    create_memory(agent.id, "Discount is 50% off for members", actor="admin:seed")
    create_memory(agent.id, "Discount is 50 percent off", actor="admin:seed")
    before = core_state(agent.id)
    llm.script = [
        s.consent(),
        s.tools(
            ("delete_memory", "{not json"),
            ("update_memory", {"id": "abc", "content": "x"}),
            ("update_memory", {"id": memories[0].id, "content": ""}),
            ("update_memory", {"id": memories[0].id, "content": "x" * 10_001}),
            ("consolidate_memories", {"ids": [memories[0].id], "new_content": "x"}),
            ("consolidate_memories", {"ids": "1,2", "new_content": "x"}),
            ("delete_memory", {"id": memories[0].id, "ids": [memories[1].id]}),
            ("delete_memory", {}),
            ("launch_missiles", {}),
            ("search_memories", {"query": "50%"}),
            ("search_memories", {"query": "_"}),
            ("search_memories", {"query": "memory", "since": "yesterday"}),
        ),
        s.complete("done"),
    ]

    result = run(agent)

    outcomes = tool_results(llm)
    assert [o.get("error") for o in outcomes[:9]] == ["bad_arguments"] * 5 + [
        "bad_arguments",
        "refused",
        "refused",
        "unknown_tool",
    ]
    assert outcomes[9]["ok"] and outcomes[9]["count"] == 1  # % is literal
    assert outcomes[10]["ok"] and outcomes[10]["count"] == 0  # _ is literal
    assert outcomes[11]["error"] == "refused" and "date" in outcomes[11]["message"]
    assert result["ops"] == 0 and core_state(agent.id) == before


def test_calls_after_termination_are_refused_and_change_nothing(agent, llm):
    memories = seed(agent, 10)
    llm.script = [s.consent(), s.tools(("delete_memory", {"ids": [m.id for m in memories[:3]]}))]
    result = run(agent)
    assert result["status"] == "terminated"
    after = core_state(agent.id)

    toolbox = RefinementToolbox(result["session_id"])
    for name, args in [
        ("delete_memory", {"id": memories[5].id}),
        ("update_memory", {"id": memories[6].id, "content": "x"}),
        ("complete_refinement", {"summary": "sneaky"}),
        ("search_memories", {"query": "memory"}),
    ]:
        assert toolbox.call(name, args) == {"ok": False, "error": "terminated", "message": TERMINATED_MESSAGE}
    assert core_state(agent.id) == after
    assert db.session.get(RefinementSession, result["session_id"]).status == "terminated"


def test_model_that_never_completes_ends_incomplete_keeping_its_changes(agent, llm, app):
    app.config["REFINEMENT_MAX_TURNS"] = 4
    memories = seed(agent, 10)
    llm.script = [
        s.consent(),
        s.tools(("update_memory", {"id": memories[0].id, "content": "Tighter memory 0"})),
    ]
    llm.fallback = s.text("Let me think about it some more.")

    result = run(agent)

    assert result["status"] == "incomplete" and result["ops"] == 1 and result["turns"] == 5
    assert db.session.get(AgentMemory, memories[0].id).content == "Tighter memory 0"
    # The nudge is a new user turn; the system prompt never changes.
    assert llm.tool_requests[-1]["messages"][-1]["role"] == "user"


def test_rate_limit_then_server_error_are_retried_before_success(agent, llm):
    seed(agent, 5)
    llm.script = [s.error(429), s.error(500), s.consent(), s.error(503), s.complete("ok")]

    result = run(agent)

    assert result["status"] == "completed"
    assert len(llm.requests) == 5


def test_consent_declined_is_recorded_and_changes_nothing(agent, llm):
    seed(agent, 5)
    before = core_state(agent.id)
    llm.script = [s.consent(False, "Not today")]

    result = run(agent)

    assert result["status"] == "consent_declined"
    assert core_state(agent.id) == before
    assert llm.tool_requests == []  # the tools were never offered
    assert db.session.scalar(sa.select(AuditLog).where(AuditLog.action == "refinement_consent_declined"))


def test_unclear_consent_counts_as_a_refusal(agent, llm):
    seed(agent, 3)
    llm.script = [s.text("Hmm, maybe later?")]
    assert run(agent)["status"] == "consent_declined"


def test_prompt_prefix_is_byte_identical_across_turns_and_follows_the_ledger_format(agent, llm):
    memories = seed(agent, 6)
    create_memory(agent.id, "Keep this promise", actor="admin:seed", constitutional=True, tags=["vow"])
    soft_deleted = create_memory(agent.id, "Deleted secret", actor="admin:seed")
    from models.changes.mutations import soft_delete_memories

    soft_delete_memories(agent.id, [soft_deleted.id], actor="admin:seed")
    llm.script = [
        s.consent(),
        s.tools(("search_memories", {"query": "memory"})),
        s.text("thinking"),
        s.complete("done"),
    ]

    run(agent)

    systems = [r["messages"][0] for r in llm.tool_requests]
    assert len(systems) == 3 and all(m == systems[0] for m in systems)
    prompt = systems[0]["content"]
    assert (
        prompt.index("DE-DUPLICATION")
        < prompt.index("## Your refinement instructions")
        < prompt.index("## Token status")
        < prompt.index("## Your core memory ledger")
    )
    assert (
        "Bias toward completing with zero operations" in prompt
    )  # docs/spec/002-refinement-lessons.md default
    assert ledger_line(memories[0]) in prompt
    first = memories[0]
    assert ledger_line(first) == (
        f"- #{first.id} ({first.created_at:%Y-%m-%d}, ~{first.token_estimate} tokens): {first.content}"
    )
    assert "[CONSTITUTIONAL] [vow]: Keep this promise" in prompt
    assert "Deleted secret" not in prompt  # soft-deleted never reaches a prompt
    names = {t["function"]["name"] for t in llm.tool_requests[0]["tools"]}
    assert names == {
        "search_memories",
        "consolidate_memories",
        "update_memory",
        "delete_memory",
        "protect_memory",
        "complete_refinement",
    }


def test_agent_refinement_prompt_replaces_the_default(agent, llm):
    from models.changes.agent_settings import set_refinement_prompt

    seed(agent, 3)
    set_refinement_prompt(agent.id, "Only merge exact quotes.")
    llm.script = [s.consent(), s.complete("ok")]
    run(agent)
    prompt = llm.tool_requests[0]["messages"][0]["content"]
    assert "Only merge exact quotes." in prompt and "Bias toward completing" not in prompt


def test_skips_without_core_memories_or_when_recently_refined_within_budget(agent, llm):
    assert run_refinement(agent.id, "schedule")["status"] == "skipped"
    seed(agent, 2)
    agent.last_refinement_at = utcnow()
    db.session.commit()
    assert run_refinement(agent.id, "schedule")["status"] == "skipped"
    assert llm.requests == []


def test_offline_refiner_merges_only_true_duplicates(make_agent, redis_conn):
    agent = make_agent(core_token_budget=50)
    seed(agent, 10)
    a = create_memory(agent.id, "User Maya prefers tea in the morning.", actor="admin:seed")
    b = create_memory(agent.id, "The user Maya prefers tea in the morning", actor="admin:seed")
    c = create_memory(agent.id, "User Mia prefers tea in the morning.", actor="admin:seed")
    d = create_memory(agent.id, "Standup moved to 3pm on Friday.", actor="admin:seed")
    e = create_memory(agent.id, "Standup moved to 4pm on Friday.", actor="admin:seed")

    result = run_refinement(agent.id, "test", force=True)

    assert result["status"] == "completed" and result["model"] == "offline" and result["ops"] == 1
    rows = state(agent.id)
    assert rows[a.id]["deleted_at"] and rows[b.id]["deleted_at"]
    assert all(rows[i]["deleted_at"] is None for i in (c.id, d.id, e.id))
    assert run_refinement(agent.id, "test", force=True)["ops"] == 0  # nothing left to merge
