"""Daily consolidation (spec 003 §4): merge same-fact memories without inflating the hot path.

Per agent, once a day, within caps:
1. candidate pool: active non-core, non-journal memories created or updated in the last 72 h, or of
   importance ≥ 3, or read in the last 72 h (the "frequently retrieved" signal we record);
2. neighbours by cosine over stored embeddings (one matrix product), then the no-LLM pre-filters
   (cosine band, recency ≤ 90 d, lexical overlap or numeric step), skipping pairs fingerprinted in
   the last 14 days and any pair with a constitutional or audio/somatic/voice memory;
3. at most `CONSOLIDATION_PAIRS_PER_DAY` (50) pairs, checked in batches of up to 8 pairs a prompt by
   the agent's model (JSON verdicts) within a per-run token budget — or, offline, by the exact /
   near-exact `same_fact` rule;
4. same-fact pairs merged through the mutation path (earliest origin date kept, locks enforced),
   inside a `refinement_sessions` row with trigger `consolidation`, so `rollback session` undoes a run.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from flask import current_app
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import select

from models import Agent, AgentMemory, DomainError, PairFingerprint, RefinementSession, atomic, db, utcnow
from models.mutations import consolidate_memories
from models.refinement import core_totals
from models.relations import pair_fingerprint
from models.session import account_turn, finish_session, set_baseline, start_session
from models.session import count as count_stat

from .llm import json_object, model_configured, model_for
from .offline import same_fact
from .prefilter import Candidate, passes
from .relations import agent_vectors, embed_memories

log = logging.getLogger(__name__)

TYPES = ("semantic", "episodic", "procedural", "insight")
POOL_WINDOW = timedelta(hours=72)
FINGERPRINT_TTL = timedelta(days=14)
DEFAULT_PAIRS_PER_DAY = 50
DEFAULT_TOKEN_BUDGET = 20_000
PAIRS_PER_PROMPT = 8
ACTOR = "system:consolidation"

PROMPT = """Decide for each numbered pair of your memories whether both state the SAME specific fact
(same people, numbers, dates and meaning). Different details mean different facts. When unsure,
answer false. Answer with JSON only: {{"verdicts": [{{"pair": 1, "same": true}}, ...]}}

