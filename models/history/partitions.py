"""Monthly RANGE partitions of the history tables on PostgreSQL (migration 0016; docs/how-to/scaling-out.md).

`audit_logs` is partitioned by `created_at`, `events` and `change_log` by `ts` (their time of writing: an
event's own time, or its audit record's `created_at`). A month's partition is named `<table>_YYYY_MM` and
holds [first day of the month, first day of the next) in naive UTC, the way every time is stored. Each
table also has a DEFAULT partition, `<table>_default`, which takes a row no month's partition covers, so a
write never fails because the scheduler was late; `history_warnings` reports it when it holds rows.

This module is the one place for the names and the DDL: the migration and the maintenance job
(`jobs/partitions.py`, `audit partitions` on the CLI) call it. On SQLite, which has no partitions, every
function here does nothing.

Guards. The row-level triggers of a partitioned table (audit_logs' append-only guard) are cloned by
PostgreSQL to every partition, present and future. Statement-level TRUNCATE triggers are not, so each
partition gets its own, `<partition>_no_truncate`, calling the same function as its parent's: created with
the partition here, and put back by `ensure_partitions` on any partition found without it.

What a partition cannot hold: rows of its month while the default partition holds rows of that month
(PostgreSQL refuses to create it, and the append-only guard refuses moving them out). The job then
reports the month as blocked instead of failing; the rows stay readable in the default partition.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError


@dataclass(frozen=True)
class HistoryTable:
    name: str
    key: str  # the partition key: the time the row was written
    truncate_guard: str  # the trigger function its TRUNCATE trigger calls (migrations 0001 and 0008)


TABLES = (
    HistoryTable("audit_logs", "created_at", "reject_audit_change"),
    HistoryTable("events", "ts", "reject_truncate"),
    HistoryTable("change_log", "ts", "reject_truncate"),
)
BY_NAME = {t.name: t for t in TABLES}
PARTITION_NAME = re.compile(r"^(audit_logs|events|change_log)_(\d{4}_\d{2}|default)$")
# Unique indexes whose partitioned form holds the partition key too (PostgreSQL requires it): name -> key.
WIDENED_UNIQUE = {"uq_change_log_thread_rev": "ts"}
LOCK_TIMEOUT = "5s"  # the job's DDL waits this long for its lock, then reports the table busy


def month_start(when: date | datetime) -> date:
    return date(when.year, when.month, 1)


def add_months(month: date, n: int) -> date:
    index = month.year * 12 + month.month - 1 + n
    return date(index // 12, index % 12 + 1, 1)


def partition_name(table: str, month: date) -> str:
    return f"{table}_{month.year:04d}_{month.month:02d}"


def default_name(table: str) -> str:
    return f"{table}_default"


def _truncate_guard(table: HistoryTable, partition: str) -> str:
    return (
        f"CREATE TRIGGER {partition}_no_truncate BEFORE TRUNCATE ON {partition} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {table.truncate_guard}()"
    )


def month_ddl(table: str, month: date) -> list[str]:
    """The statements creating `table`'s partition of `month`, with its TRUNCATE guard."""
    spec, name = BY_NAME[table], partition_name(table, month)
    return [
        f"CREATE TABLE {name} PARTITION OF {table} "
        f"FOR VALUES FROM ('{month.isoformat()}') TO ('{add_months(month, 1).isoformat()}')",
        _truncate_guard(spec, name),
    ]


def default_ddl(table: str) -> list[str]:
    """The statements creating `table`'s DEFAULT partition, with its TRUNCATE guard."""
    name = default_name(table)
    return [f"CREATE TABLE {name} PARTITION OF {table} DEFAULT", _truncate_guard(BY_NAME[table], name)]


def is_partition(name: str | None) -> bool:
    return bool(name and PARTITION_NAME.match(name))


def schema_compared(obj, name, type_, reflected, compare_to) -> bool:
    """Alembic's `include_object` (migrations/env.py, tests/infra/test_schema.py): what partitioning adds on
    PostgreSQL is not a difference from the models. The partitions are tables the models do not name, and
    a widened unique index is the model's with the partition key appended. (Primary keys, which become
    (id, <key>), are not compared by autogenerate.)"""
    if type_ == "table" and reflected and compare_to is None and is_partition(name):
        return False
    if type_ == "index" and name in WIDENED_UNIQUE and compare_to is not None:
        found, model = (obj, compare_to) if reflected else (compare_to, obj)
        widened = [c.name for c in model.columns] + [WIDENED_UNIQUE[name]]
        return [c.name for c in found.columns] != widened
    return True


def is_partitioned(conn: Connection) -> bool:
    """True on a PostgreSQL database whose audit_logs is a partitioned table (migration 0016 applied)."""
    if conn.dialect.name != "postgresql":
        return False
    kind = conn.scalar(text("SELECT relkind FROM pg_class WHERE oid = to_regclass('audit_logs')"))
    return kind == "p"


def partitions(conn: Connection, table: str) -> list[str]:
    """The names of `table`'s partitions, the default one included."""
    rows = conn.scalars(
        text(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = CAST(:table AS regclass) ORDER BY c.relname"
        ),
        {"table": table},
    )
    return list(rows)


