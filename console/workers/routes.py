"""The jobs page: queues, workers, the recurring schedule and recent failures, refreshed live by
htmx polling; and the operator's actions, all through RQ's own API: requeue or delete a failed job,
run a recurring job now, pause and resume the workers."""

from __future__ import annotations

import logging
import re

from flask import abort, flash, url_for
from flask_login import current_user
from redis.exceptions import RedisError
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Job
from rq.suspension import resume, suspend

from console.web.htmx import redirect_to, render
from infra.queues import get_rq
from jobs.schedule import recurring

from .blueprint import bp
from .board import failure_rows, queue_rows, recurring_rows, worker_rows, workers_paused
from .last_runs import last_runs, remember_run_now, run_now_id

log = logging.getLogger(__name__)
JOB_ID = re.compile(r"^[\w-]{1,128}$")


def _board() -> dict:
    rq = get_rq()
    try:
        return {
            "queues": queue_rows(rq),
            "workers": worker_rows(rq),
            "recurring": recurring_rows(rq),
            "last_runs": last_runs(rq, recurring()),
            "failures": failure_rows(rq),
            "paused": workers_paused(rq),
            "unreachable": False,
        }
    except (RedisError, OSError) as err:
        log.warning("jobs page: Redis unreachable (%s)", type(err).__name__)
        return {
            "queues": [],
            "workers": [],
            "recurring": [],
            "last_runs": {},
            "failures": [],
            "paused": False,
            "unreachable": True,
        }


@bp.get("/jobs")
def index():
    """Queues, workers, the recurring schedule and recent failures (the call stack, never a message).
    The board re-renders itself every few seconds (htmx polling of the same URL)."""
    return render("workers/index.html", "workers/_board.html", **_board())


def _done(message: str, category: str = "info"):
    flash(message, category)
    log.info("jobs page: %s by %s", message, current_user.actor)
    return redirect_to(url_for("workers.index"))


def _failed_job(job_id: str) -> Job:
    if not JOB_ID.match(job_id):
        abort(404, description="No such job.")
    try:
        return Job.fetch(job_id, connection=get_rq().connection)
    except NoSuchJobError:
        abort(404, description=f"Job {job_id} no longer exists (its failure record expired or was deleted).")


@bp.post("/jobs/failed/<job_id>/requeue")
def requeue(job_id: str):
    """Put a failed job back on its queue (RQ's FailedJobRegistry.requeue)."""
    job = _failed_job(job_id)
    try:
        get_rq().queue(job.origin).failed_job_registry.requeue(job)
    except (InvalidJobOperation, KeyError):
        return _done(f"Job {job_id} is not a failed job any more; nothing was requeued.", "error")
    return _done(f"Job {job_id} is queued again on {job.origin}.")


@bp.post("/jobs/failed/<job_id>/delete")
def delete(job_id: str):
    """Delete a failed job and its failure record (RQ's Job.delete)."""
    job = _failed_job(job_id)
    job.delete()
    return _done(f"Job {job_id} and its failure record were deleted.")


@bp.post("/jobs/recurring/<name>/run")
def run_now(name: str):
    """Queue one run of a recurring job now, on its own queue; its schedule is unchanged."""
    spec = next((spec for spec in recurring() if spec.name == name), None)  # the configured timings
    if spec is None:
        abort(404, description="No such recurring job.")
    try:
        rq = get_rq()
        job = rq.enqueue(spec.func, queue=spec.queue, job_id=run_now_id(spec.name))
        remember_run_now(rq.connection, spec.name, job.id)  # the page shows it as the job's last run
    except RedisError:
        return _done("The job queue is unreachable; nothing was queued.", "error")
    return _done(f"{spec.description}: queued now as job {job.id} on {spec.queue}.")


@bp.post("/jobs/workers/pause")
def pause():
    """Suspend every worker (RQ's `suspend`: RQ pauses workers, not single queues). Jobs running now
    finish; no new job starts until resumed."""
    suspend(get_rq().connection)
    return _done("Workers paused: running jobs finish, no new job starts until you resume.")


@bp.post("/jobs/workers/resume")
def resume_workers():
    resume(get_rq().connection)
    return _done("Workers resumed.")