{pairs}"""


class Verdict(BaseModel):
    pair: int
    same: bool


class Verdicts(BaseModel):
    verdicts: list[Verdict] = Field(default_factory=list, max_length=PAIRS_PER_PROMPT)


def candidate_pairs(agent_id: int, limit: int) -> list[tuple[AgentMemory, AgentMemory, float]]:
    """Pre-filtered, not recently checked pairs, best first."""
    now = utcnow()
    embed_memories(agent_id)
    ids, matrix = agent_vectors(agent_id, TYPES)
    if len(ids) < 2:
        return []
    memories = {
        m.id: m
        for m in db.session.scalars(select(AgentMemory).where(AgentMemory.id.in_([int(i) for i in ids])))
    }
    recent = now - POOL_WINDOW
    pool = [
        i for i, mid in enumerate(ids)
        if (m := memories[int(mid)]).updated_at >= recent
        or (m.importance or 0) >= 3
        or (m.last_accessed_at is not None and m.last_accessed_at >= recent)
    ]
    if not pool:
        return []
    scores = matrix[pool] @ matrix.T
    seen = set(
        db.session.scalars(
            select(PairFingerprint.fingerprint).where(
                PairFingerprint.agent_id == agent_id, PairFingerprint.checked_at > now - FINGERPRINT_TTL
            )
        )
    )
    pairs: dict[tuple[int, int], tuple[AgentMemory, AgentMemory, float]] = {}
    for row, i in enumerate(pool):
        for j in (-scores[row]).argsort()[:20]:  # the nearest neighbours are the only plausible duplicates
            if j == i:
                continue
            a, b = memories[int(ids[i])], memories[int(ids[j])]
            key = (min(a.id, b.id), max(a.id, b.id))
            score = float(scores[row, j])
            if key in pairs or a.memory_type != b.memory_type:
                continue
            if a.constitutional or b.constitutional or a.immutable_tags or b.immutable_tags:
                continue
            if pair_fingerprint(a.id, b.id, score) in seen:
                continue
            if passes(Candidate(a.id, a.content, a.updated_at), Candidate(b.id, b.content, b.updated_at), score, now):
                pairs[key] = (a, b, score)
    return sorted(pairs.values(), key=lambda p: -p[2])[:limit]


def _model_verdicts(agent: Agent, pairs, budget: int, session: RefinementSession) -> dict[int, bool]:
    """Batched same-fact checks by the agent's model; stops when the run's token budget is spent."""
    model = model_for(agent)
    verdicts: dict[int, bool] = {}
    for start in range(0, len(pairs), PAIRS_PER_PROMPT):
        if session.prompt_tokens + session.completion_tokens >= budget:
            break
        batch = pairs[start : start + PAIRS_PER_PROMPT]
        text = "\n".join(f"{n}. A: {a.content}\n   B: {b.content}" for n, (a, b, _) in enumerate(batch, start=1))
        turn = model.turn([{"role": "user", "content": PROMPT.format(pairs=text)}], None, max_tokens=300)
        account_turn(session, turn)  # staged: committed with the run's unit of work
        try:
            parsed = Verdicts.model_validate(json_object(turn) or {})
        except ValidationError:
            continue  # an unreadable answer decides nothing
        for verdict in parsed.verdicts:
            if 1 <= verdict.pair <= len(batch):
                verdicts[start + verdict.pair - 1] = verdict.same
    return verdicts


def consolidate_agent(agent_id: int) -> dict:
    """One agent's daily run, under the agent's single-flight lock (never beside a refinement session).
    Running it again the same day finds nothing new (fingerprints)."""
    from console.queues import get_rq

    from .refinement import DEFAULT_LOCK_TTL, AgentBusy, SingleFlight

    ttl = float(current_app.config.get("REFINEMENT_LOCK_TTL", DEFAULT_LOCK_TTL))
    try:
        with SingleFlight(get_rq().connection, agent_id, ttl):
            return _consolidate_locked(agent_id)
    except AgentBusy:
        return {"agent_id": agent_id, "status": "busy"}


def _consolidate_locked(agent_id: int) -> dict:
    agent = db.session.get(Agent, agent_id)
    if agent is None or not agent.active:
        return {"agent_id": agent_id, "status": "skipped"}
    config = current_app.config
    limit = int(config.get("CONSOLIDATION_PAIRS_PER_DAY", DEFAULT_PAIRS_PER_DAY))
    budget = int(config.get("CONSOLIDATION_TOKEN_BUDGET", DEFAULT_TOKEN_BUDGET))
    already = db.session.scalar(
        select(db.func.count()).select_from(PairFingerprint).where(
            PairFingerprint.agent_id == agent_id, PairFingerprint.checked_at > utcnow() - timedelta(days=1)
        )
    )
    pairs = candidate_pairs(agent_id, max(0, limit - already))
    if not pairs:
        return {"agent_id": agent_id, "status": "nothing to check", "checked": 0, "merged": 0}
    offline = not model_configured(agent)
    with atomic():
        session = start_session(agent_id, "consolidation", model="offline" if offline else agent.model_id,
                                phase="checking")
        set_baseline(session, *core_totals(agent_id))
    if offline:
        verdicts = {n: same_fact(a.content, b.content) for n, (a, b, _) in enumerate(pairs)}
    else:
        verdicts = _model_verdicts(agent, pairs, budget, session)
    # The run is one unit of work: its turn accounting, its fingerprints and its counts commit together
    # at the end; each merge runs in its own SAVEPOINT, so a refused one undoes only itself.
    with atomic():
        merged_away: set[int] = set()
        merged = refused = 0
        for n, (a, b, score) in enumerate(pairs):
            verdict = verdicts.get(n)
            outcome = "skipped" if verdict is None else ("same" if verdict else "different")
            if verdict and a.id not in merged_away and b.id not in merged_away:
                first, second = sorted((a, b), key=lambda m: (m.created_at, m.id))
                try:
                    consolidate_memories(agent_id, [first.id, second.id], first.content, actor=ACTOR,
                                         session_id=session.id, require_type=None)
                    merged_away.update((first.id, second.id))
                    merged += 1
                    outcome = "merged"
                except DomainError:  # a lock or a change since the pool was read: leave the pair alone
                    refused += 1
                    outcome = "skipped"
            if verdict is not None:
                db.session.add(PairFingerprint(agent_id=agent_id, fingerprint=pair_fingerprint(a.id, b.id, score),
                                               verdict=outcome, checked_at=utcnow()))
        session.ops_count = merged
        for key, value in (("pairs_considered", len(pairs)), ("pairs_checked", len(verdicts)),
                           ("consolidations", merged), ("consolidated", 2 * merged), ("refused", refused)):
            if value:
                count_stat(session, key, value)
        finish_session(session, "completed", totals=core_totals(agent_id))
    return {"agent_id": agent_id, "status": "completed", "session_id": session.id,
            "checked": len(verdicts), "merged": merged, "refused": refused}


def daily_consolidation() -> dict:
    """Daily, 05:00 UTC: consolidation for every active agent."""
    agent_ids = db.session.scalars(select(Agent.id).where(Agent.active.is_(True)).order_by(Agent.id)).all()
    results = [consolidate_agent(agent_id) for agent_id in agent_ids]
    merged = sum(r.get("merged", 0) for r in results)
    log.info("consolidation: %d agent(s), %d merged", len(results), merged)
    return {"agents": len(results), "merged": merged}
