"""Refinement sessions: the job that runs one — consent, the tool loop over the agent's model, paging of
large ledgers, the outcome — under the agent's single-flight lock (jobs/single_flight.py). What starts
a session is jobs/triggers.py.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from flask import current_app
from rq import get_current_job
from sqlalchemy import select, update

from infra.queues import get_rq
from models import Agent, AgentMemory, RefinementSession, atomic, db, utcnow
from models.agents.agent import core_totals
from models.changes.dedup import dedup_for_agent
from models.db import estimate_tokens
from models.history.audit import new_op_id, write_audit
from models.history.session import account_turn, finish_session, set_baseline, start_session
from models.history.session import count as count_stat
from models.refinement.toolbox import HARD_CAP, TERMINATED_MESSAGE, RefinementToolbox
from models.refinement.tools import tool_specs

from .chat import OFFLINE_LABEL
from .ledger import MIN_MAX_TOKENS, LedgerEntry, Page, plan_pages
from .llm import ModelNotConfigured, model_for, parse_consent
from .prompts import (
    KICKOFF,
    NUDGE,
    PAGE_KICKOFF,
    consent_prompt,
    ledger_line,
    paged_refinement_prompt,
    refinement_prompt,
)
from .relations import agent_vectors, embed_memories
from .single_flight import AgentBusy, SingleFlight

log = logging.getLogger(__name__)


# ----- the session -----


def _progress(session: RefinementSession, phase: str) -> None:
    """Visible progress: the session row (the console polls it) and the RQ job's meta."""
    with atomic():
        session.phase = phase
        session.heartbeat_at = utcnow()
    job = get_current_job()
    if job is not None:
        job.meta.update({"session_id": session.id, "phase": phase, "ops": session.ops_count})
        job.save_meta()


def _finish(session: RefinementSession, status: str, error: str | None = None) -> None:
    with atomic():
        finish_session(session, status, totals=core_totals(session.agent_id), error=error)


def _interrupt_orphans(agent_id: int, keep: int | None) -> None:
    """Sessions still marked running while we hold the lock belong to a worker that died."""
    stmt = (
        update(RefinementSession)
        .where(RefinementSession.agent_id == agent_id, RefinementSession.status == "running")
        .values(
            status="interrupted",
            phase="interrupted",
            finished_at=utcnow(),
            error="the worker stopped mid-session; every applied operation is whole and audited",
        )
    )
    if keep is not None:
        stmt = stmt.where(RefinementSession.id != keep)
    with atomic():
        db.session.execute(stmt)


def run_refinement(
    agent_id: int, trigger: str = "manual", session_id: int | None = None, force: bool = False
) -> dict:
    """Run one refinement session for an agent (an RQ job on the `llm` queue, or in-process with --now).

    dedup → skip checks → consent → the tool loop → complete / incomplete / terminated.
    Raises on unexpected failure after recording it on the session, so RQ records it too.
    """
    agent = db.session.get(Agent, agent_id)
    if agent is None or not agent.active:
        raise LookupError(f"agent {agent_id} not found or inactive")
    ttl = float(current_app.config["REFINEMENT_LOCK_TTL"])
    try:
        with SingleFlight(get_rq().connection, agent_id, ttl):
            _interrupt_orphans(agent_id, keep=session_id)
            return _run_locked(agent, trigger, session_id, force)
    except AgentBusy as busy:
        if session_id:
            with atomic():
                queued = db.session.get(RefinementSession, session_id)
                if queued is not None and queued.status == "queued":
                    finish_session(queued, "skipped", totals=core_totals(agent_id), error=str(busy))
        return {"session_id": session_id, "status": "busy", "error": str(busy)}


