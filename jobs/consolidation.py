"""Daily consolidation (docs/spec/003-memory-system.md §4): merge same-fact memories and resolve updates, off the hot path.

Per agent, once a day, within caps:
1. candidate pool: active non-core, non-journal memories created or updated in the last 72 h, or of
   importance ≥ 3, or read in the last 72 h (the "frequently retrieved" signal we record);
2. neighbours by cosine over stored embeddings (one matrix product), then the merge bands and no-LLM
   pre-filters of `jobs.prefilter` (stricter bands for user-context fields, which pair only within one
   field), pairing only memories of one scope (`rules.same_scope`: the same user), skipping pairs fingerprinted in the last 14 days and any pair with a constitutional or
   audio/somatic/voice memory;
3. at most `CONSOLIDATION_PAIRS_PER_DAY` (50) pairs. In the write-time band (cosine ≥ check_low) a
   pair the same-fact rule recognises is merged without a model call; every other pair is checked in
   batches of up to 8 a prompt by the agent's model (JSON verdicts: same, update or neither) within a
   per-run token budget — or, offline, by the rules (same fact; one number changed = update);
4. same-fact pairs are merged through the mutation path (earliest origin date kept, locks enforced);
   an update is applied as an audited update of the older memory with the newer one's text, the newer
   soft-deleted with the reason, and an `update_resolution` record linking the two — never a silent
   delete. Memories of a sensitive user-context field are never changed by the job: an update is filed
   as a proposed patch (the user's consent applies it) and duplicates are left alone. Every write is
   checked against the writing rules first. All of it inside a `refinement_sessions` row with trigger
   `consolidation`, so `rollback session` undoes a run.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from flask import current_app
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import select

from models import Agent, AgentMemory, DomainError, PairFingerprint, RefinementSession, atomic, db, utcnow
from models.agents.agent import active_agent_ids, core_totals
from models.changes import write
from models.changes.patches import SENSITIVE_FIELDS, context_field
from models.changes.rules import same_scope
from models.history.audit import new_op_id, write_audit
from models.history.session import account_turn, finish_session, set_baseline, start_session
from models.history.session import count as count_stat
from models.retrieval.relations import pair_fingerprint

from .llm import json_object, missing_endpoint, model_configured, model_for
from .prefilter import Candidate, bands_for, passes, resolve
from .relations import agent_vectors, embed_memories

log = logging.getLogger(__name__)

TYPES = ("semantic", "episodic", "procedural", "insight")
POOL_WINDOW = timedelta(hours=72)
FINGERPRINT_TTL = timedelta(days=14)
PAIRS_PER_PROMPT = 8
ACTOR = "system:consolidation"

PROMPT = """Decide for each numbered pair of your memories (A is the older, B the newer) whether both
state the SAME specific fact (same people, numbers, dates and meaning), or whether B UPDATES A: the same
fact about the same thing with one value changed since (for example a weight, a date or a count), so B
replaces A. Different details about different things mean different facts. When unsure, answer false.
Answer with JSON only: {{"verdicts": [{{"pair": 1, "same": true, "update": false}}, ...]}}

