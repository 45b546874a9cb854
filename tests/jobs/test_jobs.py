"""Background work: the recurring schedule, the queues, real workers, the embedded Redis, the scans.

Everything here runs against a real Redis (embedded or TEST_REDIS) and the test database; the
worker tests also run the real `flask rq worker` in a subprocess so the forking AppWorker and the
one-app-context-per-process design are exercised exactly as in production.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import redis
from rq import Queue, SimpleWorker
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry
from rq_scheduler import Scheduler
from sqlalchemy import event, func, select

from infra import embedded_redis
from infra.queues import FAILURE_TTL, QUEUE_TIMEOUTS
from jobs.maintenance import agents_with_duplicates, dedup_agent, dedup_all_agents
from jobs.schedule import ID_PREFIX, RECURRING, reconcile
from jobs.triggers import over_budget_scan, refinement_sweep
from models import AgentMemory, AuditLog, RefinementSession, db, utcnow
from models.changes.mutations import soft_delete_memories
from models.refinement.due import over_budget_due
from tests.job_fixtures import echo, explode, process_ids

REPO_ROOT = Path(__file__).resolve().parents[2]
SUBPROCESS_TIMEOUT = 90


def _scheduled_times(conn) -> list[tuple[bytes, float]]:
    return conn.zrange(Scheduler.scheduled_jobs_key, 0, -1, withscores=True)


def _next_runs(scheduler: Scheduler) -> dict[str, datetime]:
    return {job.id: when for job, when in scheduler.get_jobs(with_times=True)}


def _cli_env(app, **extra: str) -> dict[str, str]:
    """Environment for a `flask --app wsgi ...` subprocess that uses this test's database and Redis."""
    rq = app.extensions["rq"]
    _ = rq.connection  # resolves rq.url (a unix:// socket for the embedded server)
    env = {
        **os.environ,
        "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "REDIS_URL": rq.url,
        "SECRET_KEY": "test-secret",
        **extra,
    }
    env.pop("FLASK_APP", None)
    return env


# --- the recurring schedule ------------------------------------------------------------------


@pytest.fixture
def utc_process_clock():
    """`flask rq scheduler` runs its process on UTC (rq-scheduler reads cron against the local clock).

    Do the same here so the schedule tests hold on any host, then put this process's clock back.
    """
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()


@pytest.fixture
def scheduler(redis_conn, utc_process_clock) -> Scheduler:
    return Scheduler(connection=redis_conn)


def test_first_reconcile_schedules_every_recurring_job_as_declared(scheduler):
    report = reconcile(scheduler)

    assert sorted(report["added"]) == sorted(spec.job_id for spec in RECURRING)
    assert report["replaced"] == report["removed"] == report["kept"] == []
    jobs = {job.id: job for job in scheduler.get_jobs()}
    assert set(jobs) == {spec.job_id for spec in RECURRING}
    for spec in RECURRING:
        job = jobs[spec.job_id]
        assert job.meta["cron_string"] == spec.cron
        assert job.origin == spec.queue
        assert job.timeout == QUEUE_TIMEOUTS[spec.queue]
        assert job.failure_ttl == FAILURE_TTL
        assert job.func_name == spec.func_name
        assert job.get_status() == JobStatus.SCHEDULED


def test_weekly_refinement_sweep_next_runs_monday_0400_utc(scheduler):
    before = utcnow()
    reconcile(scheduler)

    when = _next_runs(scheduler)[ID_PREFIX + "refinement-sweep"]

    assert when.weekday() == 0  # Monday
    assert (when.hour, when.minute, when.second) == (4, 0, 0)
    assert before < when <= before + timedelta(days=7)


def test_over_budget_scan_next_runs_within_fifteen_minutes_on_a_quarter_hour(scheduler):
    before = utcnow()
    reconcile(scheduler)

    when = _next_runs(scheduler)[ID_PREFIX + "over-budget-scan"]

    assert when.minute % 15 == 0 and when.second == 0
    assert before < when <= before + timedelta(minutes=15)


