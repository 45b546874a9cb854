"""Each recurring job's last run, for the jobs page: when it started, how long it took, how it ended and
where to see what it changed. A scheduled run reuses the job id rq-scheduler gave it; a run an admin
asked for ("Run now") gets its own id, remembered here per job, and the later of the two is shown.

What a run returned is summarised only where it is a mapping of code-named counts (our jobs return
counts and ids): whole numbers are shown, lists of ids by their length, everything else is left out, so
no text a job returned can reach the page. A failure shows its exception type (board.py), never its
message.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime

from redis import Redis
from rq.job import Job
from rq.results import Result

from infra.queues import RQ
from jobs.schedule import Recurring
from models.parsing import to_utc

from .board import exception_type

NOW_KEY = "console:recurring-now:"  # + the job's name → the id of its latest "Run now" job
# Jobs whose result lists refinement sessions (queued, re-queued, failed, interrupted) by id: the
# sessions are what they changed, so the page links each one (jobs/triggers.py).
SESSION_JOBS = {"refinement-sweep", "over-budget-scan", "session-reconcile"}
SESSIONS_SHOWN = 10
_KEY = re.compile(r"^[a-z][a-z_]{0,39}$")


@dataclass
class LastRun:
    job_id: str
    status: str  # finished, failed, started, queued, scheduled ...
    started_at: datetime | None
    ended_at: datetime | None
    error_type: str | None = None
    figures: list[tuple[str, int]] = field(default_factory=list)
    manual: bool = False  # an admin's "Run now"
    session_ids: list[int] = field(default_factory=list)  # sessions the run queued or closed

    @property
    def seconds(self) -> float | None:
        if self.started_at is None or self.ended_at is None:
            return None
        return max(0.0, (self.ended_at - self.started_at).total_seconds())


def run_now_id(name: str) -> str:
    """A fresh job id for an admin's run of a recurring job (RQ ids: letters, digits, "_" and "-")."""
    return f"recurring-{name}-now-{uuid.uuid4().hex[:12]}"


def remember_run_now(connection: Redis, name: str, job_id: str) -> None:
    connection.set(NOW_KEY + name, job_id, ex=30 * 24 * 3600)


def figures(value: object) -> list[tuple[str, int]]:
    """A job's return value as (label, count) pairs, only where it is a mapping of code-named counts."""
    if not isinstance(value, dict):
        return []
    out = []
    for key, item in value.items():
        if not (isinstance(key, str) and _KEY.match(key)):
            continue
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            out.append((key.replace("_", " "), item))
        elif isinstance(item, list | tuple) and all(
            isinstance(i, int) and not isinstance(i, bool) for i in item
        ):
            out.append((key.replace("_", " "), len(item)))
    return out[:6]


def _time(moment: object) -> datetime | None:
    return to_utc(moment) if isinstance(moment, datetime) else None


def session_ids(value: object) -> list[int]:
    """The refinement session ids a session job's result lists, first ones first, at most a few."""
    if not isinstance(value, dict):
        return []
    ids: list[int] = []
    for key in ("queued", "requeued", "failed", "interrupted"):
        items = value.get(key)
        if isinstance(items, list):
            ids += [i for i in items if isinstance(i, int) and not isinstance(i, bool) and i not in ids]
    return ids[:SESSIONS_SHOWN]


def _run(job: Job, manual: bool, sessions: bool) -> LastRun | None:
    started = _time(job.started_at)
    if started is None:
        return None  # never ran (or waiting for its first run)
    status = job.get_status(refresh=False)
    status_name = str(getattr(status, "value", status) or "unknown")
    result = job.latest_result()
    error = figures_of = None
    ids: list[int] = []
    if result is not None and result.type == Result.Type.FAILED:
        error = exception_type(result.exc_string)
    elif result is not None and result.type == Result.Type.SUCCESSFUL:
        figures_of = figures(result.return_value)
        ids = session_ids(result.return_value) if sessions else []
    return LastRun(
        job.id,
        status_name,
        started,
        _time(job.ended_at),
        error,
        figures_of or [],
        manual=manual,
        session_ids=ids,
    )


def last_runs(rq: RQ, specs: tuple[Recurring, ...]) -> dict[str, LastRun]:
    """The latest run of each recurring job that has run at least once (scheduled or by hand)."""
    connection = rq.connection
    manual_ids = connection.mget([NOW_KEY + spec.name for spec in specs]) if specs else []
    ids: list[tuple[str, str, bool]] = []
    for spec, manual in zip(specs, manual_ids, strict=True):
        ids.append((spec.name, spec.job_id, False))
        if manual:
            ids.append((spec.name, manual.decode() if isinstance(manual, bytes) else manual, True))
    jobs = Job.fetch_many([job_id for _, job_id, _ in ids], connection=connection)
    out: dict[str, LastRun] = {}
    for (name, _, manual), job in zip(ids, jobs, strict=True):
        run = _run(job, manual, name in SESSION_JOBS) if job is not None else None
        if run is None:
            continue
        if name not in out or (out[name].started_at or datetime.min) < (run.started_at or datetime.min):
            out[name] = run
    return out
