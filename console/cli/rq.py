"""`rq worker`, `rq scheduler`, `rq schedule`: one app context per process, the app's own Redis."""

from __future__ import annotations

import logging
import os
import time

import click
from flask.cli import with_appcontext
from rq import Worker
from rq.worker import WorkerStatus

from infra.queues import get_rq
from jobs.embeddings import readiness_warnings as embedder_warnings
from models import db
from models.retrieval import vectors

from .common import emit

# Run in the worker's own process, not a forked work horse: the per-write linking job finds neighbours
# in the agent's vector matrix the process keeps (jobs/relations.py), which a work horse would load
# afresh and lose when it exits.
IN_PROCESS = frozenset({"jobs.relations.link_related"})
# How often the thread listening for RQ's commands wakes to see whether it should stop (RQ's own: 60 s).
COMMANDS_WAKE_SECONDS = 1.0
log = logging.getLogger(__name__)


class AppWorker(Worker):
    """RQ's forking worker, made safe for SQLAlchemy: each work horse opens its own connections. The jobs
    of IN_PROCESS run in the worker itself, as RQ's SimpleWorker runs every job."""

    def execute_job(self, job, queue):
        if job.func_name not in IN_PROCESS:
            return super().execute_job(job, queue)
        execution = self.prepare_execution(job)
        try:
            self.perform_job(job, queue, execution)
        finally:
            db.session.remove()  # the next job, in this process or a horse, starts with a fresh session
        self.set_state(WorkerStatus.IDLE)

    def subscribe(self):
        """RQ's listener for its commands (stop a job, shut down), woken every COMMANDS_WAKE_SECONDS. On exit
        RQ unsubscribes, then stops the listener, and redis-py's stop() waits for it: where the listener had
        already taken the unsubscribe's reply and gone back to waiting, RQ's 60 s wake held every worker's exit
        — a burst worker's, a shut-down's — for up to a minute."""
        self.log.info("Worker %s: subscribing to channel %s", self.name, self.pubsub_channel_name)
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(
            sleep_time=COMMANDS_WAKE_SECONDS, daemon=True, exception_handler=self._pubsub_exception_handler
        )

    def main_work_horse(self, job, queue):
        # Connections inherited through fork() belong to the parent; never share them.
        db.engine.dispose(close=False)
        super().main_work_horse(job, queue)


def _warn_of_the_embedder() -> None:
    """What a web process's /readyz warns of the embedder (console/health.py), in the worker's log as it
    starts: a worker has no /readyz, and without the exports' records it, or a horse, loads PyTorch."""
    for warning in embedder_warnings():
        log.warning("rq worker: %s", warning)


def _use_utc_clock() -> None:
    """Run this process on UTC: rq-scheduler 0.14 reads cron strings against the local clock
    (`datetime.now()`), and the recurring schedule in jobs/schedule.py is written in UTC."""
    os.environ["TZ"] = "UTC"
    time.tzset()


@click.group("rq")
def rq_cli() -> None:
    """Background workers and the scheduler."""


@rq_cli.command("worker")
@click.argument("queues", nargs=-1)
@click.option("--burst", is_flag=True, help="Exit when the queues are empty.")
@click.option("--name", default=None, help="Worker name (default: RQ's own).")
@with_appcontext
def worker_command(queues: tuple[str, ...], burst: bool, name: str | None) -> None:
    """Work QUEUES (default: all of interactive, default, llm, maintenance, in that order)."""
    rq = get_rq()
    selected = [rq.queue(q) for q in queues] if queues else rq.queues
    # This process forks a work horse for most jobs: no thread of its own may be alive at a fork, so the
    # vector matrices it keeps (IN_PROCESS) are rebuilt in the job's thread (models/retrieval/vectors.py).
    vectors.cache().background = False
    _warn_of_the_embedder()
    worker = AppWorker(selected, connection=rq.connection, name=name)
    worker.work(burst=burst, with_scheduler=False)


@rq_cli.command("scheduler")
@click.option("--interval", default=30, show_default=True, help="Seconds between scheduler polls.")
@click.option("--burst", is_flag=True, help="Enqueue what is due once and exit.")
@with_appcontext
def scheduler_command(interval: int, burst: bool) -> None:
    """Reconcile the recurring jobs of jobs/schedule.py, then run rq-scheduler."""
    from rq_scheduler import Scheduler

    from jobs.schedule import reconcile

    _use_utc_clock()
    rq = get_rq()
    scheduler = Scheduler(connection=rq.connection, interval=interval)
    click.echo(f"recurring jobs: {reconcile(scheduler)}", err=True)
    scheduler.run(burst=burst)


@rq_cli.command("schedule")
@click.option("--sync", is_flag=True, help="Reconcile the recurring jobs before listing them.")
@with_appcontext
def schedule_command(sync: bool) -> None:
    """List the recurring jobs and their next run times (UTC)."""
    from rq_scheduler import Scheduler

    from jobs.schedule import reconcile, scheduled

    _use_utc_clock()
    scheduler = Scheduler(connection=get_rq().connection)
    report = reconcile(scheduler) if sync else None
    emit({"recurring": scheduled(scheduler), "reconciled": report})