def _run_locked(agent: Agent, trigger: str, session_id: int | None, force: bool) -> dict:
    job = get_current_job()
    try:
        model = model_for(agent)
    except ModelNotConfigured as missing:
        # Failed on the session, never run offline in the model's name; the message names the missing
        # setting and holds no memory text, so it is recorded as it is.
        with atomic():
            session = start_session(agent.id, trigger, model=agent.model_id, session_id=session_id,
                                    job_id=job.id if job else None, phase="model")  # fmt: skip
            finish_session(session, "failed", totals=core_totals(agent.id), error=str(missing))
        raise
    with atomic():
        session = start_session(
            agent.id,
            trigger,
            model=model.label,
            session_id=session_id,
            job_id=job.id if job else None,
            phase="dedup",
        )
    try:
        with atomic():
            tokens_pre, _ = core_totals(agent.id)
            removed = dedup_for_agent(agent.id)
            tokens, count = core_totals(agent.id)
            set_baseline(session, tokens, count)
            if removed:  # before the baseline: the outcome panel tells this apart from the model's work
                count_stat(session, "dedup_removed", len(removed))
                count_stat(session, "dedup_tokens", tokens_pre - tokens)
        if count == 0:
            _finish(session, "skipped", "no core memories")
            return result(session)
        if not force and tokens <= agent.core_token_budget and agent.refined_recently():
            _finish(session, "skipped", "within budget and refined within the week")
            return result(session)

        _progress(session, "consent")
        consent = model.turn([{"role": "user", "content": consent_prompt(agent, tokens, count)}], None)
        _account(session, consent)
        agreed, reason = parse_consent(consent)
        with atomic():
            count_stat(session, "consent_reason_chars", len(reason))
            # Whose decision it was: the offline refiner's "yes" is the deployment's policy, not the agent's.
            by_policy = model.label == OFFLINE_LABEL
            write_audit(op_id=new_op_id(), actor="system:refinement" if by_policy else "agent",
                        action="refinement_consent", agent_id=agent.id, session_id=session.id,
                        data={"consent": agreed, "decided_by": "policy" if by_policy else "agent"})  # fmt: skip
        if not agreed:
            _finish(session, "consent_declined")
            _audit_session_event(session, "refinement_consent_declined")
            return result(session)

        _loop(session, agent, model, tokens)
        return result(session)
    except Exception as err:
        db.session.rollback()
        session = db.session.get_one(RefinementSession, session.id)
        # The type and the HTTP status, never the message text: errors can echo prompt content.
        status_code = getattr(err, "status_code", None)
        _finish(
            session, "failed", f"{type(err).__name__}" + (f" (HTTP {status_code})" if status_code else "")
        )
        raise


