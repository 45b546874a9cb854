"""the session story's facts, and the over-budget scan holding
an agent whose last session found nothing to do until one of its memories changes."""

from __future__ import annotations

from datetime import timedelta

from console.agents.outcome import session_outcome
from jobs.refinement import run_refinement
from models import AgentMemory, RefinementSession, db, utcnow
from models.changes.mutations import create_memory, set_constitutional
from models.refinement.due import held_agents, over_budget_due

LATER = timedelta(days=2)  # past the scan's 24 h cool-down


def _over_budget_agent(make_agent, name: str, duplicates: int = 0, variants: bool = False):
    agent = make_agent(name, core_token_budget=100)
    for i in range(12):
        create_memory(agent.id, f"{name} fact {i}: review {i} is on day {i + 3}.", actor="admin:seed")
    for _ in range(duplicates):
        create_memory(agent.id, f"{name} fact 0: review 0 is on day 3.", actor="admin:seed")
    if variants:
        create_memory(agent.id, f"{name} FACT 1: review 1 is on day 4!", actor="admin:seed")
    db.session.commit()
    return agent


def test_the_over_budget_scan_holds_an_agent_whose_last_session_found_nothing_until_a_memory_changes(
    app, make_agent, redis_conn
):
    idle = _over_budget_agent(make_agent, "idle", duplicates=2)
    busy = _over_budget_agent(make_agent, "busy", variants=True)
    assert run_refinement(idle.id, "over_budget", force=True)["ops"] == 0
    assert run_refinement(busy.id, "over_budget", force=True)["ops"] == 1
    db.session.commit()
    later = utcnow() + LATER
    assert over_budget_due(now=later) == [busy.id]  # the session that worked is not held
    assert held_agents([idle.id, busy.id]) == {idle.id}
    # A change to a memory (here: an admin locks one) lets the scan try again.
    memory = db.session.scalars(AgentMemory.active_core(idle.id)).first()
    set_constitutional(idle.id, memory.id, True, actor="admin:test")
    db.session.commit()
    assert over_budget_due(now=later) == sorted([busy.id, idle.id])
    assert held_agents([idle.id]) == set()


def test_a_declined_session_holds_the_agent_too(app, make_agent, redis_conn):
    agent = _over_budget_agent(make_agent, "decliner")
    session = RefinementSession(
        agent_id=agent.id,
        trigger="over_budget",
        status="consent_declined",
        started_at=utcnow(),
        finished_at=utcnow(),
        ops_count=0,
    )
    db.session.add(session)
    db.session.commit()
    assert agent.id not in over_budget_due(now=utcnow() + LATER)


def test_the_story_separates_dedup_from_the_models_work_and_says_what_to_do(app, make_agent, redis_conn):
    agent = _over_budget_agent(make_agent, "storied", duplicates=3)
    before_dedup = agent.core_tokens
    result = run_refinement(agent.id, "over_budget", force=True)
    db.session.commit()
    session = db.session.get(RefinementSession, result["session_id"])
    db.session.refresh(agent)
    with app.test_request_context():
        story = session_outcome(session, agent, agent.core_tokens, held=True)
    assert story.headline == "The built-in offline refiner chose to change nothing."
    assert f"core went from {before_dedup:,} to {session.tokens_before:,} tokens" in story.before[0]
    assert "removed 3 exact duplicates" in story.before[0]
    assert (
        story.now.startswith(f"Now {agent.core_tokens:,} of 100 core tokens")
        and "over budget by" in story.now
    )
    assert [s.link for s in story.next_steps if s.link] == [
        "Budget settings",
        "Model setting",
        "Largest memories",
    ]
    assert "until one of its memories changes" in story.next_steps[-1].text
    assert story.tone == "warn"
