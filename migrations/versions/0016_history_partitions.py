"""history partitioned by month on PostgreSQL: audit_logs, events and change_log

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26

The audit log is append-only and grows for ever. On PostgreSQL each of the three append-only history
tables becomes a declarative `PARTITION BY RANGE` table with one partition per month (`audit_logs_2026_11`)
and a DEFAULT partition (`audit_logs_default`) that takes whatever no month covers, so a write never fails
when the scheduler is late. The partition key is the time of writing: `audit_logs.created_at`, and `ts` on
`events` and `change_log` (neither has a `created_at`; `ts` is that time — an event's own, or its audit
record's `created_at` — NOT NULL, already the time column of their indexes and of every query by time).
The names and the DDL of partitions live in `models/history/partitions.py`, shared with the job that
creates the months ahead (`jobs/partitions.py`). SQLite keeps plain tables: this revision does nothing there.

For each table, in this transaction: the old table is renamed aside, a partitioned table is created like
it (columns, NOT NULL, defaults — `id` keeps `nextval` of the same sequence, so ids continue above every
existing one and are never reused), a partition is created for every month that holds rows and for the
current month and the next HISTORY_PARTITIONS_AHEAD, plus the default; the rows are copied; the primary
key, every index, the foreign keys and the guard triggers are created on the parent; the sequence is
handed to the new table; the old table is dropped. Nothing references these tables (no foreign key points
into them), so nothing else changes.

- Primary keys become (id, <key>): PostgreSQL requires a partitioned table's unique constraints to hold
  the partition key. ids stay unique on their own, because they all come from one sequence and the rows
  are never updated, so (id, <key>) is unique exactly when id is. The ORM keeps `id` as the identity.
- `uq_change_log_thread_rev` becomes unique on (agent_id, thread_id, rev, ts) for the same reason; a
  thread's revisions stay unique because they come from the atomic upsert on `thread_revisions`.
- Guards kept: `audit_logs_append_only` (row-level, so cloned to every partition, present and future),
  and the TRUNCATE triggers of 0001 and 0008 on each parent; statement triggers are not cloned, so each
  partition carries its own `<partition>_no_truncate` (models/history/partitions.py).
- The copy reads and writes every row once: on a large log, plan the upgrade's window for it.
"""

from datetime import datetime, timezone

from alembic import op
from sqlalchemy import text

from models.history.partitions import default_ddl, month_ddl, month_start, months_from

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

DEFAULT_AHEAD = 3  # HISTORY_PARTITIONS_AHEAD's default, when no app config is at hand

# Per table: partition key, primary key, indexes (as created by 0001, 0003, 0013, 0015 and 0016),
# foreign keys, and the guard triggers (0001, 0008). The unpartitioned forms are what downgrade restores.
SPECS = {
    "audit_logs": {
        "key": "created_at",
        "indexes": [
            "CREATE INDEX ix_audit_logs_agent_created ON {t} (agent_id, created_at)",
            "CREATE INDEX ix_audit_logs_agent_id ON {t} (agent_id, id)",
            "CREATE INDEX ix_audit_logs_memory ON {t} (memory_id, id)",
            "CREATE INDEX ix_audit_logs_session ON {t} (session_id)",
            "CREATE INDEX ix_audit_logs_op ON {t} (op_id)",
            "CREATE INDEX ix_audit_logs_actor ON {t} (actor text_pattern_ops, id)",
        ],
        "foreign_keys": [
            "ALTER TABLE {t} ADD CONSTRAINT fk_audit_logs_agent_id_agents FOREIGN KEY (agent_id) REFERENCES agents (id)",
            "ALTER TABLE {t} ADD CONSTRAINT fk_audit_logs_session_id_refinement_sessions "
            "FOREIGN KEY (session_id) REFERENCES refinement_sessions (id)",
        ],
        "triggers": [
            "CREATE TRIGGER audit_logs_append_only BEFORE UPDATE OR DELETE ON {t} "
            "FOR EACH ROW EXECUTE FUNCTION reject_audit_change()",
            "CREATE TRIGGER audit_logs_no_truncate BEFORE TRUNCATE ON {t} "
            "FOR EACH STATEMENT EXECUTE FUNCTION reject_audit_change()",
        ],
    },
    "events": {
        "key": "ts",
        "indexes": [
            "CREATE INDEX ix_events_agent_ts ON {t} (agent_id, ts)",
            "CREATE INDEX ix_events_node_ts ON {t} (node, ts)",
            "CREATE INDEX ix_events_user_ts ON {t} (user_id, ts)",
        ],
        "foreign_keys": [
            "ALTER TABLE {t} ADD CONSTRAINT fk_events_agent_id_agents FOREIGN KEY (agent_id) REFERENCES agents (id)",
        ],
        "triggers": [
            "CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON {t} "
            "FOR EACH STATEMENT EXECUTE FUNCTION reject_truncate()",
        ],
    },
    "change_log": {
        "key": "ts",
        "indexes": [],  # the unique index differs between the two forms: UNIQUE_THREAD_REV
        "foreign_keys": [
            "ALTER TABLE {t} ADD CONSTRAINT fk_change_log_agent_id_agents FOREIGN KEY (agent_id) REFERENCES agents (id)",
        ],
        "triggers": [
            "CREATE TRIGGER change_log_no_truncate BEFORE TRUNCATE ON {t} "
            "FOR EACH STATEMENT EXECUTE FUNCTION reject_truncate()",
        ],
    },
}
UNIQUE_THREAD_REV = {
    True: "CREATE UNIQUE INDEX uq_change_log_thread_rev ON change_log (agent_id, thread_id, rev, ts)",
    False: "CREATE UNIQUE INDEX uq_change_log_thread_rev ON change_log (agent_id, thread_id, rev)",
}
INDEX_NAMES = {
    "audit_logs": ["ix_audit_logs_agent_created", "ix_audit_logs_agent_id", "ix_audit_logs_memory",
                   "ix_audit_logs_session", "ix_audit_logs_op", "ix_audit_logs_actor"],
    "events": ["ix_events_agent_ts", "ix_events_node_ts", "ix_events_user_ts"],
    "change_log": ["uq_change_log_thread_rev"],
}  # fmt: skip


