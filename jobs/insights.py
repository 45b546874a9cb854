"""Theory-of-mind insights (docs/spec/003-memory-system.md §3): latent relational insights, in the background, never on a hot path.

Per agent, at most once in 24 hours: the latest activity (≤ 5 episodic memories), new semantic
memories (≤ 3 from the last 72 h) and a recent snippet (the latest journal, ≤ 1,000 characters) go
to the agent's own model, which answers with 1-3 insights of ≤ 280 characters as validated JSON.
Each becomes an `insight` memory in category `relationship_dynamic`, importance 2, through the
mutation path. Offline (no model), nothing is produced: insights need a model.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from pydantic import BaseModel, Field, ValidationError, field_validator
from sqlalchemy import select

from models import Agent, AgentMemory, AuditLog, atomic, db, utcnow
from models.agents.agent import active_agent_ids
from models.changes import write
from models.changes.patches import corroborate_from_insight
from models.history.audit import new_op_id, write_audit
from models.memories.fields import Importance
from models.memories.writing import WritingRuleViolation, guidance

from .llm import json_object, missing_endpoint, model_configured, model_for

log = logging.getLogger(__name__)

COOLDOWN = timedelta(hours=24)
MAX_ACTIVITY, MAX_SEMANTIC, MAX_SNIPPET = 5, 3, 1000
MAX_TOKENS = 220
ACTOR = "system:tom"

PROMPT = (
    """You write theory-of-mind insights about the user you work with, from your own recent memory.
Rules: output 1 to 3 insights; never refer to yourself or the AI; only insights the material supports. """
    + guidance("insight").replace("{", "{{").replace("}", "}}")
    + """ When an insight bears on one of
the user's context fields (for example tone or goals), name it in "field" and say how sure you are in
"confidence" (0 to 1). Answer with JSON only:
{{"insights": [{{"summary": "...", "tags": ["..."], "importance": 2, "field": null, "confidence": 0.5}}]}}
(an empty list if none)

Recent activity:
{activity}

New facts:
{semantic}

Recent snippet:
{snippet}"""
)


class Insight(BaseModel):
    summary: str = Field(min_length=1, max_length=280)
    tags: list[str] = Field(default_factory=list, max_length=5)
    importance: Importance = 2
    # A user-context field the insight bears on, and how sure the model is: with confidence ≥ 0.8 it is a
    # consent signal for the pending proposal on that (benign) field (docs/explanation/governance.md,
    # "Consent").
    field: str | None = Field(default=None, max_length=48, pattern=r"^[a-z][a-z0-9_]*$")
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)

    @field_validator("summary")
    @classmethod
    def _third_person(cls, value: str) -> str:
        words = {w.strip(".,;:!?\"'").lower() for w in value.split()}
        if words & {"i", "me", "my", "ai", "assistant"}:
            raise ValueError("insights are third person and never about the AI")
        return value.strip()


class Insights(BaseModel):
    insights: list[Insight] = Field(default_factory=list, max_length=3)


def _recent_run(agent_id: int, now) -> bool:
    return (
        db.session.scalar(
            select(AuditLog.id)
            .where(
                AuditLog.agent_id == agent_id,
                AuditLog.action == "tom_run",
                AuditLog.created_at > now - COOLDOWN,
            )
            .limit(1)
        )
        is not None
    )


def _inputs(agent_id: int, now) -> tuple[list[str], list[str], str]:
    activity = db.session.scalars(
        AgentMemory.active(agent_id)
        .where(AgentMemory.memory_type == "episodic")
        .order_by(AgentMemory.created_at.desc())
        .limit(MAX_ACTIVITY)
    ).all()
    semantic = db.session.scalars(
        AgentMemory.active(agent_id)
        .where(AgentMemory.memory_type == "semantic", AgentMemory.created_at > now - timedelta(hours=72))
        .order_by(AgentMemory.created_at.desc())
        .limit(MAX_SEMANTIC)
    ).all()
    journal = db.session.scalar(
        AgentMemory.active(agent_id)
        .where(AgentMemory.memory_type == "journal")
        .order_by(AgentMemory.created_at.desc())
        .limit(1)
    )
    return (
        [m.content for m in activity],
        [m.content for m in semantic],
        (journal.content if journal else "")[:MAX_SNIPPET],
    )


def tom_for_agent(agent_id: int) -> dict:
    """One agent's ToM pass. Idempotent within the cool-down."""
    agent = db.session.get(Agent, agent_id)
    now = utcnow()
    if agent is None or not agent.active:
        return {"agent_id": agent_id, "status": "skipped", "reason": "no such active agent"}
    missing = missing_endpoint(agent)
    if missing:  # a model that cannot be reached is reported, not treated as "offline"
        return {"agent_id": agent_id, "status": "skipped", "reason": missing}
    if not model_configured(agent):
        return {"agent_id": agent_id, "status": "skipped", "reason": "offline: insights need a model"}
    if _recent_run(agent_id, now):
        return {"agent_id": agent_id, "status": "skipped", "reason": "ran within 24 hours"}
    activity, semantic, snippet = _inputs(agent_id, now)
    if not activity and not semantic:
        return {"agent_id": agent_id, "status": "skipped", "reason": "nothing new"}
    prompt = PROMPT.format(
        activity="\n".join(f"- {t}" for t in activity) or "- (none)",
        semantic="\n".join(f"- {t}" for t in semantic) or "- (none)",
        snippet=snippet or "(none)",
    )
    turn = model_for(agent).turn([{"role": "user", "content": prompt}], None, max_tokens=MAX_TOKENS)
    try:
        parsed = Insights.model_validate(json_object(turn) or {})
    except ValidationError as err:
        error: str | None
        parsed, error = Insights(), f"invalid output ({err.error_count()} problem(s))"
    else:
        error = None
    created, corroborated, refused = [], [], 0
    with atomic():  # the run is one unit of work; each write joins it in a SAVEPOINT
        for insight in parsed.insights:
            try:  # the write path applies the writing rules of docs/spec/003-memory-system.md §9; a refused one is counted
                memory = write.save(
                    agent_id,
                    insight.summary,
                    actor=ACTOR,
                    memory_type="insight",
                    category="relationship_dynamic",
                    importance=2,
                    tags=insight.tags,
                ).memory
            except WritingRuleViolation:
                refused += 1
                continue
            assert memory is not None  # an insight declares no user-context field: never held
            created.append(memory.id)
            patch_id = corroborate_from_insight(agent_id, insight.field, insight.confidence, memory.id)
            if patch_id is not None:
                corroborated.append(patch_id)
        write_audit(
            op_id=new_op_id(),
            actor=ACTOR,
            action="tom_run",
            agent_id=agent_id,
            data={"created": created, "error": error, "refused": refused, "corroborated": corroborated},
        )
    return {
        "agent_id": agent_id,
        "status": "ok" if error is None else "rejected",
        "created": created,
        "corroborated": corroborated,
    }


def tom_insights() -> dict:
    """Daily: a ToM pass for every active agent with a model."""
    results = [tom_for_agent(agent_id) for agent_id in active_agent_ids()]
    created = sum(len(r.get("created", [])) for r in results)
    log.info("tom: %d agent(s), %d insight(s)", len(results), created)
    return {"agents": len(results), "created": created}