def test_second_reconcile_keeps_everything_and_changes_nothing(scheduler, redis_conn):
    reconcile(scheduler)
    times_before = _scheduled_times(redis_conn)
    hashes_before = {spec.job_id: redis_conn.hgetall(Job.key_for(spec.job_id)) for spec in RECURRING}

    report = reconcile(scheduler)

    assert sorted(report["kept"]) == sorted(spec.job_id for spec in RECURRING)
    assert report["added"] == report["replaced"] == report["removed"] == []
    assert _scheduled_times(redis_conn) == times_before
    # Not re-created behind our back: the stored job hashes are byte-for-byte the same.
    assert {spec.job_id: redis_conn.hgetall(Job.key_for(spec.job_id)) for spec in RECURRING} == hashes_before


def test_reconcile_removes_stale_recurring_job_no_longer_declared(scheduler, redis_conn):
    reconcile(scheduler)
    stale = scheduler.cron(
        "*/5 * * * *", func=over_budget_scan, queue_name="default", id=ID_PREFIX + "retired"
    )

    report = reconcile(scheduler)

    assert report["removed"] == [stale.id]
    assert stale.id not in scheduler
    assert not Job.exists(stale.id, connection=redis_conn)
    assert {job.id for job in scheduler.get_jobs()} == {spec.job_id for spec in RECURRING}


def test_configured_timings_are_reconciled_replacing_only_the_jobs_they_change(app, scheduler):
    """REFINEMENT_CRON, OVER_BUDGET_SCAN_MINUTES and the other timings come from the config."""
    reconcile(scheduler)
    app.config.update(REFINEMENT_CRON="30 1 * * 3", OVER_BUDGET_SCAN_MINUTES=20)

    report = reconcile(scheduler)

    assert sorted(report["replaced"]) == [ID_PREFIX + "over-budget-scan", ID_PREFIX + "refinement-sweep"]
    assert len(report["kept"]) == len(RECURRING) - 2 and report["added"] == report["removed"] == []
    runs = _next_runs(scheduler)
    sweep, scan = runs[ID_PREFIX + "refinement-sweep"], runs[ID_PREFIX + "over-budget-scan"]
    assert (sweep.weekday(), sweep.hour, sweep.minute) == (2, 1, 30)  # Wednesday 01:30 UTC
    assert scan.minute in (0, 20, 40) and scan.second == 0
    jobs = {job.id: job for job in scheduler.get_jobs()}
    assert (
        jobs[ID_PREFIX + "refinement-sweep"].description == "Weekly refinement sweep, cron 30 1 * * 3 (UTC)"
    )
    assert reconcile(scheduler)["replaced"] == []  # and again changes nothing
    from jobs.schedule import scheduled  # what `rq schedule`, the jobs page and the forecast list

    listed = {item["name"]: item["cron"] for item in scheduled(scheduler)}
    assert (listed["refinement-sweep"], listed["over-budget-scan"]) == ("30 1 * * 3", "*/20 * * * *")


@pytest.mark.parametrize(
    "setting",
    [{"REFINEMENT_CRON": "0 25 * * *"}, {"DEDUP_CRON": "daily"}, {"OVER_BUDGET_SCAN_MINUTES": 0}],
)
def test_a_bad_schedule_setting_stops_the_app_naming_it(database_url, redis_url, tmp_path, setting):
    from console import create_app

    with pytest.raises(ValueError, match=next(iter(setting))):
        create_app({"TESTING": True, "DATABASE_URL": database_url, "REDIS_URL": redis_url, **setting,
                    "EMBEDDED_REDIS_DIR": str(tmp_path / "unused")})  # fmt: skip


@pytest.mark.parametrize(
    "drift",
    [
        {"cron_string": "0 5 * * 1"},
        {"queue_name": "default"},
        {"timeout": 60},
        {"func": over_budget_scan},
    ],
    ids=["cron", "queue", "timeout", "func"],
)
def test_reconcile_replaces_recurring_job_that_drifted_from_its_declaration(scheduler, redis_conn, drift):
    job_id = ID_PREFIX + "refinement-sweep"
    declared = {
        "cron_string": "0 4 * * 1",
        "func": refinement_sweep,
        "queue_name": "llm",
        "timeout": QUEUE_TIMEOUTS["llm"],
    }
    scheduler.cron(id=job_id, **{**declared, **drift})

    report = reconcile(scheduler)

    assert report["replaced"] == [job_id]
    job = Job.fetch(job_id, connection=redis_conn)
    assert job.meta["cron_string"] == "0 4 * * 1"
    assert job.origin == "llm"
    assert job.timeout == QUEUE_TIMEOUTS["llm"]
    assert job.func_name == "jobs.triggers.refinement_sweep"
    assert redis_conn.zcard(Scheduler.scheduled_jobs_key) == len(RECURRING)
    assert reconcile(scheduler)["replaced"] == []


