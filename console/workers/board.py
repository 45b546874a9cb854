"""What the jobs page reads from Redis. Job arguments, descriptions, results and messages are never
read for display: they can carry memory text. A failure shows its exception type, nothing else."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from rq import Worker
from rq.job import Job
from rq_scheduler import Scheduler

from console.queues import RQ
from jobs.schedule import RECURRING, scheduled

FAILURES_SHOWN = 25
_TYPE = re.compile(r"^([A-Za-z_][\w.]*)(?::|$)")


def exception_type(traceback_text: str | None) -> str:
    """The exception class of a formatted traceback, found structurally (the first unindented line after
    the last frame), so a multi-line message can never be mistaken for it. Never the message."""
    if not traceback_text:
        return "unknown"
    lines = traceback_text.splitlines()
    last_frame = max((i for i, line in enumerate(lines) if line.startswith('  File "')), default=None)
    if last_frame is None:
        return "unknown"
    for line in lines[last_frame + 1 :]:
        if line and not line[0].isspace():
            match = _TYPE.match(line)
            return match.group(1) if match else "unknown"
    return "unknown"


@dataclass
class QueueRow:
    name: str
    queued: int
    started: int
    scheduled: int
    failed: int
    finished: int


@dataclass
class WorkerRow:
    name: str
    state: str
    queues: list[str]
    current_job_id: str | None
    last_heartbeat: datetime | None
    successful: int
    failed: int


@dataclass
class RecurringRow:
    name: str
    cron: str
    queue: str
    description: str
    next_run: datetime | None


@dataclass
class FailureRow:
    job_id: str
    func_name: str
    queue: str
    enqueued_at: datetime | None
    ended_at: datetime | None
    exc_type: str
    session_id: int | None


def queue_rows(rq: RQ) -> list[QueueRow]:
    return [
        QueueRow(
            name=q.name,
            queued=q.count,
            started=q.started_job_registry.count,
            scheduled=q.scheduled_job_registry.count,
            failed=q.failed_job_registry.count,
            finished=q.finished_job_registry.count,
        )
        for q in rq.queues
    ]


def worker_rows(rq: RQ) -> list[WorkerRow]:
    rows = [
        WorkerRow(
            name=w.name,
            state=str(getattr(w.get_state(), "value", w.get_state())),
            queues=w.queue_names(),
            current_job_id=w.get_current_job_id(),
            last_heartbeat=w.last_heartbeat,
            successful=w.successful_job_count,
            failed=w.failed_job_count,
        )
        for w in Worker.all(connection=rq.connection)
    ]
    return sorted(rows, key=lambda w: w.name)


def recurring_rows(rq: RQ) -> list[RecurringRow]:
    runs = {item["name"]: item["next_run"] for item in scheduled(Scheduler(connection=rq.connection))}
    return [
        RecurringRow(spec.name, spec.cron, spec.queue, spec.description, runs.get(spec.name))
        for spec in RECURRING
    ]


def failure_rows(rq: RQ, limit: int = FAILURES_SHOWN) -> list[FailureRow]:
    """The most recent failures across queues: which job, where, when, and its exception type."""
    picked: list[tuple[float, str, str]] = []
    for queue in rq.queues:
        registry = queue.failed_job_registry
        for job_id, score in rq.connection.zrevrange(registry.key, 0, limit - 1, withscores=True):
            picked.append((score, job_id.decode() if isinstance(job_id, bytes) else job_id, queue.name))
    picked.sort(reverse=True)
    picked = picked[:limit]
    jobs = Job.fetch_many([job_id for _, job_id, _ in picked], connection=rq.connection)
    rows = []
    for (_, job_id, queue_name), job in zip(picked, jobs, strict=True):
        if job is None:
            continue
        result = job.latest_result()
        text = result.exc_string if result is not None else job.exc_info
        session_id = (job.meta or {}).get("session_id")
        rows.append(
            FailureRow(
                job_id=job_id,
                func_name=job.func_name if isinstance(job.func_name, str) else "unknown",
                queue=queue_name,
                enqueued_at=job.enqueued_at,
                ended_at=job.ended_at,
                exc_type=exception_type(text),
                session_id=session_id if isinstance(session_id, int) else None,
            )
        )
    rows.sort(key=lambda r: r.ended_at or datetime.min, reverse=True)
    return rows
