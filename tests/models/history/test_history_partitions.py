"""History partitioned by month on PostgreSQL (revision 0016, models/history/partitions.py,
docs/how-to/scaling-out.md, "History partitioned by month (PostgreSQL)"): rows land in their month's
partition, a query by agent and time reads only the matching ones, every partition — the job's later ones
included — refuses UPDATE, DELETE and TRUNCATE, the job creates the months ahead idempotently, rollbacks
across two months are exact, and the default partition catches what no month covers and is reported. On SQLite
the tables stay plain and the job does nothing.

Times are set on the real write path by moving the audit log's clock (`models.history.audit.utcnow`): the
mutation path, its audit records, their events and change-log entries are written as in production.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from jobs.partitions import create_history_partitions
from models import AgentMemory, AuditLog, ChangeLogEntry, OpEvent, RefinementSession, db, utcnow
from models.changes import mutations as mut
from models.changes import timemachine as tm
from models.history import audit
from models.history.partitions import (
    TABLES,
    add_months,
    ensure_partitions,
    history_warnings,
    month_start,
    partition_name,
    partitions,
)
from tests.conftest import DB_KIND

ADMIN = "admin:test"
postgres_only = pytest.mark.skipif(DB_KIND != "postgresql", reason="partitions are PostgreSQL's")


class Clock:
    """The audit log's clock, set to a moment and moving on by a microsecond a call."""

    def __init__(self, monkeypatch) -> None:
        self.now: datetime | None = None
        monkeypatch.setattr(audit, "utcnow", self)

    def __call__(self) -> datetime:
        if self.now is None:
            return utcnow()
        self.now += timedelta(microseconds=1)
        return self.now

    def at(self, moment: datetime | None) -> Clock:
        self.now = moment
        return self


@pytest.fixture
def clock(app, monkeypatch) -> Clock:
    return Clock(monkeypatch)


@pytest.fixture
def last_month(app) -> date:
    """The previous month, with its partitions created the way the job creates them."""
    month = add_months(month_start(utcnow()), -1)
    with db.engine.begin() as conn:
        ensure_partitions(conn, month, 0)
    return month


def memory_rows(agent_id: int) -> dict[int, dict[str, Any]]:
    table = AgentMemory.__table__
    rows = db.session.execute(sa.select(table).where(table.c.agent_id == agent_id).order_by(table.c.id))
    return {row["id"]: dict(row) for row in rows.mappings()}


def homes(model, agent_id: int) -> list[str]:
    """The partition (`tableoid::regclass`) of each of the agent's rows of `model`, in id order."""
    table = model.__table__
    stmt = sa.select(sa.literal_column("tableoid::regclass::text")).where(table.c.agent_id == agent_id)
    return list(db.session.scalars(stmt.order_by(table.c.id)))


def raw(statement: str, params: dict | None = None) -> None:
    """Run a statement on a connection of its own, as a psql session would (the test's own transaction is
    committed first, so its read locks do not hold the statement up; a lock still held fails it in 10 s)."""
    db.session.commit()
    engine = sa.create_engine(db.engine.url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("SET LOCAL lock_timeout = '10s'"))
            conn.execute(sa.text(statement), params or {})
    finally:
        engine.dispose()


def refused(statement: str, params: dict | None = None) -> None:
    with pytest.raises(sa.exc.DBAPIError, match="append-only|cannot be truncated"):
        raw(statement, params)


def plan(statement: str, params: dict) -> set[str]:
    """The audit_logs partitions a statement's plan reads."""
    lines = db.session.scalars(sa.text(f"EXPLAIN (COSTS OFF) {statement}"), params)
    return set(re.findall(r"\b(audit_logs_(?:\d{4}_\d{2}|default))", "\n".join(lines)))


