"""`flask --app wsgi demo`: a realistic, deterministic demo data set, written only through the mutation path.

Five agents (one per role of the shipped allowlists), a few hundred first-person memories imported with
origin dates spread over the past nine months, and an audit history beyond the imports: exact-duplicate
removal for some agents (dorian keeps its duplicates for dedup to find), admin edits, a soft delete
and a restore, and one completed refinement session whose changes can be rolled back: the real
refinement job (jobs/refinement.py) with the offline refiner, as docs/explanation/refinement.md describes.

Everything is seeded in one transaction (the session's own units of work are SAVEPOINTs inside it),
so a failure leaves nothing behind. Like any session, the demo's takes the agent's single-flight lock
in Redis. The summary it returns is metadata only (ids, names, counts, token figures, times): never
memory content.
"""

from __future__ import annotations

import random
import time
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from jobs.refinement import run_refinement
from models import Agent, AgentMemory, atomic, content_hash, db, utcnow
from models.changes.agent_settings import update_agent_settings
from models.changes.dedup import dedup_for_agent
from models.changes.mutations import (
    create_memory,
    restore_memory,
    set_constitutional,
    soft_delete_memories,
    update_memory,
)
from models.memories.categories import load_config

from .data import (
    ADMIN_ACTOR,
    DEDUPED_AGENTS,
    DEMO_AGENTS,
    IMPORT_ACTOR,
    PRECONSENT_AGENT,
    ROLLBACK_AGENT,
    SESSION_AGENT,
)
from .plan import MemorySpec, budget, corrected_text, plain_core, plan_agent


def _pause() -> None:
    """Let the clock move on, so the checkpoint sits strictly between two audit records."""
    time.sleep(0.005)


def demo_present() -> bool:
    """Whether any demo agent name is already taken (the demo then refuses to seed)."""
    names = [name for name, _, _ in DEMO_AGENTS]
    return bool(db.session.scalar(select(func.count()).select_from(Agent).where(Agent.name.in_(names))))


def seed_demo(seed: int = 7) -> dict[str, Any]:
    """Seed the demo in one transaction and return a metadata-only summary (never memory content).

    Raises ValueError, before writing anything, when demo agents already exist.
    """
    if demo_present():
        raise ValueError("demo data already present; use a fresh database")
    rng = random.Random(seed)
    now = utcnow()
    categories = load_config()  # CATEGORY_CONFIG: what the agent API enforces
    plans = {name: plan_agent(rng, role, now, categories.allowed_for(role)) for name, role, _ in DEMO_AGENTS}
    agents: dict[str, Agent] = {}
    with atomic():
        for name, role, over in DEMO_AGENTS:
            agent = Agent(name=name, role=role, model_id=None, core_token_budget=budget(plans[name], over))
            agent.issue_token()  # only the hash is kept; `agent rotate-token` shows a fresh one
            db.session.add(agent)
            agents[name] = agent
        db.session.flush()
        for name, plan in plans.items():
            for spec in plan:
                spec.memory = create_memory(
                    agents[name].id,
                    spec.content,
                    # The seed's vows are set by an operator, as an admin would in the console.
                    actor=ADMIN_ACTOR if spec.constitutional else IMPORT_ACTOR,
                    action="import",
                    memory_type=spec.memory_type,
                    created_at=spec.created_at,
                    tags=spec.tags,
                    category=spec.category,
                    importance=spec.importance,
                    constitutional=spec.constitutional,
                    user_id=spec.user_id,
                )
        _pause()
        checkpoint = utcnow()
        _pause()
        session_id = _later_history(rng, agents, plans)
    return _summary(agents, [session_id], checkpoint)


