"""When will an agent's next refinement run? A read-only forecast from the recurring schedule.

The rules are the triggers' own (jobs/triggers.py, models/refinement/due.py): the over-budget scan queues an agent over
budget unless a session started within the cool-down or its last session found nothing to do and
no memory changed since (held); the weekly sweep queues an agent not
refined within the week (or over budget). Next run times come from rq-scheduler in Redis; a
recurring job the scheduler has not registered has no next run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from crontab import CronTab
from redis.exceptions import RedisError
from rq_scheduler import Scheduler

from infra.queues import get_rq
from jobs.schedule import recurring, scheduled
from models import Agent, RefinementSession
from models.agents.agent import REFINEMENT_INTERVAL
from models.refinement.due import OVER_BUDGET_COOLDOWN

log = logging.getLogger(__name__)
SWEEP, SCAN = "refinement-sweep", "over-budget-scan"


@dataclass
class NextRun:
    at: datetime | None
    label: str


def recurring_next_runs() -> dict[str, datetime | None] | None:
    """Recurring job name → next run (UTC), or None when Redis cannot be reached."""
    try:
        return {
            item["name"]: item["next_run"] for item in scheduled(Scheduler(connection=get_rq().connection))
        }
    except (RedisError, OSError) as err:
        log.warning("scheduler unreachable: %s", type(err).__name__)
        return None


def _at_or_after(name: str, next_run: datetime, earliest: datetime) -> datetime:
    if next_run >= earliest:
        return next_run
    cron = next(spec.cron for spec in recurring() if spec.name == name)  # the configured timing
    return CronTab(cron).next(now=earliest, return_datetime=True, default_utc=True)


def next_refinement(
    agent: Agent,
    core_tokens: int,
    core_count: int,
    last: RefinementSession | None,
    runs: dict[str, datetime | None] | None,
    now: datetime,
    held: bool = False,
) -> NextRun:
    if not agent.active:
        return NextRun(None, "inactive")
    if last is not None and last.status in ("queued", "running"):
        return NextRun(last.started_at, f"{last.status} now")
    if runs is None:
        return NextRun(None, "scheduler unreachable")
    if core_count == 0:
        return NextRun(None, "nothing to refine")
    over = core_tokens > agent.core_token_budget
    candidates: list[tuple[datetime, str]] = []
    if over and runs.get(SCAN) and not held:
        earliest = max(now, last.started_at + OVER_BUDGET_COOLDOWN) if last is not None else now
        candidates.append((_at_or_after(SCAN, runs[SCAN], earliest), "over-budget scan"))
    if runs.get(SWEEP):
        due = now
        if not over and agent.last_refinement_at is not None:
            due = max(now, agent.last_refinement_at + REFINEMENT_INTERVAL)
        candidates.append((_at_or_after(SWEEP, runs[SWEEP], due), "weekly sweep"))
    if not candidates:
        return NextRun(None, "not scheduled")
    at, label = min(candidates)
    return NextRun(at, label)