@postgres_only
def test_history_rows_land_in_their_months_partition_through_the_write_path(make_agent, clock, last_month):
    agent = make_agent()
    this_month = month_start(utcnow())
    clock.at(datetime.combine(last_month, datetime.min.time()) + timedelta(days=3))
    old = mut.create_memory(agent.id, "Prefers tea", actor=ADMIN, thread_id="t1")
    clock.at(None)
    mut.update_memory(agent.id, old.id, actor=ADMIN, content="Prefers green tea")
    for model in (AuditLog, OpEvent, ChangeLogEntry):
        table = model.__table__.name
        assert homes(model, agent.id) == [
            partition_name(table, last_month),
            partition_name(table, this_month),
        ]
    # Through the parent every row is there, in id order, whatever its partition.
    stmt = sa.select(AuditLog.id, AuditLog.action).where(AuditLog.agent_id == agent.id).order_by(AuditLog.id)
    records = db.session.execute(stmt).all()
    assert [r.action for r in records] == ["create", "update"]
    db.session.expire_all()  # and the ORM finds each by its id alone
    assert [db.session.get(AuditLog, r.id).action for r in records] == ["create", "update"]


@postgres_only
def test_a_query_by_agent_and_time_range_reads_only_that_months_partition(make_agent, clock, last_month):
    agent = make_agent()
    clock.at(datetime.combine(last_month, datetime.min.time()) + timedelta(days=1))
    memory = mut.create_memory(agent.id, "Walks to work", actor=ADMIN)
    clock.at(None)
    mut.update_memory(agent.id, memory.id, actor=ADMIN, importance=4)
    start, end = last_month, add_months(last_month, 1)
    by_time = plan(
        "SELECT id, action FROM audit_logs WHERE agent_id = :agent AND created_at >= :start AND created_at < :end",
        {"agent": agent.id, "start": start, "end": end},
    )
    assert by_time == {partition_name("audit_logs", last_month)}
    # The point-in-time restore's shape, records after a moment: the months before it are not read.
    after = plan(
        "SELECT id FROM audit_logs WHERE agent_id = :agent AND created_at > :to",
        {"agent": agent.id, "to": end},
    )
    assert partition_name("audit_logs", last_month) not in after and after
    # What does not prune: a lookup by memory id (or session, op, actor) reads every partition's index.
    every = set(partitions(db.session.connection(), "audit_logs"))
    by_memory = plan(
        "SELECT id FROM audit_logs WHERE memory_id = :memory ORDER BY id DESC LIMIT 1", {"memory": memory.id}
    )
    assert by_memory == every and len(every) >= 6


@postgres_only
def test_update_delete_and_truncate_are_refused_directly_on_every_partition(make_agent, clock, last_month):
    agent = make_agent()
    clock.at(datetime.combine(last_month, datetime.min.time()) + timedelta(days=2))
    memory = mut.create_memory(agent.id, "Keeps a diary", actor=ADMIN, thread_id="t1")
    clock.at(datetime(2019, 5, 15))  # no partition: the default one
    mut.update_memory(agent.id, memory.id, actor=ADMIN, importance=2)
    db.session.commit()
    month_part, default_part = (partition_name("audit_logs", last_month), "audit_logs_default")
    assert homes(AuditLog, agent.id) == [month_part, default_part]
    for part in (month_part, default_part):
        refused(f"UPDATE {part} SET actor = 'admin:forger' WHERE agent_id = :a", {"a": agent.id})
        refused(f"DELETE FROM {part} WHERE agent_id = :a", {"a": agent.id})
        refused(f"TRUNCATE {part}")
    for table in ("events", "change_log"):
        for part in (partition_name(table, last_month), f"{table}_default"):
            refused(f"TRUNCATE {part}")
    db.session.expire_all()
    assert len(homes(AuditLog, agent.id)) == 2
    assert len(homes(OpEvent, agent.id)) == 2 and len(homes(ChangeLogEntry, agent.id)) == 2