def _unguarded(conn: Connection, table: str) -> list[str]:
    rows = conn.scalars(
        text(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = CAST(:table AS regclass) AND NOT EXISTS ("
            "  SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = c.relname || '_no_truncate')"
        ),
        {"table": table},
    )
    return list(rows)


def default_rows(conn: Connection, table: str) -> dict[str, int]:
    """Rows held by `table`'s default partition, by month ("YYYY-MM"); normally none."""
    spec = BY_NAME[table]
    rows = conn.execute(
        text(
            f"SELECT to_char(date_trunc('month', {spec.key}), 'YYYY-MM') AS month, count(*) AS n "
            f"FROM {default_name(table)} GROUP BY 1 ORDER BY 1"
        )
    )
    return {row.month: int(row.n) for row in rows}


@dataclass
class PartitionReport:
    """What `ensure_partitions` did. `blocked`: months whose rows already sit in the default partition;
    `busy`: partitions not created because their lock was not granted within LOCK_TIMEOUT (next run)."""

    months: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    guards_added: list[str] = field(default_factory=list)
    blocked: dict[str, int] = field(default_factory=dict)
    busy: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    partitioned: bool = True

    def as_dict(self) -> dict:
        return {
            "partitioned": self.partitioned,
            "months": self.months,
            "created": self.created,
            "existing": len(self.existing),
            "guards_added": self.guards_added,
            "blocked": self.blocked,
            "busy": self.busy,
            "warnings": self.warnings,
        }


def months_from(today: date | datetime, ahead: int) -> list[date]:
    """The month of `today` and the `ahead` months after it."""
    first = month_start(today)
    return [add_months(first, n) for n in range(ahead + 1)]


def ensure_partitions(conn: Connection, today: date | datetime, ahead: int) -> PartitionReport:
    """Create the partitions of `today`'s month and the `ahead` months after it, for every history table,
    and put back a missing TRUNCATE guard on any partition. Idempotent: what exists is left alone, and
    when everything exists no DDL (and no lock) is taken. Each partition is created in a savepoint, so a
    blocked or busy one is reported and the others still go ahead. Runs in the caller's transaction."""
    months = months_from(today, ahead)
    report = PartitionReport(months=[m.strftime("%Y-%m") for m in months])
    if not is_partitioned(conn):
        report.partitioned = False
        return report
    conn.execute(text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
    for table in TABLES:
        have = set(partitions(conn, table.name))
        held = default_rows(conn, table.name) if default_name(table.name) in have else {}
        for month in months:
            name = partition_name(table.name, month)
            if name in have:
                report.existing.append(name)
            elif month.strftime("%Y-%m") in held:
                report.blocked[name] = held[month.strftime("%Y-%m")]
            else:
                _create(conn, name, month_ddl(table.name, month), report)
        for name in _unguarded(conn, table.name):
            _create(conn, name, [_truncate_guard(table, name)], report, guard=True)
    report.warnings = history_warnings(conn, today)
    return report


def _create(conn: Connection, name: str, ddl: Iterable[str], report: PartitionReport, *, guard=False) -> None:
    try:
        with conn.begin_nested():
            for statement in ddl:
                conn.execute(text(statement))
    except DBAPIError as err:
        code = getattr(err.orig, "sqlstate", None)
        if code == "55P03":  # lock_not_available
            report.busy.append(name)
        elif code == "23514":  # the default partition holds a row of this month (a concurrent write)
            report.blocked[name] = -1
        else:
            raise
        return
    (report.guards_added if guard else report.created).append(name)


def history_warnings(conn: Connection, today: date | datetime) -> list[str]:
    """What an operator should act on: a default partition holding rows, a history table without a
    partition for the current or the next month, a partition without its TRUNCATE guard. Empty when all
    is well, and on SQLite."""
    if not is_partitioned(conn):
        return []
    warnings: list[str] = []
    this_month = month_start(today)
    for table in TABLES:
        have = set(partitions(conn, table.name))
        default = default_name(table.name)
        if default in have:
            for held, count in default_rows(conn, table.name).items():
                warnings.append(
                    f"{default} holds {count} row(s) of {held}: that month's partition cannot be created "
                    "until they are moved out"
                )
        else:
            warnings.append(f"{table.name} has no default partition")
        for month in (this_month, add_months(this_month, 1)):
            if partition_name(table.name, month) not in have:
                warnings.append(f"{table.name} has no partition for {month:%Y-%m}")
        warnings += [f"{name} has no TRUNCATE guard" for name in _unguarded(conn, table.name)]
    return warnings


def readiness_warnings(conn: Connection, today: date | datetime) -> list[str]:
    """The cheap form of `history_warnings`, for `/readyz`: two queries. A default partition holding rows,
    or no partition for the current or the next month. Empty on SQLite and before revision 0016."""
    if conn.dialect.name != "postgresql":
        return []
    this_month = month_start(today)
    expected = {
        table.name: [partition_name(table.name, m) for m in (this_month, add_months(this_month, 1))]
        for table in TABLES
    }
    names = [t.name for t in TABLES] + [default_name(t.name) for t in TABLES] + sum(expected.values(), [])
    found = set(
        conn.scalars(
            text(
                "SELECT relname FROM pg_class WHERE relname = ANY(:names) AND (relispartition OR relkind = 'p')"
            ),
            {"names": names},
        )
    )
    warnings = [
        f"{table} has no partition for {name[-7:].replace('_', '-')}"
        for table, wanted in expected.items()
        if table in found
        for name in wanted
        if name not in found
    ]
    defaults = [default_name(t.name) for t in TABLES if t.name in found and default_name(t.name) in found]
    if defaults:
        probe = " UNION ALL ".join(
            f"SELECT '{name}' WHERE EXISTS (SELECT 1 FROM {name})" for name in defaults
        )
        warnings += [f"{name} holds rows" for name in conn.scalars(text(probe))]
    return warnings