def _ahead() -> int:
    try:
        from flask import current_app

        return int(current_app.config.get("HISTORY_PARTITIONS_AHEAD", DEFAULT_AHEAD))
    except RuntimeError:  # no app context
        return DEFAULT_AHEAD


def upgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    today = datetime.now(timezone.utc).replace(tzinfo=None)
    for table in SPECS:
        _rebuild(table, partitioned=True, today=today)


def downgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in SPECS:
        _rebuild(table, partitioned=False, today=None)


def _rebuild(table: str, *, partitioned: bool, today: datetime | None) -> None:
    """Rebuild `table` as a partitioned table (upgrade) or a plain one (downgrade), rows, ids, indexes,
    foreign keys, guards and sequence included."""
    conn = op.get_bind()
    spec = SPECS[table]
    key, old = spec["key"], f"{table}_unpartitioned" if partitioned else f"{table}_partitioned"
    seq = f"{table}_id_seq"
    op.execute(f"ALTER TABLE {table} RENAME TO {old}")
    # Index and primary-key names live in one namespace per schema: free them for the new table.
    for index in INDEX_NAMES[table]:
        op.execute(f"DROP INDEX {index}")
    op.execute(f"ALTER TABLE {old} DROP CONSTRAINT pk_{table}")
    by = f" PARTITION BY RANGE ({key})" if partitioned else ""
    op.execute(f"CREATE TABLE {table} (LIKE {old} INCLUDING DEFAULTS INCLUDING CONSTRAINTS){by}")
    if partitioned:
        assert today is not None
        held = conn.scalars(text(f"SELECT DISTINCT date_trunc('month', {key}) FROM {old}"))
        months = {month_start(m) for m in held} | set(months_from(today, _ahead()))
        for month in sorted(months):
            for statement in month_ddl(table, month):
                op.execute(statement)
        for statement in default_ddl(table):
            op.execute(statement)
    op.execute(f"INSERT INTO {table} SELECT * FROM {old}")
    # ids are unique alone (one sequence, rows never updated); the key is there because PostgreSQL
    # requires a partitioned table's primary key to hold its partition key.
    columns = f"id, {key}" if partitioned else "id"
    op.execute(f"ALTER TABLE {table} ADD CONSTRAINT pk_{table} PRIMARY KEY ({columns})")
    for statement in spec["indexes"]:
        op.execute(statement.format(t=table))
    if table == "change_log":
        op.execute(UNIQUE_THREAD_REV[partitioned])
    for statement in spec["foreign_keys"] + spec["triggers"]:
        op.execute(statement.format(t=table))
    # The id sequence goes with the new table (dropping the old one would drop a sequence it owns), and
    # never falls back below an id in use.
    op.execute(f"ALTER SEQUENCE {seq} OWNED BY {table}.id")
    op.execute(
        f"SELECT setval('{seq}', m) FROM (SELECT max(id) AS m FROM {table}) AS top "
        f"WHERE m > (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM {seq})"
    )
    op.execute(f"DROP TABLE {old}")
    op.execute(f"ANALYZE {table}")
