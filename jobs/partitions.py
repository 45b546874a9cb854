"""The history tables' monthly partitions on PostgreSQL, created ahead (docs/how-to/scaling-out.md, "History
partitioned by month (PostgreSQL)").

Daily on the `maintenance` queue (`HISTORY_PARTITIONS_CRON`), and on the CLI as `audit partitions`: the
partitions of the current month and the next `HISTORY_PARTITIONS_AHEAD` months of audit_logs, events and
change_log (`models/history/partitions.py` has the names and the DDL). Idempotent; nothing on SQLite.
"""

from __future__ import annotations

import logging

from flask import current_app

from models import db, utcnow
from models.history.partitions import ensure_partitions

log = logging.getLogger(__name__)


def create_history_partitions(ahead: int | None = None) -> dict:
    """Create the missing partitions (one transaction; each partition in a savepoint) and report what was
    created, what could not be (a month whose rows already sit in the default partition, a lock not granted
    in time) and every warning of `history_warnings`. A blocked month is reported, not raised: the rows
    are safe in the default partition and every other partition is still created."""
    months = int(current_app.config["HISTORY_PARTITIONS_AHEAD"] if ahead is None else ahead)
    with db.engine.begin() as conn:
        report = ensure_partitions(conn, utcnow(), months)
    if report.created or report.guards_added:
        log.info("history partitions: created=%s guards_added=%s", report.created, report.guards_added)
    for warning in report.warnings:
        log.warning("history partitions: %s", warning)
    if report.blocked or report.busy:
        log.warning("history partitions: blocked=%s busy=%s", report.blocked, report.busy)
    return report.as_dict()