def test_reconcile_leaves_jobs_scheduled_by_others_alone(scheduler, redis_conn):
    foreign_cron = scheduler.cron(
        "0 0 * * *", func=echo, args=["nightly"], queue_name="default", id="someone-else"
    )
    foreign_once = scheduler.enqueue_in(timedelta(hours=3), echo, "later")
    scores_before = {
        job_id: redis_conn.zscore(Scheduler.scheduled_jobs_key, job_id)
        for job_id in (foreign_cron.id, foreign_once.id)
    }

    report = reconcile(scheduler)
    reconcile(scheduler)

    assert foreign_cron.id not in report["removed"] and foreign_once.id not in report["removed"]
    for job_id, score in scores_before.items():
        assert redis_conn.zscore(Scheduler.scheduled_jobs_key, job_id) == score
        assert Job.exists(job_id, connection=redis_conn)
    assert Job.fetch(foreign_cron.id, connection=redis_conn).meta["cron_string"] == "0 0 * * *"


def test_schedule_sync_command_prints_every_recurring_job_with_next_run(
    runner, redis_conn, utc_process_clock
):
    result = runner.invoke(args=["rq", "schedule", "--sync"])

    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert sorted(payload["reconciled"]["added"]) == sorted(spec.job_id for spec in RECURRING)
    listed = {row["name"]: row for row in payload["recurring"]}
    assert set(listed) == {spec.name for spec in RECURRING}
    now = utcnow()
    for spec in RECURRING:
        row = listed[spec.name]
        assert (row["cron"], row["queue"]) == (spec.cron, spec.queue)
        assert datetime.fromisoformat(row["next_run"]) > now
    assert datetime.fromisoformat(listed["refinement-sweep"]["next_run"]).weekday() == 0

    again = json.loads(runner.invoke(args=["rq", "schedule", "--sync"]).stdout)
    assert sorted(again["reconciled"]["kept"]) == sorted(spec.job_id for spec in RECURRING)
    assert again["recurring"] == payload["recurring"]


def test_schedule_sync_on_a_non_utc_host_still_reads_cron_strings_as_utc(app, redis_conn):
    completed = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", "rq", "schedule", "--sync"],
        cwd=REPO_ROOT,
        env=_cli_env(app, TZ="America/New_York"),
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
    )
    assert completed.returncode == 0, completed.stderr
    listed = {row["name"]: row for row in json.loads(completed.stdout)["recurring"]}
    sweep = datetime.fromisoformat(listed["refinement-sweep"]["next_run"])
    assert (sweep.weekday(), sweep.hour, sweep.minute) == (0, 4, 0)


# --- enqueueing ------------------------------------------------------------------------------


@pytest.mark.parametrize("queue_name", sorted(QUEUE_TIMEOUTS))
def test_enqueue_sets_explicit_queue_timeout_and_failure_ttl(app, redis_conn, queue_name):
    job = app.extensions["rq"].enqueue(echo, 1, queue=queue_name)

    stored = Job.fetch(job.id, connection=redis_conn)
    assert stored.origin == queue_name
    assert stored.timeout == QUEUE_TIMEOUTS[queue_name]
    assert stored.failure_ttl == FAILURE_TTL
    assert job.id in Queue(queue_name, connection=redis_conn).job_ids


def test_enqueue_requires_a_known_queue_name(app, redis_conn):
    rq = app.extensions["rq"]
    with pytest.raises(KeyError, match="unknown queue 'reports'"):
        rq.enqueue(echo, 1, queue="reports")
    with pytest.raises(TypeError):
        rq.enqueue(echo, 1)  # no implicit queue
    assert redis_conn.keys("rq:queue:reports") == []


# --- jobs in real workers --------------------------------------------------------------------


def _agent_with_a_duplicate(make_agent, make_memory):
    agent = make_agent()
    keeper = make_memory(agent, "Prefers tea in the morning")
    duplicate = make_memory(agent, "PREFERS TEA IN THE MORNING")
    make_memory(agent, "Lives in Lisbon")
    return agent.id, keeper.id, duplicate.id


