"""Optional write paths of docs/spec/003-memory-system.md, each behind a configuration flag and capped.

- Procedural memory (§12, `PROCEDURAL_MEMORY=1`): a stable workflow saved as numbered imperative
  steps, type `procedural`, category `procedural`. Never part of the conversational prompt
  (`for_prompt` holds core and recent journals only); agents whose role allows the `procedural`
  category fetch it through memory.query.
- Multi-fact extraction (§13, `MULTI_FACT_EXTRACTION=1`): a long turn (> 400 characters) goes, in the
  background, to the agent's model, which proposes 1-5 durable facts; at most 3 are written per turn
  and at most 30 per agent per day. Each fact is checked against the semantic writing rules, then runs
  through the merge bands against the agent's semantic memories (`jobs.prefilter`): the same fact is
  skipped (auto), a fact that changes one number of a memory the agent held before this turn updates
  that memory (audited, with an `update_resolution` record), anything else is written new (recreate;
  in the check band, the daily consolidation looks at the pair). A fact that sets a user-context field
  goes through the consent policy (`models.changes.patches.write_context`) instead. Offline: nothing is extracted.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import numpy as np
from flask import current_app
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import func, select

from infra.queues import get_rq
from models import (
    Agent,
    AgentMemory,
    AuditLog,
    DomainError,
    FeatureDisabled,
    ValidationFailed,
    atomic,
    db,
    utcnow,
)
from models.changes import write
from models.history.audit import new_op_id, write_audit
from models.memories.categories import load_config
from models.memories.fields import CATEGORY, Importance
from models.memories.writing import WritingRuleViolation, check_content, guidance

from .embeddings import get_embedder
from .llm import json_object, missing_endpoint, model_configured, model_for
from .prefilter import SEMANTIC_BANDS, bands_for, resolve
from .relations import agent_vectors, embed_memories
from .samefact import same_fact

log = logging.getLogger(__name__)

MAX_STEPS, MAX_STEP_CHARS = 12, 200
MIN_TURN_CHARS = 400
MAX_TURN_CHARS = 8000
WRITES_PER_TURN = 3
WRITES_PER_DAY = 30
ACTOR = "system:extraction"

PROMPT = (
    """Extract the durable facts worth remembering from this conversation turn: stable preferences,
decisions, commitments, facts about people. Skip small talk and anything transient. """
    + guidance("semantic").replace("{", "{{").replace("}", "}}")
    + """ When a fact sets one of the user's
context fields (preferred_name, pronouns, city, language, tone, goals, ...), name it in "field".
Answer with JSON only:
{{"facts": [{{"text": "...", "category": "...", "importance": 1-5, "field": null}}]}}  (an empty list if none)

