"""Every recurring job, in one list, reconciled idempotently with rq-scheduler when the scheduler starts.

Each job's timing is a setting (docs/reference/configuration.md: REFINEMENT_CRON, OVER_BUDGET_SCAN_MINUTES,
...); cron strings are UTC (rq-scheduler's default). Changing a setting and restarting the scheduler replaces
that job and keeps the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from flask import current_app
from rq_scheduler import Scheduler

from infra.config import SCHEDULE_DEFAULTS, schedule_cron
from infra.queues import FAILURE_TTL, QUEUE_TIMEOUTS
from models.changes.patches import expire_patches

from .consolidation import daily_consolidation
from .insights import tom_insights
from .lifecycle import ttl_lifecycle
from .maintenance import dedup_all_agents
from .mechanic import expire_lapsed_grants
from .partitions import create_history_partitions
from .reflection import journal_reflection
from .relations import link_pending
from .triggers import over_budget_scan, reconcile_sessions, refinement_sweep

# RQ 3 job ids may hold only letters, digits, "_" and "-" (":" separates execution keys).
ID_PREFIX = "recurring-"


@dataclass(frozen=True)
class Recurring:
    name: str
    setting: str  # the config key holding its timing (infra/config.py SCHEDULE_DEFAULTS)
    func: Callable
    queue: str
    title: str
    when: str  # the default timing in words
    cron: str = ""  # resolved from the setting: its default in RECURRING, the configured value in recurring()

    def __post_init__(self) -> None:
        if not self.cron:
            object.__setattr__(self, "cron", schedule_cron(self.setting, SCHEDULE_DEFAULTS[self.setting]))

    @property
    def description(self) -> str:
        default = schedule_cron(self.setting, SCHEDULE_DEFAULTS[self.setting])
        return (
            f"{self.title}, {self.when}" if self.cron == default else f"{self.title}, cron {self.cron} (UTC)"
        )

    @property
    def job_id(self) -> str:
        return ID_PREFIX + self.name

    @property
    def func_name(self) -> str:
        return f"{self.func.__module__}.{self.func.__name__}"


# Declared with their default timings; `recurring()` applies the configured ones.
RECURRING: tuple[Recurring, ...] = (
    Recurring("refinement-sweep", "REFINEMENT_CRON", refinement_sweep, "llm", "Weekly refinement sweep", "Monday 04:00 UTC"),
    Recurring("over-budget-scan", "OVER_BUDGET_SCAN_MINUTES", over_budget_scan, "default", "Over-budget scan", "every 15 minutes"),
    Recurring("dedup-nightly", "DEDUP_CRON", dedup_all_agents, "maintenance", "Content-blind dedup", "nightly 02:30 UTC"),
    Recurring("ttl-purge-daily", "TTL_CRON", ttl_lifecycle, "maintenance", "TTL expiry and purge", "daily 03:00 UTC"),
    Recurring("consolidation-daily", "CONSOLIDATION_CRON", daily_consolidation, "llm", "Daily consolidation", "05:00 UTC"),
    Recurring("tom-daily", "TOM_INSIGHTS_CRON", tom_insights, "llm", "Theory-of-mind insights", "daily 06:00 UTC"),
    Recurring("relations-catch-up", "RELATIONS_CATCH_UP_MINUTES", link_pending, "maintenance", "Embed and link new semantic memories", "every 10 minutes"),
    Recurring("reflection-daily", "REFLECTION_CRON", journal_reflection, "llm", "Journal reflection", "daily 06:30 UTC"),
    Recurring("patch-expiry", "PATCH_EXPIRY_CRON", expire_patches, "maintenance", "Drop consent patches held past 7 days", "daily 03:15 UTC"),
    Recurring("session-reconcile", "SESSION_RECONCILE_MINUTES", reconcile_sessions, "default", "Re-queue stranded sessions, close dead ones", "every 5 minutes"),
    Recurring("mechanic-expiry", "MECHANIC_EXPIRY_MINUTES", expire_lapsed_grants, "maintenance", "Close lapsed mechanic grants", "every 5 minutes"),
    Recurring("history-partitions", "HISTORY_PARTITIONS_CRON", create_history_partitions, "maintenance", "Create the history tables' monthly partitions ahead", "daily 03:45 UTC"),
)  # fmt: skip


def recurring(config: Mapping[str, Any] | None = None) -> tuple[Recurring, ...]:
    """RECURRING with the timings configured in `config` (default: the current app's), e.g. REFINEMENT_CRON
    or OVER_BUDGET_SCAN_MINUTES. A bad value is a ValueError naming its setting."""
    config = current_app.config if config is None else config
    return tuple(
        replace(
            spec, cron=schedule_cron(spec.setting, config.get(spec.setting, SCHEDULE_DEFAULTS[spec.setting]))
        )
        for spec in RECURRING
    )


def _matches(job, spec: Recurring) -> bool:
    return (
        job.meta.get("cron_string") == spec.cron
        and job.func_name == spec.func_name
        and job.origin == spec.queue
        and job.timeout == QUEUE_TIMEOUTS[spec.queue]
        and job.failure_ttl == FAILURE_TTL
        and job.description == spec.description
    )


def reconcile(scheduler: Scheduler, specs: tuple[Recurring, ...] | None = None) -> dict[str, list[str]]:
    """Make the scheduled recurring jobs equal the configured ones (`recurring()`): add missing, replace
    changed (a new timing too), drop stale.

    Running it again changes nothing.
    """
    existing = {job.id: job for job in scheduler.get_jobs() if job.id.startswith(ID_PREFIX)}
    wanted = {spec.job_id: spec for spec in (recurring() if specs is None else specs)}
    report: dict[str, list[str]] = {"added": [], "replaced": [], "removed": [], "kept": []}
    for job_id, job in existing.items():
        if job_id not in wanted:
            scheduler.cancel(job)
            job.delete()
            report["removed"].append(job_id)
    for job_id, spec in wanted.items():
        job = existing.get(job_id)
        if job is not None and _matches(job, spec):
            report["kept"].append(job_id)
            continue
        if job is not None:
            scheduler.cancel(job)
            job.delete()
            report["replaced"].append(job_id)
        else:
            report["added"].append(job_id)
        created = scheduler.cron(
            spec.cron,
            func=spec.func,
            queue_name=spec.queue,
            id=spec.job_id,
            timeout=QUEUE_TIMEOUTS[spec.queue],
            description=spec.description,
            result_ttl=86400,
        )
        created.failure_ttl = FAILURE_TTL
        created.save()
    return report


def scheduled(scheduler: Scheduler) -> list[dict]:
    """The recurring jobs with their next run time (UTC), for the CLI and the console."""
    jobs = {job.id: when for job, when in scheduler.get_jobs(with_times=True)}
    return [
        {"name": spec.name, "cron": spec.cron, "queue": spec.queue, "next_run": jobs.get(spec.job_id)}
        for spec in recurring()
    ]
