"""Refinement sessions: the job that runs one, its single-flight lock, and the triggers that start them.

One session per agent at a time, across worker processes: a Redis lock that a heartbeat thread
keeps alive (it lapses within `REFINEMENT_LOCK_TTL` seconds of a crash), backed by a partial
unique index in the database (one `running` session per agent).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from datetime import timedelta
from typing import Any

from flask import current_app
from redis import Redis
from redis.lock import Lock
from rq import get_current_job
from sqlalchemy import select, update

from console.queues import get_rq
from models import Agent, AgentMemory, RefinementSession, db, utcnow
from models.audit import new_op_id, write_audit
from models.mutations import dedup_for_agent
from models.refinement import TERMINATED_MESSAGE, RefinementToolbox, core_totals, tool_specs

from .llm import model_for, parse_consent
from .prompts import KICKOFF, NUDGE, consent_prompt, refinement_prompt

log = logging.getLogger(__name__)

DEFAULT_MAX_TURNS = 30
DEFAULT_WALL_SECONDS = 900
DEFAULT_LOCK_TTL = 30
OVER_BUDGET_COOLDOWN = timedelta(hours=24)


class AgentBusy(Exception):
    """Another refinement session holds this agent."""


class SingleFlight:
    """A Redis lock per agent, extended by a heartbeat thread while the session runs."""

    def __init__(self, connection: Redis, agent_id: int, ttl: float) -> None:
        self.lock = Lock(connection, f"memconsole:refine:agent:{agent_id}", timeout=ttl, thread_local=False)
        self.ttl = ttl
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> SingleFlight:
        if not self.lock.acquire(blocking=False):
            raise AgentBusy("another refinement session is running for this agent")
        self._thread = threading.Thread(target=self._beat, name="refine-heartbeat", daemon=True)
        self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                self.lock.reacquire()
            except Exception:  # lost the lock (Redis restarted): the DB index still guards us
                log.warning("refinement lock could not be extended")
                return

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            self.lock.release()
        except Exception:
            log.warning("refinement lock had already lapsed")


# ----- the session -----


def _progress(session: RefinementSession, phase: str) -> None:
    """Visible progress: the session row (the console polls it) and the RQ job's meta."""
    session.phase = phase
    session.heartbeat_at = utcnow()
    db.session.commit()
    job = get_current_job()
    if job is not None:
        job.meta.update({"session_id": session.id, "phase": phase, "ops": session.ops_count})
        job.save_meta()


def _finish(session: RefinementSession, status: str, error: str | None = None) -> None:
    session.status = status
    session.finished_at = utcnow()
    session.phase = status
    session.tokens_after, session.count_after = core_totals(session.agent_id)
    if error:
        session.error = error
    db.session.commit()


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
    db.session.execute(stmt)
    db.session.commit()


def _open_session(agent: Agent, trigger: str, session_id: int | None, model_label: str) -> RefinementSession:
    session = db.session.get(RefinementSession, session_id) if session_id else None
    if session is None:
        session = RefinementSession(agent_id=agent.id, trigger=trigger)
        db.session.add(session)
    job = get_current_job()
    session.status = "running"
    session.started_at = utcnow()
    session.model = model_label
    session.job_id = job.id if job is not None else session.job_id
    db.session.commit()
    return session


def run_refinement(agent_id: int, trigger: str = "manual", session_id: int | None = None, force: bool = False) -> dict:
    """Run one refinement session for an agent (an RQ job on the `llm` queue, or in-process with --now).

    dedup → skip checks → consent → the tool loop → complete / incomplete / terminated.
    Raises on unexpected failure after recording it on the session, so RQ records it too.
    """
    agent = db.session.get(Agent, agent_id)
    if agent is None or not agent.active:
        raise LookupError(f"agent {agent_id} not found or inactive")
    ttl = float(current_app.config.get("REFINEMENT_LOCK_TTL", DEFAULT_LOCK_TTL))
    try:
        with SingleFlight(get_rq().connection, agent_id, ttl):
            _interrupt_orphans(agent_id, keep=session_id)
            return _run_locked(agent, trigger, session_id, force)
    except AgentBusy as busy:
        if session_id:
            queued = db.session.get(RefinementSession, session_id)
            if queued is not None and queued.status == "queued":
                queued.status, queued.phase, queued.finished_at = "skipped", "skipped", utcnow()
                queued.error = str(busy)
                db.session.commit()
        return {"session_id": session_id, "status": "busy", "error": str(busy)}


def _run_locked(agent: Agent, trigger: str, session_id: int | None, force: bool) -> dict:
    model = model_for(agent)
    session = _open_session(agent, trigger, session_id, model.label)
    try:
        _progress(session, "dedup")
        dedup_for_agent(agent.id)
        tokens, count = core_totals(agent.id)
        session.tokens_before, session.count_before = tokens, count
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
        session.stats = {**(session.stats or {}), "consent_reason_chars": len(reason)}
        if not agreed:
            _finish(session, "consent_declined")
            _audit_session_event(session, "refinement_consent_declined")
            return result(session)

        _loop(session, agent, model, tokens)
        return result(session)
    except Exception as err:
        db.session.rollback()
        session = db.session.get(RefinementSession, session.id)
        # The type and the HTTP status, never the message text: errors can echo prompt content.
        status_code = getattr(err, "status_code", None)
        _finish(session, "failed", f"{type(err).__name__}" + (f" (HTTP {status_code})" if status_code else ""))
        raise