def _later_history(rng: random.Random, agents: dict[str, Agent], plans: dict[str, list[MemorySpec]]) -> int:
    """What happened after the imports: dedup, admin edits (a lock among them), a delete and a restore,
    one refinement session (its id is returned)."""
    for name in DEDUPED_AGENTS:
        dedup_for_agent(agents[name].id)

    # Admin edits on memories no duplicate points at, so each change is easy to follow in the log.
    cleo = agents[ROLLBACK_AGENT]
    plain = plain_core(plans[ROLLBACK_AGENT])
    edited, corrected, *deleted = rng.sample(plain, 4)
    update_memory(cleo.id, edited.memory.id, actor=ADMIN_ACTOR, importance=4, tags=[*edited.tags, "reviewed"])
    taken = {content_hash(s.content) for s in plans[ROLLBACK_AGENT]}
    update_memory(
        cleo.id, corrected.memory.id, actor=ADMIN_ACTOR, content=corrected_text(rng, corrected, taken)
    )
    soft_delete_memories(cleo.id, [s.memory.id for s in deleted], actor=ADMIN_ACTOR, reason="outdated (demo)")
    restore_memory(cleo.id, deleted[0].memory.id, actor=ADMIN_ACTOR)
    ada = agents["ada"]
    pinned, locked = rng.sample(plain_core(plans["ada"]), 2)
    update_memory(ada.id, pinned.memory.id, actor=ADMIN_ACTOR, pinned=True)
    set_constitutional(ada.id, locked.memory.id, True, actor=ADMIN_ACTOR)
    # One agent has given standing consent to the Mechanic's Exception through its API, so the demo
    # can show a grant end to end with no model configured (every other demo agent declines).
    update_agent_settings(agents[PRECONSENT_AGENT].id, actor="agent", mechanic_preconsent=True)

    # The one session: the real job, run here with the offline refiner (no demo agent has a model), so
    # the row, its audit records and its stats are what any session writes: dedup before the baseline,
    # the consent, the same-fact merges of the restated memories through the toolbox, the journal.
    # `flask rollback session <id>` undoes it.
    try:
        outcome = run_refinement(agents[SESSION_AGENT].id, "demo", force=True)
    except Exception as err:
        # The job rolls back on failure, here the seed's whole transaction with it: say what failed.
        raise RuntimeError("the demo's refinement session failed; nothing was seeded") from err
    if outcome["status"] != "completed" or not outcome["ops"]:
        raise RuntimeError(f"the demo session ended {outcome['status']} with {outcome['ops']} operation(s)")
    return outcome["session_id"]


def _summary(agents: dict[str, Agent], sessions: list[int], checkpoint: datetime) -> dict[str, Any]:
    """Metadata only: names, counts, token figures, ids and times."""
    rows = []
    for name, agent in agents.items():
        total = db.session.scalar(select(func.count()).where(AgentMemory.agent_id == agent.id))
        active = db.session.scalar(
            select(func.count()).where(AgentMemory.agent_id == agent.id, AgentMemory.deleted_at.is_(None))
        )
        constitutional = db.session.scalar(
            select(func.count()).select_from(AgentMemory.constitutional_scope(agent.id).subquery())
        )
        duplicates = db.session.execute(
            select(AgentMemory.content_hash, func.count())
            .where(
                AgentMemory.agent_id == agent.id,
                AgentMemory.memory_type == "core",
                AgentMemory.deleted_at.is_(None),
            )
            .group_by(AgentMemory.content_hash)
            .having(func.count() > 1)
        ).all()
        rows.append(
            {
                "id": agent.id,
                "name": name,
                "role": agent.role,
                "core_tokens": agent.core_token_usage,
                "core_token_budget": agent.core_token_budget,
                "over_budget": agent.needs_refinement,
                "memories": total,
                "active_memories": active,
                "constitutional": constitutional,
                "exact_duplicates": sum(count - 1 for _, count in duplicates),
            }
        )
    stamp = checkpoint.isoformat(timespec="microseconds") + "Z"
    return {
        "agents": rows,
        "memories": sum(r["memories"] for r in rows),
        "active_memories": sum(r["active_memories"] for r in rows),
        "sessions": sessions,
        "checkpoint": stamp,
        "rollback_example": f"flask --app wsgi rollback agent {ROLLBACK_AGENT} --to {stamp}",
        "mechanic_example": f"{PRECONSENT_AGENT} has given standing consent: ask for a Mechanic's grant on it in the console",
        "tokens": "not shown: run `flask --app wsgi agent rotate-token NAME` to issue an agent's API token",
    }
