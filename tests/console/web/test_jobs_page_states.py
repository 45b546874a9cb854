"""The jobs page survives every state RQ can leave a job in: queued, started by a worker that died,
failed (normally and by a killed work horse), finished, deferred, scheduled, canceled, stopped; with the
times RQ records aware and naive alike."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from rq import SimpleWorker, Worker
from rq.job import Job, JobStatus

from console.workers.board import FailureRow, failure_rows, newest_first
from tests.browser.support import make_admin, signed_in
from tests.job_fixtures import echo, explode, kill_own_process


@pytest.fixture
def web(app, redis_conn):
    make_admin()
    return signed_in(app)


def _started_by_a_dead_worker(rq) -> Job:
    """A job left in the started registry by a worker that died mid-job: status STARTED and an execution
    entry whose lease ran out, which no worker will ever finish."""
    job = rq.enqueue(echo, 1, queue="default")
    rq.queue("default").remove(job)
    job.set_status(JobStatus.STARTED)
    registry = rq.queue("default").started_job_registry
    rq.connection.zadd(registry.key, {f"{job.id}:dead-execution": time.time() - 60})
    return job


def test_jobs_page_renders_with_a_job_in_every_registry(app, web, redis_conn):
    rq = app.extensions["rq"]
    default = rq.queue("default")
    # Failed by a killed work horse (a forking worker), then a normal failure after it.
    rq.enqueue(kill_own_process, queue="maintenance")
    Worker([rq.queue("maintenance")], connection=redis_conn).work(burst=True)
    rq.enqueue(explode, "a normal failure", queue="default")
    SimpleWorker([default], connection=redis_conn).work(burst=True)
    finished = rq.enqueue(echo, "done", queue="default")
    SimpleWorker([default], connection=redis_conn).work(burst=True)
    assert finished.get_status(refresh=True) == JobStatus.FINISHED
    _started_by_a_dead_worker(rq)
    rq.enqueue(echo, "waiting", queue="default")  # queued
    parent = rq.enqueue(echo, "parent", queue="llm")
    rq.enqueue(echo, "child", queue="llm", depends_on=parent)  # deferred
    default.enqueue_in(timedelta(hours=1), echo, "later")  # scheduled
    canceled = rq.enqueue(echo, "canceled", queue="interactive")
    canceled.cancel()
    stopped = rq.enqueue(echo, "stopped", queue="interactive")
    stopped.set_status(JobStatus.STOPPED)
    rq.queue("interactive").failed_job_registry.add(stopped, ttl=3600, exc_string="stopped by an operator")

    page = web.get("/jobs")
    assert page.status_code == 200, page.text[:300]
    assert 'data-queue="default"' in page.text
    # Both the killed work horse's job and the normal failure are listed.
    assert "tests.job_fixtures.kill_own_process" in page.text and "tests.job_fixtures.explode" in page.text
    fragment = web.get("/jobs", headers={"HX-Request": "true"})
    assert fragment.status_code == 200 and 'id="jobs-board"' in fragment.text
    assert len(failure_rows(rq)) >= 3


def _row(job_id: str, ended_at: datetime | None) -> FailureRow:
    return FailureRow(job_id, "f", "default", None, ended_at, "E", None)


def test_failures_sort_newest_first_whatever_their_times_zone_or_absence():
    aware = datetime(2026, 11, 28, 6, 0, tzinfo=UTC)
    naive = datetime(2026, 11, 28, 7, 0)  # UTC, as the console stores it
    rows = newest_first([_row("aware", aware), _row("none", None), _row("naive", naive)])
    assert [r.job_id for r in rows] == ["naive", "aware", "none"]