@postgres_only
def test_a_partition_the_job_creates_later_carries_every_guard(app, make_agent):
    agent = make_agent()
    far = add_months(month_start(utcnow()), 5)
    report = create_history_partitions(ahead=5)
    assert report["partitioned"] and not report["blocked"] and not report["warnings"]
    part = partition_name("audit_logs", far)
    assert part in partitions(db.session.connection(), "audit_logs")
    moment = datetime.combine(far, datetime.min.time()) + timedelta(days=9)
    raw(
        "INSERT INTO audit_logs (agent_id, op_id, actor, action, data, created_at) "
        "VALUES (:a, 'op', 'admin:test', 'note', '{}', :t)",
        {"a": agent.id, "t": moment},
    )
    assert homes(AuditLog, agent.id) == [part]
    refused(f"UPDATE {part} SET actor = 'admin:forger'")
    refused(f"DELETE FROM {part}")
    refused(f"TRUNCATE {part}")
    for table in ("events", "change_log"):
        refused(f"TRUNCATE {partition_name(table, far)}")
    # A partition that lost its TRUNCATE guard (a raw DROP TRIGGER) gets it back from the next run.
    raw(f"DROP TRIGGER {partition_name('events', far)}_no_truncate ON {partition_name('events', far)}")
    assert f"{partition_name('events', far)} has no TRUNCATE guard" in history_warnings(
        db.session.connection(), utcnow()
    )
    db.session.rollback()
    again = create_history_partitions(ahead=5)
    assert again["created"] == [] and again["guards_added"] == [partition_name("events", far)]
    refused(f"TRUNCATE {partition_name('events', far)}")
    assert len(homes(AuditLog, agent.id)) == 1


@postgres_only
def test_the_job_creates_the_current_and_n_next_months_and_a_second_run_changes_nothing(app):
    with db.engine.begin() as conn:
        first = ensure_partitions(conn, date(2035, 1, 20), 2)
        second = ensure_partitions(conn, date(2035, 1, 20), 2)
    months = ["2035_01", "2035_02", "2035_03"]
    assert first.months == ["2035-01", "2035-02", "2035-03"]
    assert sorted(first.created) == sorted(f"{t.name}_{m}" for t in TABLES for m in months)
    assert second.created == [] and sorted(second.existing) == sorted(first.created)
    assert second.guards_added == [] and second.blocked == {} and second.busy == []
    # The job itself, with the configured HISTORY_PARTITIONS_AHEAD (3): this month and three more exist.
    report = create_history_partitions()
    assert len(report["months"]) == 4 and report["months"][0] == f"{utcnow():%Y-%m}"
    assert create_history_partitions()["created"] == []
    conn = db.session.connection()
    for table in TABLES:
        have = set(partitions(conn, table.name))
        assert {partition_name(table.name, date.fromisoformat(m + "-01")) for m in report["months"]} <= have


@postgres_only
def test_a_session_rollback_whose_records_span_two_months_restores_exactly(make_agent, clock, last_month):
    agent = make_agent()
    a = mut.create_memory(agent.id, "Grew up by the sea in a small town", actor=ADMIN)
    b = mut.create_memory(agent.id, "grew up by the sea", actor=ADMIN)
    c = mut.create_memory(agent.id, "Dislikes loud restaurants", actor=ADMIN, thread_id="t1")
    session = RefinementSession(agent_id=agent.id, trigger="test", status="running")
    db.session.add(session)
    db.session.commit()
    before = memory_rows(agent.id)
    clock.at(datetime.combine(last_month, datetime.min.time()) + timedelta(days=20))
    merged = mut.consolidate_memories(
        agent.id, [a.id, b.id], "Grew up by the sea", actor="agent", session_id=session.id
    )
    clock.at(None)
    mut.update_memory(agent.id, c.id, actor="agent", session_id=session.id, content="Dislikes loud rooms")
    created = mut.create_memory(agent.id, "Learned to sail", actor="agent", session_id=session.id)
    records = db.session.execute(
        sa.select(sa.literal_column("tableoid::regclass::text")).where(AuditLog.session_id == session.id)
    )
    assert len({home for (home,) in records}) == 2  # the session's records are in two partitions
    tm.rollback_session(session.id, actor=ADMIN)
    after = memory_rows(agent.id)
    for memory_id, row in before.items():
        assert after[memory_id] == row
    assert after[merged.id]["deleted_at"] is not None and after[created.id]["deleted_at"] is not None


