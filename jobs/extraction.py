"""Optional write paths of spec 003, each behind a configuration flag and capped.

- Procedural memory (§12, `PROCEDURAL_MEMORY=1`): a stable workflow saved as numbered imperative
  steps, type `procedural`, category `procedural`. Never part of the conversational prompt
  (`for_prompt` holds core and recent journals only); agents whose role allows the `procedural`
  category fetch it through memory.query.
- Multi-fact extraction (§13, `MULTI_FACT_EXTRACTION=1`): a long turn (> 400 characters) goes, in the
  background, to the agent's model, which proposes 1-5 durable facts; at most 3 are written per turn
  and at most 30 per agent per day, and a fact the agent already holds (same-fact rule) is skipped.
  Offline: nothing is extracted.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from flask import current_app
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import func, select

from models import Agent, AgentMemory, AuditLog, FeatureDisabled, ValidationFailed, atomic, db, utcnow
from models.audit import new_op_id, write_audit
from models.categories import load_config
from models.mutations import create_memory

from .llm import json_object, model_configured, model_for
from .offline import same_fact

log = logging.getLogger(__name__)

MAX_STEPS, MAX_STEP_CHARS = 12, 200
MIN_TURN_CHARS = 400
MAX_TURN_CHARS = 8000
WRITES_PER_TURN = 3
WRITES_PER_DAY = 30
ACTOR = "system:extraction"

PROMPT = """Extract the durable facts worth remembering from this conversation turn: stable preferences,
decisions, commitments, facts about people. Skip small talk and anything transient. Each fact is one
self-contained third-person sentence of at most 280 characters. Answer with JSON only:
{{"facts": [{{"text": "...", "category": "...", "importance": 1-5}}]}}  (an empty list if none)

Turn:
{turn}"""


def _flag(name: str) -> bool:
    return bool(current_app.config.get(name))


def save_procedure(agent_id: int, title: str, steps: list[str], *, actor: str = "agent", **scoping) -> AgentMemory:
    """Save a workflow as numbered steps (imperative mood is the caller's to write)."""
    if not _flag("PROCEDURAL_MEMORY"):
        raise FeatureDisabled("procedural memory is disabled (set PROCEDURAL_MEMORY=1)")
    if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_STEPS:
        raise ValidationFailed(f"a procedure has 1 to {MAX_STEPS} steps")
    cleaned = [s.strip().rstrip(".") for s in steps if isinstance(s, str)]
    if len(cleaned) != len(steps) or any(not s or len(s) > MAX_STEP_CHARS for s in cleaned):
        raise ValidationFailed(f"each step is text of 1 to {MAX_STEP_CHARS} characters")
    if not isinstance(title, str) or not title.strip():
        raise ValidationFailed("a procedure needs a title")
    body = f"{title.strip()}:\n" + "\n".join(f"{n}. {step}." for n, step in enumerate(cleaned, start=1))
    return create_memory(agent_id, body, actor=actor, memory_type="procedural", category="procedural", **scoping)


class Fact(BaseModel):
    text: str = Field(min_length=1, max_length=280)
    category: str | None = Field(default=None, max_length=64)
    importance: int = Field(default=2, ge=1, le=5)


class Facts(BaseModel):
    facts: list[Fact] = Field(default_factory=list, max_length=5)


def extract_facts(agent_id: int, turn: str, user_id: str | None = None, thread_id: str | None = None) -> dict:
    """Background job: propose facts from one long turn and write the new ones, within the caps."""
    if not _flag("MULTI_FACT_EXTRACTION"):
        return {"status": "disabled"}
    agent = db.session.get(Agent, agent_id)
    if agent is None or not agent.active:
        return {"status": "skipped", "reason": "no such active agent"}
    if not isinstance(turn, str) or len(turn.strip()) <= MIN_TURN_CHARS:
        return {"status": "skipped", "reason": f"turn of at most {MIN_TURN_CHARS} characters"}
    if not model_configured(agent):
        return {"status": "skipped", "reason": "offline: extraction needs a model"}
    written_today = db.session.scalar(
        select(func.count()).select_from(AuditLog).where(
            AuditLog.agent_id == agent_id, AuditLog.actor == ACTOR, AuditLog.action == "create",
            AuditLog.created_at > utcnow() - timedelta(days=1),
        )
    )
    room = min(WRITES_PER_TURN, WRITES_PER_DAY - written_today)
    if room <= 0:
        return {"status": "skipped", "reason": "daily cap reached"}
    answer = model_for(agent).turn([{"role": "user", "content": PROMPT.format(turn=turn[:MAX_TURN_CHARS])}], None,
                                   max_tokens=400)
    try:
        facts = Facts.model_validate(json_object(answer) or {}).facts
    except ValidationError:
        facts = []
    # A proposed category outside the agent's allowlist would hide the fact from the agent's own queries.
    allowed = set(load_config(current_app.config.get("CATEGORY_CONFIG")).allowed_for(agent.role))
    known = [m.content for m in db.session.scalars(
        AgentMemory.active(agent_id).where(AgentMemory.memory_type == "semantic").order_by(AgentMemory.id.desc()).limit(500)
    )]
    created: list[int] = []
    skipped = 0
    with atomic():  # the run is one unit of work; each write joins it in a SAVEPOINT
        for fact in facts:
            if len(created) >= room or any(same_fact(fact.text, text) for text in known):
                skipped += 1
                continue
            memory = create_memory(agent_id, fact.text, actor=ACTOR, memory_type="semantic",
                                   category=fact.category if fact.category in allowed else None,
                                   importance=fact.importance, user_id=user_id, thread_id=thread_id)
            known.append(memory.content)
            created.append(memory.id)
        write_audit(op_id=new_op_id(), actor=ACTOR, action="extraction_run", agent_id=agent_id,
                    data={"proposed": len(facts), "created": created, "skipped": skipped})
    return {"status": "ok", "created": created, "skipped": skipped}