def _dedup_audits(agent_id: int) -> list[AuditLog]:
    return db.session.scalars(
        select(AuditLog)
        .where(AuditLog.agent_id == agent_id, AuditLog.action == "dedup")
        .order_by(AuditLog.id)
    ).all()


def test_nightly_dedup_visits_only_active_agents_with_duplicates_and_is_idempotent(make_agent, make_memory):
    clean, twice, asleep = make_agent(), make_agent(), make_agent(active=False)
    make_memory(clean, "Likes tea")
    make_memory(clean, "Likes coffee")
    keeper = make_memory(twice, "Likes tea")
    duplicate = make_memory(twice, "LIKES TEA ")
    make_memory(twice, "likes tea", memory_type="journal")  # not core: never a duplicate
    make_memory(asleep, "Likes tea")
    dormant = make_memory(asleep, "likes tea")
    agent_ids = (clean.id, twice.id, asleep.id)

    assert agents_with_duplicates() == [twice.id]
    assert dedup_all_agents() == {"agents": 1, "removed": 1}

    _assert_duplicate_removed_and_audited(twice.id, keeper.id, duplicate.id)
    assert db.session.get(AgentMemory, dormant.id).deleted_at is None  # inactive agents are left alone
    assert agents_with_duplicates() == []
    assert dedup_all_agents() == {"agents": 0, "removed": 0}
    assert (
        db.session.scalar(
            select(func.count())
            .select_from(AuditLog)
            .where(AuditLog.agent_id.in_(agent_ids), AuditLog.action == "dedup")
        )
        == 1
    )


def _assert_duplicate_removed_and_audited(agent_id: int, keeper_id: int, duplicate_id: int) -> None:
    db.session.expire_all()
    assert db.session.get(AgentMemory, keeper_id).deleted_at is None
    assert db.session.get(AgentMemory, duplicate_id).deleted_at is not None
    active = db.session.scalar(
        select(func.count()).where(AgentMemory.agent_id == agent_id, AgentMemory.deleted_at.is_(None))
    )
    assert active == 2
    audits = _dedup_audits(agent_id)
    assert [(a.memory_id, a.actor) for a in audits] == [(duplicate_id, "system:dedup")]
    assert audits[0].before["deleted_at"] is None and audits[0].after["deleted_at"] is not None


def test_dedup_job_in_simple_worker_soft_deletes_duplicate_audited_and_is_idempotent(
    app, redis_conn, make_agent, make_memory
):
    agent_id, keeper_id, duplicate_id = _agent_with_a_duplicate(make_agent, make_memory)
    rq = app.extensions["rq"]
    queue = rq.queue("maintenance")

    first = rq.enqueue(dedup_agent, agent_id, queue="maintenance")
    SimpleWorker([queue], connection=redis_conn).work(burst=True)

    assert first.get_status() == JobStatus.FINISHED
    assert first.return_value() == {"agent_id": agent_id, "removed": 1}
    _assert_duplicate_removed_and_audited(agent_id, keeper_id, duplicate_id)

    second = rq.enqueue(dedup_agent, agent_id, queue="maintenance")
    SimpleWorker([queue], connection=redis_conn).work(burst=True)

    assert second.get_status() == JobStatus.FINISHED
    assert second.return_value() == {"agent_id": agent_id, "removed": 0}
    _assert_duplicate_removed_and_audited(agent_id, keeper_id, duplicate_id)


def test_failing_job_lands_in_failed_registry_with_its_exception(app, redis_conn):
    rq = app.extensions["rq"]
    queue = rq.queue("default")

    job = rq.enqueue(explode, "the disk is on fire", queue="default")
    SimpleWorker([queue], connection=redis_conn).work(burst=True)

    _assert_failed_and_recorded(job, queue, redis_conn)


def _assert_failed_and_recorded(job: Job, queue: Queue, conn) -> None:
    assert job.get_status() == JobStatus.FAILED
    registry = FailedJobRegistry(queue=queue)
    assert job.id in registry
    result = job.latest_result()
    assert result is not None and result.type == result.Type.FAILED
    assert "JobExploded" in result.exc_string and "the disk is on fire" in result.exc_string
    job.refresh()
    assert job.failure_ttl == FAILURE_TTL
    # The registry keeps it for our failure TTL (a week), not RQ's default (a year).
    expires_in = conn.zscore(registry.key, job.id) - time.time()
    assert FAILURE_TTL - 120 < expires_in <= FAILURE_TTL + 1