@postgres_only
def test_a_point_in_time_restore_across_two_months_restores_exactly(make_agent, clock, last_month):
    agent = make_agent()
    start = datetime.combine(last_month, datetime.min.time()) + timedelta(days=5)
    clock.at(start)
    ids = [
        mut.create_memory(agent.id, text, actor=ADMIN).id for text in ("Owns a cat", "Likes jazz", "Reads")
    ]
    db.session.commit()
    restore_point = start + timedelta(hours=1)
    state = memory_rows(agent.id)
    clock.at(start + timedelta(hours=2))
    mut.update_memory(agent.id, ids[0], actor=ADMIN, content="Owns two cats")
    mut.soft_delete_memories(agent.id, [ids[1]], actor=ADMIN)
    clock.at(None)
    mut.update_memory(agent.id, ids[2], actor=ADMIN, content="Reads novels", importance=5)
    newer = mut.create_memory(agent.id, "Plays the piano", actor=ADMIN)
    assert set(homes(AuditLog, agent.id)) == {
        partition_name("audit_logs", last_month),
        partition_name("audit_logs", month_start(utcnow())),
    }
    tm.rollback_agent(agent.id, restore_point, actor=ADMIN)
    after = memory_rows(agent.id)
    for memory_id, row in state.items():
        assert after[memory_id] == row
    assert after[newer.id]["deleted_at"] is not None


@postgres_only
def test_the_default_partition_catches_a_row_no_month_covers_and_is_reported(client, make_agent, clock):
    agent = make_agent()
    clock.at(datetime(2019, 5, 15, 12))
    mut.create_memory(agent.id, "Moved house", actor=ADMIN, thread_id="t1")
    db.session.commit()
    for model in (AuditLog, OpEvent, ChangeLogEntry):
        assert homes(model, agent.id) == [f"{model.__table__.name}_default"]
    warnings = history_warnings(db.session.connection(), utcnow())
    db.session.rollback()
    for table in ("audit_logs", "events", "change_log"):
        assert any(w.startswith(f"{table}_default holds 1 row(s) of 2019-05") for w in warnings)
    ready = client.get("/readyz")
    assert ready.status_code == 200 and "audit_logs_default holds rows" in ready.get_json()["warnings"]
    # That month's partition cannot be created while the default holds its rows: reported, not raised.
    with db.engine.begin() as conn:
        report = ensure_partitions(conn, date(2019, 5, 1), 0)
    assert report.blocked == {"audit_logs_2019_05": 1, "events_2019_05": 1, "change_log_2019_05": 1}
    assert report.created == []
    assert homes(AuditLog, agent.id) == ["audit_logs_default"]  # still there, still readable


def test_on_sqlite_the_tables_stay_plain_and_the_job_does_nothing(app, runner):
    report = create_history_partitions()
    if DB_KIND != "sqlite":
        assert report["partitioned"] is True
        return
    assert report["partitioned"] is False and report["created"] == [] and report["warnings"] == []
    out = runner.invoke(args=["audit", "partitions", "--json"])
    assert out.exit_code == 0 and '"partitioned": false' in out.output