{pairs}"""


class Verdict(BaseModel):
    pair: int
    same: bool = False
    update: bool = False


class Verdicts(BaseModel):
    verdicts: list[Verdict] = Field(default_factory=list, max_length=PAIRS_PER_PROMPT)


def candidate_pairs(agent_id: int, limit: int) -> list[tuple[AgentMemory, AgentMemory, float]]:
    """Pre-filtered, not recently checked pairs (older, newer, cosine), best first."""
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
        i
        for i, mid in enumerate(ids)
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
            if key in pairs or a.memory_type != b.memory_type or not same_scope(a, b):
                continue
            if a.constitutional or b.constitutional or a.immutable_tags or b.immutable_tags:
                continue
            if pair_fingerprint(a.id, b.id, score) in seen:
                continue
            bands = bands_for(a.tags, b.tags)
            if bands is None:  # two different user-context fields never merge
                continue
            if passes(
                Candidate(a.id, a.content, a.updated_at),
                Candidate(b.id, b.content, b.updated_at),
                score,
                now,
                bands,
            ):
                older, newer = sorted((a, b), key=lambda m: (m.created_at, m.id))
                pairs[key] = (older, newer, score)
    return sorted(pairs.values(), key=lambda p: -p[2])[:limit]


def _model_verdicts(agent: Agent, pairs, budget: int, session: RefinementSession) -> dict[int, str]:
    """Batched checks by the agent's model ("same", "update" or "different" per pair index); stops when
    the run's token budget is spent."""
    model = model_for(agent)
    verdicts: dict[int, str] = {}
    for start in range(0, len(pairs), PAIRS_PER_PROMPT):
        if session.prompt_tokens + session.completion_tokens >= budget:
            break
        batch = pairs[start : start + PAIRS_PER_PROMPT]
        text = "\n".join(
            f"{n}. A: {a.content}\n   B: {b.content}" for n, (a, b, _) in enumerate(batch, start=1)
        )
        turn = model.turn([{"role": "user", "content": PROMPT.format(pairs=text)}], None, max_tokens=300)
        account_turn(session, turn)  # staged: committed with the run's unit of work
        try:
            parsed = Verdicts.model_validate(json_object(turn) or {})
        except ValidationError:
            continue  # an unreadable answer decides nothing
        for verdict in parsed.verdicts:
            if 1 <= verdict.pair <= len(batch):
                verdicts[start + verdict.pair - 1] = (
                    "same" if verdict.same else "update" if verdict.update else "different"
                )
    return verdicts


def _verdicts(agent: Agent, pairs, offline: bool, budget: int, session: RefinementSession) -> dict[int, str]:
    """The rules first where they may decide alone — the same-fact rule in the write-time band, and
    everything offline — then the agent's model for the rest."""
    verdicts: dict[int, str] = {}
    ask: list[int] = []
    for n, (older, newer, score) in enumerate(pairs):
        rule = resolve(older.content, newer.content)
        bands = bands_for(older.tags, newer.tags)
        if bands is None:  # different user-context fields: such a pair never merges
            verdicts[n] = "different"
        elif offline:
            verdicts[n] = rule or "different"
        elif rule == "same" and score >= bands.check_low:
            verdicts[n] = "same"
        else:
            ask.append(n)
    if ask:
        asked = _model_verdicts(agent, [pairs[n] for n in ask], budget, session)
        verdicts.update({ask[i]: verdict for i, verdict in asked.items()})
    return verdicts


def consolidate_agent(agent_id: int) -> dict:
    """One agent's daily run, under the agent's single-flight lock (never beside a refinement session).
    Running it again the same day finds nothing new (fingerprints)."""
    from infra.queues import get_rq

    from .single_flight import AgentBusy, SingleFlight

    ttl = float(current_app.config["REFINEMENT_LOCK_TTL"])
    try:
        with SingleFlight(get_rq().connection, agent_id, ttl):
            return _consolidate_locked(agent_id)
    except AgentBusy:
        return {"agent_id": agent_id, "status": "busy"}