def _run_cli_worker(app, *queues: str) -> int:
    """`flask --app wsgi rq worker QUEUES --burst` in a fresh process, on this test's database and Redis.

    Returns the worker's pid once it has emptied the queues and exited cleanly.
    """
    # The worker imports test-only jobs (tests.job_fixtures) by dotted name.
    env = _cli_env(
        app, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    )
    # Let the worker see everything this process wrote, and hold no locks while it runs.
    db.session.commit()
    db.session.close()
    worker = subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "wsgi", "rq", "worker", *queues, "--burst"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _, stderr = worker.communicate(timeout=SUBPROCESS_TIMEOUT)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.communicate()
        raise
    assert worker.returncode == 0, stderr
    return worker.pid


def test_cli_worker_subprocess_runs_dedup_in_forked_horse_idempotently(
    app, redis_conn, make_agent, make_memory
):
    agent_id, keeper_id, duplicate_id = _agent_with_a_duplicate(make_agent, make_memory)
    rq = app.extensions["rq"]
    first = rq.enqueue(dedup_agent, agent_id, queue="maintenance")
    second = rq.enqueue(dedup_agent, agent_id, queue="maintenance")
    where = rq.enqueue(process_ids, queue="maintenance")

    worker_pid = _run_cli_worker(app, "maintenance")

    # Jobs ran in a work horse forked from the CLI worker, not in the worker itself.
    assert where.return_value()["ppid"] == worker_pid != where.return_value()["pid"]

    assert first.get_status() == JobStatus.FINISHED, first.latest_result()
    assert second.get_status() == JobStatus.FINISHED, second.latest_result()
    assert first.return_value() == {"agent_id": agent_id, "removed": 1}
    assert second.return_value() == {"agent_id": agent_id, "removed": 0}
    _assert_duplicate_removed_and_audited(agent_id, keeper_id, duplicate_id)


def test_cli_worker_subprocess_records_failure_of_job_raising_in_forked_horse(app, redis_conn):
    rq = app.extensions["rq"]
    job = rq.enqueue(explode, "the disk is on fire", queue="default")
    ok = rq.enqueue(echo, "still working", queue="default")

    _run_cli_worker(app, "default")

    _assert_failed_and_recorded(job, rq.queue("default"), redis_conn)
    # One failed job does not take the worker down: the next job still runs.
    assert ok.get_status() == JobStatus.FINISHED
    assert ok.return_value() == "still working"


# --- the embedded Redis ----------------------------------------------------------------------


@pytest.fixture
def embedded_dir(tmp_path_factory):
    """A fresh, short directory (unix socket paths are limited to ~107 bytes), stopped afterwards."""
    directory = str(tmp_path_factory.mktemp("emb"))
    yield directory
    embedded_redis.stop(directory)


def _server_pid(url: str) -> int:
    return int(redis.Redis.from_url(url).info("server")["process_id"])


def _wait_until_gone(url: str, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not embedded_redis._answers(url):
            return True
        time.sleep(0.05)
    return False


def test_embedded_redis_starts_once_and_is_shared_across_processes(embedded_dir):
    url = embedded_redis.ensure_running(embedded_dir)

    assert url == f"unix://{embedded_redis.socket_path(embedded_dir)}"
    assert redis.Redis.from_url(url).ping()
    pid = _server_pid(url)
    assert int(Path(embedded_dir, "redis.pid").read_text()) == pid

    assert embedded_redis.ensure_running(embedded_dir) == url
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from infra import embedded_redis; print(embedded_redis.ensure_running(sys.argv[1]))",
            embedded_dir,
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
    )
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == url
    assert _server_pid(url) == pid
    assert int(Path(embedded_dir, "redis.pid").read_text()) == pid
    assert Path(embedded_dir, "redis.log").read_text().lower().count("ready to accept connections") == 1