def _loop(session: RefinementSession, agent: Agent, model, tokens: int) -> None:
    memories = list(db.session.scalars(AgentMemory.active_core(agent.id)).all())
    lines = [ledger_line(m) for m in memories]
    limit = max(int(current_app.config["REFINEMENT_LEDGER_MAX_TOKENS"]), MIN_MAX_TOKENS)
    # Built once: the system message is byte-identical on every turn, so prompt caching holds.
    messages = [
        {"role": "system", "content": refinement_prompt(agent, memories, tokens)},
        {"role": "user", "content": KICKOFF},
    ]
    tools = tool_specs()
    pages = None
    if _prompt_tokens(messages, tools) > limit:
        # Too large for one prompt: pages whose opening prompt (rules, instructions, status, the page,
        # the kickoff and the tool schemas) stays within the limit.
        tools = tool_specs(paged=True)
        budget = limit - _page_overhead(session, agent, tools, limit)
        # Plain (id, text) entries: every commit below expires the ORM rows, and reading 20,000 of
        # them back one by one would cost a query each.
        entries = [LedgerEntry(m.id, m.content) for m in memories]
        pages = _pages(agent.id, entries, lines, budget)
        with atomic():
            count_stat(session, "ledger_pages", len(pages))
        line_of = dict(zip((e.id for e in entries), lines, strict=True))
        messages = _page_messages(session, agent, pages, 0, line_of, limit)
    toolbox = RefinementToolbox(session.id)
    max_turns = int(current_app.config["REFINEMENT_MAX_TURNS"])
    deadline = time.monotonic() + float(current_app.config["REFINEMENT_WALL_SECONDS"])
    page = 0

    # Turns, wall time, the hard cap and the breaker bound the session as a whole, whatever the pages.
    for turn_number in range(1, max_turns + 1):
        if time.monotonic() > deadline:
            break
        _progress(session, f"turn {turn_number}" if pages is None else f"turn {turn_number}, page {page + 1}")
        turn = model.turn(messages, tools)
        _account(session, turn)
        messages.append(turn.as_message())
        if not turn.tool_calls:
            messages.append({"role": "user", "content": NUDGE})
            continue
        for call in turn.tool_calls:
            outcome = toolbox.call(call.name, call.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": _dump(outcome)})
        db.session.refresh(session)
        if session.status in ("completed", "terminated"):
            return
        turned = int((session.stats or {}).get("ledger_pages_turned", 0))
        if pages is not None and turned != page:
            # A new page starts a new conversation: the previous page and its tool results leave the
            # prompt, which is what keeps every request within the limit.
            page = turned
            messages = _page_messages(session, agent, pages, page, line_of, limit)

    # Out of turns or time: what was applied stays (each operation passed the breaker); check once more.
    db.session.refresh(session)
    if session.status == "running":
        toolbox.close_incomplete("the model did not call complete_refinement within its turns")
        db.session.refresh(session)


def _prompt_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    """What a request costs by the product's estimate: the messages' text and the tool schemas as JSON."""
    return sum(estimate_tokens(m["content"]) for m in messages) + estimate_tokens(json.dumps(tools))


def _page_overhead(session: RefinementSession, agent: Agent, tools: list[dict[str, Any]], limit: int) -> int:
    """Everything a page's opening prompt holds besides its ledger lines (the largest page numbers and
    counts it could show), plus 3% of the limit for the JSON a provider receives around the text."""
    tokens, count = core_totals(agent.id)
    big = 10 ** len(str(count + 1)) - 1
    empty = paged_refinement_prompt(agent, [], page=big, pages=big, tokens=tokens, count=count, limit=limit)
    kickoff = PAGE_KICKOFF.format(page=big, pages=big, ops=HARD_CAP, cap=HARD_CAP)
    return _prompt_tokens([{"content": empty}, {"content": kickoff}], tools) + limit * 3 // 100


def _pages(agent_id: int, memories: list[LedgerEntry], lines: list[str], limit: int) -> list[Page]:
    """The page plan, with the agent's stored vectors (refreshed first) for the neighbourhoods."""
    try:
        embed_memories(agent_id)
        ids, matrix = agent_vectors(agent_id, ("core",))
        vectors = {int(i): matrix[n] for n, i in enumerate(ids)}
    except Exception as error:  # an unreachable embeddings endpoint costs the grouping, not the session
        log.warning("ledger paging: no vectors (%s); grouping by text only", type(error).__name__)
        vectors = None
    return plan_pages(memories, lines, limit, vectors)


def _page_messages(
    session: RefinementSession,
    agent: Agent,
    pages: list[Page],
    page: int,
    line_of: dict[int, str],
    limit: int,
) -> list[dict[str, Any]]:
    """The conversation for one page: its lines as of now (memories merged away since the plan are
    gone from it), the token status of the whole core, and a kickoff with the session's progress."""
    wanted = pages[page].ids
    active = set(
        db.session.scalars(
            select(AgentMemory.id).where(AgentMemory.id.in_(wanted), AgentMemory.deleted_at.is_(None))
        )
    )
    tokens, count = core_totals(agent.id)
    system = paged_refinement_prompt(
        agent,
        [line_of[i] for i in wanted if i in active],
        page=page + 1,
        pages=len(pages),
        tokens=tokens,
        count=count,
        limit=limit,
    )
    kickoff = PAGE_KICKOFF.format(page=page + 1, pages=len(pages), ops=session.ops_count, cap=HARD_CAP)
    return [{"role": "system", "content": system}, {"role": "user", "content": kickoff}]


def _dump(value: dict) -> str:
    return json.dumps(value, default=str, separators=(",", ":"))


def _account(session: RefinementSession, turn) -> None:
    with atomic():
        account_turn(session, turn)


def _audit_session_event(session: RefinementSession, action: str) -> None:
    with atomic():
        write_audit(
            op_id=new_op_id(),
            actor="system:refinement",
            action=action,
            agent_id=session.agent_id,
            session_id=session.id,
            data={"status": session.status},
        )


def result(session: RefinementSession) -> dict:
    """The session as one JSON-able object (metadata only)."""
    return {
        "session_id": session.id,
        "agent_id": session.agent_id,
        "status": session.status,
        "ops": session.ops_count,
        "tokens_before": session.tokens_before,
        "tokens_after": session.tokens_after,
        "count_before": session.count_before,
        "count_after": session.count_after,
        "model": session.model,
        "turns": session.llm_turns,
        "prompt_tokens": session.prompt_tokens,
        "completion_tokens": session.completion_tokens,
        "cached_tokens": session.cached_tokens,
        "stats": session.stats,
        "error": session.error,
        "terminated_message": TERMINATED_MESSAGE if session.status == "terminated" else None,
        "left_in_place": session.left_in_place,  # a breaker trip's operations it could not undo exactly
    }
