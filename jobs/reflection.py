"""Journal reflection: journals past the one-week prompt window are promoted to core or left to expire.

The agent's own model decides, in a short consent-style prompt, which of its aged journal entries
(≤ 10 per run) carry something worth keeping in core memory. Promotion changes the row's type to
`core` through the mutation path (audited as system:reflection, reversible) and stops while the
agent is over its core budget. Entries not promoted are recorded as kept-as-journal so they are not
asked about again; the TTL lifecycle then treats them like any other non-core memory. Offline, the
policy is to keep: nothing is promoted.
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import select

from models import Agent, AgentMemory, AuditLog, DomainError, atomic, db, utcnow
from models.agents.agent import active_agent_ids
from models.changes import write
from models.history.audit import new_op_id, write_audit
from models.memories.memory import JOURNAL_WINDOW

from .llm import json_object, missing_endpoint, model_configured, model_for

log = logging.getLogger(__name__)
ACTOR = "system:reflection"
BATCH = 10

PROMPT = """These journal entries of yours are older than a week and will leave your prompt. Promote to
core memory only an entry that carries a lasting fact, commitment or lesson not already in your core
memory; everything else stays a journal entry. Promoting nothing is a good outcome. Your core memory is
at {tokens:,} of {budget:,} tokens. Answer with JSON only: {{"promote": [ids], "reason": "short"}}

{entries}"""


class Decision(BaseModel):
    promote: list[int] = Field(default_factory=list, max_length=BATCH)
    reason: str = Field(default="", max_length=300)


def _decided_ids(agent_id: int) -> set[int]:
    decided: set[int] = set()
    for data in db.session.scalars(
        select(AuditLog.data).where(AuditLog.agent_id == agent_id, AuditLog.action == "reflection_run")
    ):
        decided.update(data.get("considered", []))
    return decided


def reflect_for_agent(agent_id: int) -> dict:
    agent = db.session.get(Agent, agent_id)
    if agent is None or not agent.active:
        return {"agent_id": agent_id, "status": "skipped", "reason": "no such active agent"}
    missing = missing_endpoint(agent)
    if missing:  # a model that cannot be reached is reported, not treated as "offline"
        return {"agent_id": agent_id, "status": "skipped", "reason": missing}
    if not model_configured(agent):
        return {"agent_id": agent_id, "status": "skipped", "reason": "offline policy: keep journals"}
    decided = _decided_ids(agent_id)
    aged = [
        m
        for m in db.session.scalars(
            AgentMemory.active(agent_id)
            .where(AgentMemory.memory_type == "journal", AgentMemory.created_at < utcnow() - JOURNAL_WINDOW)
            .order_by(AgentMemory.created_at)
        )
        if m.id not in decided
    ][:BATCH]
    if not aged:
        return {"agent_id": agent_id, "status": "skipped", "reason": "no aged journals"}
    tokens = agent.core_token_usage
    prompt = PROMPT.format(
        tokens=tokens,
        budget=agent.core_token_budget,
        entries="\n".join(f"- #{m.id} ({m.created_at:%Y-%m-%d}): {m.content}" for m in aged),
    )
    turn = model_for(agent).turn([{"role": "user", "content": prompt}], None, max_tokens=200)
    try:
        decision = Decision.model_validate(json_object(turn) or {})
    except ValidationError:
        decision = Decision()
    wanted = {i for i in decision.promote if i in {m.id for m in aged}}
    promoted, held, refused = [], [], []
    with atomic():  # the run is one unit of work; each promotion joins it in a SAVEPOINT
        for memory in aged:
            if memory.id not in wanted:
                continue
            if tokens + memory.token_estimate > agent.core_token_budget:  # budget pressure wins
                held.append(memory.id)
                continue
            try:
                write.change(agent_id, memory.id, actor=ACTOR, memory_type="core")
            except DomainError:  # deleted, locked or changed since it was read: only this one is undone
                refused.append(memory.id)
                continue
            tokens += memory.token_estimate
            promoted.append(memory.id)
        write_audit(
            op_id=new_op_id(),
            actor=ACTOR,
            action="reflection_run",
            agent_id=agent_id,
            data={
                "considered": [m.id for m in aged],
                "promoted": promoted,
                "held_for_budget": held,
                "refused": refused,
            },
        )
    return {"agent_id": agent_id, "status": "ok", "promoted": promoted, "held_for_budget": held}


def journal_reflection() -> dict:
    """Daily: reflection for every active agent."""
    results = [reflect_for_agent(agent_id) for agent_id in active_agent_ids()]
    promoted = sum(len(r.get("promoted", [])) for r in results)
    log.info("reflection: %d agent(s), %d promoted", len(results), promoted)
    return {"agents": len(results), "promoted": promoted}
