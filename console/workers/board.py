"""What the jobs page reads from Redis. Job arguments, descriptions, results and messages are never
read for display: they can carry memory text. A failure shows its exception type, nothing else."""

from __future__ import annotations

import linecache
import os
import re
from dataclasses import dataclass, field
from datetime import datetime

from rq import Worker
from rq.job import Job
from rq_scheduler import Scheduler

from infra.queues import RQ
from jobs.schedule import recurring, scheduled
from models.parsing import to_utc

FAILURES_SHOWN = 25
_TYPE = re.compile(r"^([A-Za-z_][\w.]*)(?::|$)")
_FRAME = re.compile(r'^  File "([^"\n]{1,400})", line (\d{1,7}), in ([\w<>.]{1,200})$')
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class Frame:
    path: str
    line: int
    function: str
    code: str  # the source line, read from the file on this server: code, never data


def traceback_frames(traceback_text: str | None) -> list[Frame]:
    """The call stack of a failure as (file, line, function, source line) — never the exception's
    message or any line of the traceback text other than the frame headers, since job errors can
    carry memory text. Source lines are read from the files themselves, and only from .py files."""
    frames = []
    for line in (traceback_text or "").splitlines():
        match = _FRAME.match(line)
        if not match:
            continue
        path, number, function = match.group(1), int(match.group(2)), match.group(3)
        # Only frames naming a real source file on this server: a message line shaped like a frame
        # header (it could be text from a memory) names no such file and is dropped.
        if not (path.endswith(".py") and os.path.isfile(path)):
            continue
        code = linecache.getline(path, number).strip()
        shown = os.path.relpath(path, ROOT) if path.startswith(ROOT) else path.rsplit("site-packages/", 1)[-1]
        frames.append(Frame(shown, number, function, code[:200]))
    return frames


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
    frames: list[Frame] = field(default_factory=list)


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
            last_heartbeat=_utc(w.last_heartbeat),
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
        for spec in recurring()
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
        # No result at all: the job reached the failed registry without a worker recording one (an
        # operator's stop, a cleanup); its type is then unknown rather than read some other way.
        text = getattr(result, "exc_string", None) if result is not None else None
        session_id = (job.meta or {}).get("session_id")
        rows.append(
            FailureRow(
                job_id=job_id,
                func_name=job.func_name if isinstance(job.func_name, str) else "unknown",
                queue=queue_name,
                enqueued_at=_utc(job.enqueued_at),
                ended_at=_utc(job.ended_at),
                exc_type=exception_type(text),
                session_id=session_id if isinstance(session_id, int) else None,
                frames=traceback_frames(text),
            )
        )
    return newest_first(rows)


def _utc(moment: object) -> datetime | None:
    """A time RQ recorded as naive UTC (the console's own form): RQ writes aware times, older jobs and
    other writers naive ones, and one page may hold both. Anything that is not a time counts as unknown."""
    return to_utc(moment) if isinstance(moment, datetime) else None


def newest_first(rows: list[FailureRow]) -> list[FailureRow]:
    """Failures by end time, newest first; those with no recorded end (a killed work horse's job, one
    moved off the started registry by a cleanup) last, since when they ended is unknown."""
    known = sorted((r for r in rows if r.ended_at is not None), key=lambda r: _utc(r.ended_at), reverse=True)
    return known + [r for r in rows if r.ended_at is None]


def workers_paused(rq: RQ) -> bool:
    """RQ's own suspension flag (`rq suspend`): while set, no worker takes a new job from any queue."""
    from rq.suspension import is_suspended

    return bool(is_suspended(rq.connection))