def test_embedded_redis_concurrent_starters_start_one_server(embedded_dir):
    code = "import sys; from infra import embedded_redis; print(embedded_redis.ensure_running(sys.argv[1]))"
    starters = [
        subprocess.Popen(
            [sys.executable, "-c", code, embedded_dir],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [starter.communicate(timeout=SUBPROCESS_TIMEOUT) for starter in starters]

    assert [starter.returncode for starter in starters] == [0, 0, 0], [err for _, err in outputs]
    urls = {out.strip() for out, _ in outputs}
    assert len(urls) == 1
    assert Path(embedded_dir, "redis.log").read_text().lower().count("ready to accept connections") == 1
    assert _server_pid(urls.pop()) == int(Path(embedded_dir, "redis.pid").read_text())


def test_embedded_redis_stop_shuts_the_server_down(embedded_dir):
    url = embedded_redis.ensure_running(embedded_dir)
    assert embedded_redis._answers(url)

    embedded_redis.stop(embedded_dir)

    assert _wait_until_gone(url)
    embedded_redis.stop(embedded_dir)  # stopping a stopped server is harmless


# --- scans -----------------------------------------------------------------------------------


def _agents_around_their_budgets(make_agent, make_memory) -> list[int]:
    """Agents on every side of the over-budget line; returns the ids that are over it and not cooling down."""
    ten_tokens = "x" * 40
    over = make_agent(core_token_budget=5)
    make_memory(over, ten_tokens)
    over_by_sum = make_agent(core_token_budget=8)
    make_memory(over_by_sum, "a" * 20)
    make_memory(over_by_sum, "b" * 20)
    over_long_ago = make_agent(core_token_budget=5)
    make_memory(over_long_ago, ten_tokens)
    db.session.add(
        RefinementSession(
            agent_id=over_long_ago.id,
            trigger="manual",
            status="completed",
            started_at=utcnow() - timedelta(days=2),
        )
    )
    over_but_cooling_down = make_agent(core_token_budget=5)
    make_memory(over_but_cooling_down, ten_tokens)
    db.session.add(
        RefinementSession(
            agent_id=over_but_cooling_down.id,
            trigger="manual",
            status="completed",
            started_at=utcnow() - timedelta(hours=1),
        )
    )
    at_budget = make_agent(core_token_budget=10)
    make_memory(at_budget, ten_tokens)
    under = make_agent()
    make_memory(under, ten_tokens)
    deleted_only = make_agent(core_token_budget=5)
    gone = make_memory(deleted_only, ten_tokens)
    make_memory(deleted_only, "ok")
    soft_delete_memories(deleted_only.id, [gone.id], actor="admin:test")
    journal_only = make_agent(core_token_budget=5)
    make_memory(journal_only, ten_tokens, memory_type="journal")
    inactive = make_agent(core_token_budget=5, active=False)
    make_memory(inactive, ten_tokens)
    make_agent(core_token_budget=0)  # no memories at all
    db.session.commit()
    return sorted([over.id, over_by_sum.id, over_long_ago.id])


def test_over_budget_selection_is_exactly_the_over_budget_agents_in_one_aggregate_query(
    app, make_agent, make_memory
):
    expected = _agents_around_their_budgets(make_agent, make_memory)
    db.session.close()
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    event.listen(db.engine, "before_cursor_execute", record)
    try:
        selected = over_budget_due()
    finally:
        event.remove(db.engine, "before_cursor_execute", record)

    assert selected == expected
    assert len(statements) == 1, statements
    assert statements[0].lstrip().upper().startswith("SELECT")


def test_over_budget_scan_queues_one_session_per_over_budget_agent_then_cools_down(
    app, redis_conn, make_agent, make_memory
):
    expected = _agents_around_their_budgets(make_agent, make_memory)

    first = over_budget_scan()

    assert first["over_budget"] == expected
    sessions = db.session.scalars(
        select(RefinementSession)
        .where(RefinementSession.id.in_(first["queued"]))
        .order_by(RefinementSession.agent_id)
    ).all()
    assert [s.agent_id for s in sessions] == expected
    assert {(s.status, s.trigger) for s in sessions} == {("queued", "over_budget")}
    llm = app.extensions["rq"].queue("llm")
    assert sorted(llm.job_ids) == sorted(s.job_id for s in sessions)
    assert all(Job.fetch(s.job_id, connection=redis_conn).origin == "llm" for s in sessions)

    # Fifteen minutes later: the same agents are still over budget but inside their cool-down.
    assert over_budget_scan() == {"over_budget": [], "queued": []}
    assert len(llm) == len(expected)