def _consolidate_locked(agent_id: int) -> dict:
    agent = db.session.get(Agent, agent_id)
    if agent is None or not agent.active:
        return {"agent_id": agent_id, "status": "skipped"}
    missing = missing_endpoint(agent)
    if missing:  # a model that cannot be reached is reported, never replaced by the offline rule
        return {"agent_id": agent_id, "status": "skipped", "reason": missing}
    config = current_app.config
    limit = int(config["CONSOLIDATION_PAIRS_PER_DAY"])
    budget = int(config["CONSOLIDATION_TOKEN_BUDGET"])
    already = (
        db.session.scalar(
            select(db.func.count())
            .select_from(PairFingerprint)
            .where(
                PairFingerprint.agent_id == agent_id,
                PairFingerprint.checked_at > utcnow() - timedelta(days=1),
            )
        )
        or 0
    )
    pairs = candidate_pairs(agent_id, max(0, limit - already))
    if not pairs:
        return {"agent_id": agent_id, "status": "nothing to check", "checked": 0, "merged": 0}
    offline = not model_configured(agent)
    with atomic():
        session = start_session(
            agent_id, "consolidation", model="offline" if offline else agent.model_id, phase="checking"
        )
        set_baseline(session, *core_totals(agent_id))
    verdicts = _verdicts(agent, pairs, offline, budget, session)
    # The run is one unit of work: its turn accounting, its fingerprints and its counts commit together
    # at the end; each merge or update runs in its own SAVEPOINT, so a refused one undoes only itself.
    with atomic():
        touched: set[int] = set()
        merged = updated = held = refused = 0
        for n, (older, newer, score) in enumerate(pairs):
            verdict = verdicts.get(n)
            outcome = "skipped" if verdict is None else verdict
            if verdict in ("same", "update") and not {older.id, newer.id} & touched:
                try:
                    outcome = _apply(agent_id, session, older, newer, score, verdict)
                except DomainError:  # a lock, a writing rule, or a change since the pool was read
                    refused += 1
                    outcome = "skipped"
                if outcome in ("merged", "updated"):
                    touched.update((older.id, newer.id))
                merged += outcome == "merged"
                updated += outcome == "updated"
                held += outcome == "held"
            if verdict is not None:
                db.session.add(
                    PairFingerprint(
                        agent_id=agent_id,
                        fingerprint=pair_fingerprint(older.id, newer.id, score),
                        verdict=outcome[:16],
                        checked_at=utcnow(),
                    )
                )
        session.ops_count = merged + updated
        for key, value in (
            ("pairs_considered", len(pairs)),
            ("pairs_checked", len(verdicts)),
            ("consolidations", merged),
            ("consolidated", 2 * merged),
            ("updated", updated),
            ("refused", refused),
        ):
            if value:
                count_stat(session, key, value)
        finish_session(session, "completed", totals=core_totals(agent_id))
    return {
        "agent_id": agent_id,
        "status": "completed",
        "session_id": session.id,
        "checked": len(verdicts),
        "merged": merged,
        "updated": updated,
        "held": held,
        "refused": refused,
    }


def _apply(
    agent_id: int,
    session: RefinementSession,
    older: AgentMemory,
    newer: AgentMemory,
    score: float,
    verdict: str,
) -> str:
    """One resolved pair, through the one write path: "merged", "updated", "held" or "left"."""
    if context_field(list(older.tags or []) + list(newer.tags or [])) in SENSITIVE_FIELDS:
        if verdict == "same":
            return "left"  # merging would rewrite a sensitive field's memory without the user's consent
        # A sensitive field's memory is held whatever changes: this files the update for the user's consent.
        write.change(agent_id, older.id, actor=ACTOR, content=newer.content)
        return "held"
    if verdict == "same":
        write.merge(
            agent_id,
            [older.id, newer.id],
            older.content,
            actor=ACTOR,
            session_id=session.id,
            require_type=None,
        )
        return "merged"
    with atomic():  # the update and the superseded memory's soft delete stand or fall together
        write.change(agent_id, older.id, actor=ACTOR, session_id=session.id, content=newer.content)
        write.remove(
            agent_id,
            [newer.id],
            actor=ACTOR,
            session_id=session.id,
            reason=f"superseded: its fact now updates memory #{older.id}",
        )
        write_audit(
            op_id=new_op_id(),
            actor=ACTOR,
            action="update_resolution",
            agent_id=agent_id,
            session_id=session.id,
            data={"updated": older.id, "superseded": newer.id, "score": round(score, 3)},
        )
    return "updated"


def daily_consolidation() -> dict:
    """Daily, 05:00 UTC: consolidation for every active agent."""
    results = [consolidate_agent(agent_id) for agent_id in active_agent_ids()]
    merged = sum(r.get("merged", 0) for r in results)
    log.info("consolidation: %d agent(s), %d merged", len(results), merged)
    return {"agents": len(results), "merged": merged}