@postgres_only
def test_the_migration_keeps_rows_ids_indexes_and_guards_and_downgrades(database_template):
    """Revision 0016 on a database at 0015 holding history: every row copied into its month, ids
    continuing on the same sequence, the same indexes and guard triggers on the parents (and a TRUNCATE
    guard on each partition); the downgrade gives the plain tables back, rows and guards included."""
    from flask_migrate import downgrade, upgrade

    from console import create_app
    from tests.conftest import scratch_database

    with scratch_database("m16") as url:
        app = create_app({"TESTING": True, "DATABASE_URL": url, "SECRET_KEY": "test"})
        guards = (
            "SELECT tgrelid::regclass::text, tgname, tgtype, tgfoid::regproc::text FROM pg_trigger "
            "WHERE NOT tgisinternal AND tgrelid::regclass::text IN ('audit_logs', 'events', 'change_log') ORDER BY 1, 2"
        )
        indexes = "SELECT indexname FROM pg_indexes WHERE tablename IN ('audit_logs', 'events', 'change_log') ORDER BY 1"
        with app.app_context():
            upgrade(revision="0015")
            with db.engine.begin() as conn:
                conn.execute(
                    sa.text(
                        "INSERT INTO agents (name, core_token_budget, min_retention, mechanic_preconsent, active, "
                        "created_at) VALUES ('a', 1, 0.8, false, true, now())"
                    )
                )
                for when in ("2025-03-05", "2025-03-20", "2026-01-02"):
                    conn.execute(
                        sa.text(
                            "INSERT INTO audit_logs (agent_id, op_id, actor, action, data, created_at) "
                            "VALUES (1, 'op', 'admin:1', 'create', '{}', :t)"
                        ),
                        {"t": when},
                    )
                    conn.execute(
                        sa.text(
                            "INSERT INTO events (agent_id, node, op, status, ts) VALUES (1, 'console', 'create', 'ok', :t)"
                        ),
                        {"t": when},
                    )
                conn.execute(
                    sa.text(
                        "INSERT INTO change_log (agent_id, thread_id, rev, memory_id, event, meta, ts) "
                        "VALUES (1, 't', 1, 1, 'created', '{}', '2025-03-05')"
                    )
                )
                before_guards = conn.execute(sa.text(guards)).all()
                before_indexes = conn.scalars(sa.text(indexes)).all()
                before_rows = conn.execute(sa.text("SELECT * FROM audit_logs ORDER BY id")).all()
            upgrade(revision="0016")
            with db.engine.begin() as conn:
                assert conn.execute(sa.text(guards)).all() == before_guards
                assert conn.scalars(sa.text(indexes)).all() == before_indexes
                assert conn.execute(sa.text("SELECT * FROM audit_logs ORDER BY id")).all() == before_rows
                homes = conn.scalars(
                    sa.text("SELECT tableoid::regclass::text FROM audit_logs ORDER BY id")
                ).all()
                assert homes == ["audit_logs_2025_03", "audit_logs_2025_03", "audit_logs_2026_01"]
                assert conn.scalar(sa.text("SELECT count(*) FROM events_2025_03")) == 2
                assert conn.scalar(sa.text("SELECT count(*) FROM change_log_2025_03")) == 1
                for table in TABLES:
                    assert set(partitions(conn, table.name)) >= {
                        partition_name(table.name, m)
                        for m in (month_start(utcnow()), add_months(month_start(utcnow()), 3))
                    } | {f"{table.name}_default"}
                unguarded = history_warnings(conn, utcnow())
                assert not [w for w in unguarded if "TRUNCATE" in w]
                new_id = conn.scalar(
                    sa.text(
                        "INSERT INTO audit_logs (agent_id, op_id, actor, action, data, created_at) "
                        "VALUES (1, 'op', 'admin:1', 'create', '{}', now()) RETURNING id"
                    )
                )
                assert new_id == 4  # the sequence went on; no id is reused
            downgrade(revision="0015")
            with db.engine.begin() as conn:
                assert (
                    conn.scalar(sa.text("SELECT relkind FROM pg_class WHERE relname = 'audit_logs'")) == "r"
                )
                assert conn.execute(sa.text(guards)).all() == before_guards
                assert conn.scalars(sa.text(indexes)).all() == before_indexes
                assert conn.scalar(sa.text("SELECT count(*) FROM audit_logs")) == 4
            db.engine.dispose()