def _loop(session: RefinementSession, agent: Agent, model, tokens: int) -> None:
    memories = db.session.scalars(AgentMemory.active_core(agent.id)).all()
    # Built once: the system message is byte-identical on every turn, so prompt caching holds.
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": refinement_prompt(agent, list(memories), tokens)},
        {"role": "user", "content": KICKOFF},
    ]
    tools = tool_specs()
    toolbox = RefinementToolbox(session.id)
    max_turns = int(current_app.config.get("REFINEMENT_MAX_TURNS", DEFAULT_MAX_TURNS))
    deadline = time.monotonic() + float(current_app.config.get("REFINEMENT_WALL_SECONDS", DEFAULT_WALL_SECONDS))

    for turn_number in range(1, max_turns + 1):
        if time.monotonic() > deadline:
            break
        _progress(session, f"turn {turn_number}")
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

    # Out of turns or time: what was applied stays (each operation passed the breaker); check once more.
    db.session.refresh(session)
    if session.status == "running":
        toolbox.close_incomplete("the model did not call complete_refinement within its turns")
        db.session.refresh(session)


def _dump(value: dict) -> str:
    return json.dumps(value, default=str, separators=(",", ":"))


def _account(session: RefinementSession, turn) -> None:
    session.llm_turns += 1
    session.prompt_tokens += turn.prompt_tokens
    session.completion_tokens += turn.completion_tokens
    session.cached_tokens += turn.cached_tokens
    session.heartbeat_at = utcnow()
    db.session.commit()


def _audit_session_event(session: RefinementSession, action: str) -> None:
    write_audit(op_id=new_op_id(), actor="system:refinement", action=action, agent_id=session.agent_id,
                session_id=session.id, data={"status": session.status})
    db.session.commit()


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
    }


# ----- triggers -----


def enqueue_refinement(agent_id: int, trigger: str, actor: str, force: bool = True) -> RefinementSession:
    """Queue a session for an agent (console, CLI). An agent already queued or running is not queued twice."""
    pending = db.session.scalar(
        select(RefinementSession)
        .where(RefinementSession.agent_id == agent_id, RefinementSession.status.in_(("queued", "running")))
        .order_by(RefinementSession.id.desc())
    )
    if pending is not None:
        return pending
    session = RefinementSession(agent_id=agent_id, trigger=trigger, status="queued", phase="queued")
    db.session.add(session)
    db.session.flush()
    write_audit(op_id=new_op_id(), actor=actor, action="refinement_requested", agent_id=agent_id,
                session_id=session.id, data={"trigger": trigger})
    db.session.commit()
    job = get_rq().enqueue(
        run_refinement, agent_id, trigger, session.id, force, queue="llm", job_id=f"refine-{session.id}"
    )
    session.job_id = job.id
    db.session.commit()
    return session


def agents_due_for_sweep(now=None) -> list[int]:
    """Weekly: active agents never refined or not within the week, plus any over budget (one query)."""
    now = now or utcnow()
    rows = db.session.scalars(
        select(Agent.id)
        .where(
            Agent.active.is_(True),
            Agent.core_count > 0,  # nothing to refine without core memories
            (Agent.last_refinement_at.is_(None))
            | (Agent.last_refinement_at < now - timedelta(weeks=1))
            | (Agent.core_tokens > Agent.core_token_budget),
        )
        .order_by(Agent.id)
    )
    return list(rows)


def over_budget_due(now=None, cooldown: timedelta = OVER_BUDGET_COOLDOWN) -> list[int]:
    """Over-budget agents without a session started within the cool-down, in one query over the
    maintained totals (O(agents), not O(memories)); the cool-down is an index probe per over-budget agent."""
    now = now or utcnow()
    recent = select(RefinementSession.id).where(
        RefinementSession.agent_id == Agent.id, RefinementSession.started_at >= now - cooldown
    )
    rows = db.session.scalars(
        select(Agent.id)
        .where(Agent.active.is_(True), Agent.core_tokens > Agent.core_token_budget, ~recent.exists())
        .order_by(Agent.id)
    )
    return list(rows)


def refinement_sweep() -> dict:
    """Weekly (Monday 04:00 UTC): queue a session for every agent due; each applies the skip rules."""
    queued = [enqueue_refinement(agent_id, "schedule", "system:sweep", force=False).id for agent_id in agents_due_for_sweep()]
    log.info("refinement sweep queued %d session(s)", len(queued))
    return {"queued": queued}


def over_budget_scan() -> dict:
    """Every 15 minutes: queue a session for agents over budget (not within the cool-down)."""
    agent_ids = over_budget_due()
    queued = [enqueue_refinement(agent_id, "over_budget", "system:over-budget", force=False).id for agent_id in agent_ids]
    log.info("over-budget scan: %d agent(s) over budget, %d queued", len(agent_ids), len(queued))
    return {"over_budget": agent_ids, "queued": queued}