Turn:
{turn}"""
)


def _flag(name: str) -> bool:
    return bool(current_app.config.get(name))


def save_procedure(
    agent_id: int, title: str, steps: list[str], *, actor: str = "agent", **scoping
) -> AgentMemory:
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
    memory = write.save(
        agent_id, body, actor=actor, memory_type="procedural", category="procedural", **scoping
    ).memory
    assert memory is not None  # a procedure sets no user-context field: never held
    return memory


class Fact(BaseModel):
    text: str = Field(min_length=1, max_length=280)
    # Any name the column holds: one outside the agent's allowlist is dropped, not the whole answer.
    category: str | None = Field(default=None, max_length=CATEGORY.max_length)
    importance: Importance = 2
    field: str | None = Field(default=None, max_length=48, pattern=r"^[a-z][a-z0-9_]*$")


class Facts(BaseModel):
    facts: list[Fact] = Field(default_factory=list, max_length=5)


def extract_parked_turn(
    agent_id: int, turn_key: str, user_id: str | None = None, thread_id: str | None = None
) -> dict:
    """Background job, as the API queues it: the turn waits in Redis under `turn_key` (infra/queues.py,
    `park`), so the job's arguments, its description in RQ's log and its failure record hold ids, never
    the turn's text. The key is deleted once the run is over; a failed run keeps it until it expires, so
    the job can be requeued."""
    rq = get_rq()
    turn = rq.parked(turn_key)
    if turn is None:
        return {"status": "skipped", "reason": "the turn expired before a worker took it"}
    result = extract_facts(agent_id, turn, user_id=user_id, thread_id=thread_id)
    rq.unpark(turn_key)
    return result


def extract_facts(agent_id: int, turn: str, user_id: str | None = None, thread_id: str | None = None) -> dict:
    """Background job: propose facts from one long turn and write the new ones, within the caps."""
    if not _flag("MULTI_FACT_EXTRACTION"):
        return {"status": "disabled"}
    agent = db.session.get(Agent, agent_id)
    if agent is None or not agent.active:
        return {"status": "skipped", "reason": "no such active agent"}
    if not isinstance(turn, str) or len(turn.strip()) <= MIN_TURN_CHARS:
        return {"status": "skipped", "reason": f"turn of at most {MIN_TURN_CHARS} characters"}
    missing = missing_endpoint(agent)
    if missing:  # a model that cannot be reached is reported, not treated as "offline"
        return {"status": "skipped", "reason": missing}
    if not model_configured(agent):
        return {"status": "skipped", "reason": "offline: extraction needs a model"}
    written_today = (
        db.session.scalar(
            select(func.count())
            .select_from(AuditLog)
            .where(
                AuditLog.agent_id == agent_id,
                AuditLog.actor == ACTOR,
                AuditLog.action.in_(("create", "update", "consent_proposed")),
                AuditLog.created_at > utcnow() - timedelta(days=1),
            )
        )
        or 0
    )
    room = min(WRITES_PER_TURN, WRITES_PER_DAY - written_today)
    if room <= 0:
        return {"status": "skipped", "reason": "daily cap reached"}
    answer = model_for(agent).turn(
        [{"role": "user", "content": PROMPT.format(turn=turn[:MAX_TURN_CHARS])}], None, max_tokens=400
    )
    try:
        facts = Facts.model_validate(json_object(answer) or {}).facts
    except ValidationError:
        facts = []
    # A proposed category outside the agent's allowlist would hide the fact from the agent's own queries.
    allowed = set(load_config().allowed_for(agent.role))
    neighbours = _Neighbours(agent_id)
    created: list[int] = []
    updated: list[int] = []
    held: list[int] = []
    skipped = refused = 0
    with atomic():  # the run is one unit of work; each write joins it in a SAVEPOINT
        for fact in facts:
            if len(created) + len(updated) + len(held) >= room:
                skipped += 1
                continue
            try:  # docs/spec/003-memory-system.md §9 on this write path too: a fact that breaks a writing rule is not written
                text = check_content("semantic", fact.text)
            except WritingRuleViolation:
                refused += 1
                continue
            category = fact.category if fact.category in allowed else None
            try:
                outcome, written_id = _write(agent_id, fact, text, category, user_id, thread_id, neighbours)
            except DomainError:  # a lock or a change meanwhile: this fact only, the run goes on
                refused += 1
                continue
            if outcome == "skipped" or written_id is None:
                skipped += 1
            else:
                {"created": created, "updated": updated, "held": held}[outcome].append(written_id)
        write_audit(
            op_id=new_op_id(),
            actor=ACTOR,
            action="extraction_run",
            agent_id=agent_id,
            data={
                "proposed": len(facts),
                "created": created,
                "updated": updated,
                "held": held,
                "skipped": skipped,
                "refused": refused,
            },
        )
    return {
        "status": "ok",
        "created": created,
        "updated": updated,
        "held": held,
        "skipped": skipped,
        "refused": refused,
    }


def _write(
    agent_id: int,
    fact: Fact,
    text: str,
    category: str | None,
    user_id: str | None,
    thread_id: str | None,
    neighbours: _Neighbours,
) -> tuple[str, int | None]:
    """One checked fact through the one write path: held by the consent policy when it sets a user-context
    field, else through the merge bands. (outcome, memory or patch id)."""
    scope: dict[str, Any] = {
        "category": category,
        "importance": fact.importance,
        "user_id": user_id,
        "thread_id": thread_id,
    }
    if fact.field:
        written = write.save(
            agent_id, text, actor=ACTOR, memory_type="semantic", field=fact.field,
            **scope,
        )  # fmt: skip
        if written.memory is None:
            assert written.patch is not None
            return "held", written.patch.id
        return "created", written.memory.id
    band, target = neighbours.resolve(text)
    if band == "auto":
        return "skipped", None
    if band == "update" and target is not None:
        with atomic():
            write.change(agent_id, target.id, actor=ACTOR, content=text)
            write_audit(
                op_id=new_op_id(),
                actor=ACTOR,
                action="update_resolution",
                agent_id=agent_id,
                data={"updated": target.id, "by": "extraction"},
            )
        return "updated", target.id
    memory = write.save(agent_id, text, actor=ACTOR, memory_type="semantic", **scope).memory
    assert memory is not None  # no user-context field: never held
    neighbours.written(memory.content)
    return "created", memory.id


class _Neighbours:
    """The merge bands for one extraction run: each fact against the agent's active semantic memories
    (by stored vectors) and against the facts this run already wrote."""

    def __init__(self, agent_id: int) -> None:
        self.agent_id = agent_id
        embed_memories(agent_id)
        ids, self.matrix = agent_vectors(agent_id, ("semantic",))
        self.ids = [int(i) for i in ids]
        self.this_turn: list[str] = []

    def written(self, text: str) -> None:
        self.this_turn.append(text)

    def resolve(self, text: str) -> tuple[str, AgentMemory | None]:
        """("auto", memory) for a fact already held, ("update", memory) for one that changes a number of a
        memory held before this turn, else ("recreate", None). Facts of one turn are simultaneous: they
        can repeat each other (auto) but never update each other."""
        if any(same_fact(text, earlier) for earlier in self.this_turn):
            return "auto", None
        if not self.ids:
            return "recreate", None
        vector = get_embedder().embed([text])[0]
        scores = self.matrix @ vector
        for position in np.argsort(-scores)[:5]:
            score = float(scores[position])
            if score < SEMANTIC_BANDS.fallback_low:
                break
            memory = db.session.get(AgentMemory, self.ids[position])
            if memory is None or memory.deleted_at is not None or bands_for(memory.tags, []) is None:
                continue  # a user-context field's memory changes only through the consent policy
            if memory.constitutional or memory.immutable_tags:
                continue
            rule = resolve(memory.content, text)
            if rule == "same":
                return "auto", memory
            if rule == "update":
                return "update", memory
        return "recreate", None
