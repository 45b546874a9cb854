"""What starts a refinement session: the console and the CLI (`enqueue_refinement`), the weekly sweep and
the over-budget scan, and the reconciler that re-queues a stranded session or closes one whose worker
died. The choice of agents is models/refinement/due.py's; the session itself is jobs/refinement.py's.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from redis.exceptions import RedisError
from rq.job import Job, JobStatus
from sqlalchemy import func, select

from infra.queues import get_rq
from models import RefinementSession, atomic, db, utcnow
from models.agents.agent import core_totals
from models.history.audit import new_op_id, write_audit
from models.history.session import finish_session
from models.refinement.due import agents_due_for_sweep, over_budget_due

from .refinement import run_refinement
from .single_flight import lock_key

log = logging.getLogger(__name__)


QUEUE_UNREACHABLE = "the job queue was unreachable; nothing ran"
STRANDED_AFTER = timedelta(minutes=2)  # a queued session this old with no job behind it is stranded
STALLED_AFTER = timedelta(minutes=10)  # a running session with no heartbeat this long and no lock is dead


def enqueue_refinement(agent_id: int, trigger: str, actor: str, force: bool = True) -> RefinementSession:
    """Queue a session for an agent (console, CLI, scans). An agent already queued or running is not
    queued twice — unless its queued session has no job behind it (a crash between the commit and the
    enqueue, or a Redis that lost its data), which is queued again now.

    The session row is committed first, so the worker always finds it; if the enqueue then fails
    (Redis down), the row is failed at once — never left `queued` with nothing to run it — and the
    error propagates to the caller, who says the queue is unreachable.
    """
    pending = db.session.scalar(
        select(RefinementSession)
        .where(RefinementSession.agent_id == agent_id, RefinementSession.status.in_(("queued", "running")))
        .order_by(RefinementSession.id.desc())
    )
    queue = refinement_queue(actor)
    if pending is not None:
        if pending.status == "queued" and not _job_exists(pending):
            _enqueue(pending, force, queue)
        elif pending.status == "queued" and queue == "interactive":
            _promote(pending)
        return pending
    with atomic():
        session = RefinementSession(agent_id=agent_id, trigger=trigger, status="queued", phase="queued")
        db.session.add(session)
        db.session.flush()
        write_audit(
            op_id=new_op_id(),
            actor=actor,
            action="refinement_requested",
            agent_id=agent_id,
            session_id=session.id,
            data={"trigger": trigger},
        )
    _enqueue(session, force, queue)
    return session


def refinement_queue(actor: str) -> str:
    """An admin's request (console, CLI) goes on `interactive`, which workers take first; the sweeps and
    scans go on `llm`, so however many they queue, an admin's session is the next one a worker starts."""
    return "interactive" if actor.startswith("admin:") else "llm"


def _promote(session: RefinementSession) -> None:
    """An admin asks for a session that a scan already queued on `llm`: move its job to `interactive`."""
    rq = get_rq()
    job_id = f"refine-{session.id}"
    if rq.queue("llm").remove(job_id):  # 1 when it was still waiting there (0: a worker already took it)
        rq.queue("interactive").enqueue_job(Job.fetch(job_id, connection=rq.connection))


def _enqueue(session: RefinementSession, force: bool, queue: str) -> None:
    try:
        job = get_rq().enqueue(
            run_refinement, session.agent_id, session.trigger, session.id, force,
            queue=queue, job_id=f"refine-{session.id}",
        )  # fmt: skip
    except (RedisError, OSError):
        with atomic():
            db.session.refresh(session)
            if session.status == "queued":
                finish_session(
                    session, "failed", totals=core_totals(session.agent_id), error=QUEUE_UNREACHABLE
                )
        raise
    with atomic():
        session.job_id = job.id


def _job_exists(session: RefinementSession) -> bool:
    return Job.exists(f"refine-{session.id}", connection=get_rq().connection)


def reconcile_sessions(now=None) -> dict:
    """Every 5 minutes: no session stays stranded. A `queued` session older than two minutes whose
    job does not exist is queued again (one whose job failed or was stopped is failed); a `running` one with no heartbeat for ten minutes whose agent
    lock has lapsed belonged to a dead worker and is marked `interrupted` (each of its applied
    operations is whole and audited). Raises if Redis is unreachable, so RQ records the failure."""
    now = now or utcnow()
    requeued, failed, interrupted = [], [], []
    stranded = db.session.scalars(
        select(RefinementSession).where(
            RefinementSession.status == "queued", RefinementSession.started_at < now - STRANDED_AFTER
        )
    ).all()
    for session in stranded:
        job = (
            Job.fetch(f"refine-{session.id}", connection=get_rq().connection)
            if _job_exists(session)
            else None
        )
        if job is None:
            interactive = session.trigger in ("console", "cli", "manual")  # an admin asked for it
            _enqueue(session, force=interactive, queue="interactive" if interactive else "llm")
            requeued.append(session.id)
        elif job.get_status() in (JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED):
            with atomic():  # the job ended without ever opening the session (its RQ record says why)
                finish_session(
                    session,
                    "failed",
                    totals=core_totals(session.agent_id),
                    error=f"its job {job.get_status().value} before the session started",
                )
            failed.append(session.id)
    stalled = db.session.scalars(
        select(RefinementSession).where(
            RefinementSession.status == "running",
            func.coalesce(RefinementSession.heartbeat_at, RefinementSession.started_at) < now - STALLED_AFTER,
        )
    ).all()
    connection = get_rq().connection
    for session in stalled:
        if not connection.exists(lock_key(session.agent_id)):
            with atomic():
                finish_session(
                    session, "interrupted", totals=core_totals(session.agent_id),
                    error="the worker stopped mid-session; every applied operation is whole and audited",
                )  # fmt: skip
            interrupted.append(session.id)
    if requeued or failed or interrupted:
        log.info(
            "sessions reconciled: %d re-queued, %d failed, %d interrupted",
            len(requeued),
            len(failed),
            len(interrupted),
        )
    return {"requeued": requeued, "failed": failed, "interrupted": interrupted}


def refinement_sweep() -> dict:
    """Weekly (Monday 04:00 UTC): queue a session for every agent due; each applies the skip rules."""
    queued = [
        enqueue_refinement(agent_id, "schedule", "system:sweep", force=False).id
        for agent_id in agents_due_for_sweep()
    ]
    log.info("refinement sweep queued %d session(s)", len(queued))
    return {"queued": queued}


def over_budget_scan() -> dict:
    """Every 15 minutes: queue a session for agents over budget (not within the cool-down)."""
    agent_ids = over_budget_due()
    queued = [
        enqueue_refinement(agent_id, "over_budget", "system:over-budget", force=False).id
        for agent_id in agent_ids
    ]
    log.info("over-budget scan: %d agent(s) over budget, %d queued", len(agent_ids), len(queued))
    return {"over_budget": agent_ids, "queued": queued}
