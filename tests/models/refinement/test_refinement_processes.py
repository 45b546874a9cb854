"""Invariant 9 with real processes: one session per agent across workers, and crash safety."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from rq import Queue
from rq.job import Job

from jobs.refinement import run_refinement
from models import AgentMemory, AuditLog, RefinementSession, db
from models.changes.mutations import create_memory
from tests import scripted_llm as s

ROOT = Path(__file__).resolve().parents[3]
FLASK = [sys.executable, "-m", "flask", "--app", "wsgi"]


@pytest.fixture
def agent(app, make_agent, llm, monkeypatch, redis_conn):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    agent = make_agent(model_id="scripted-model", base_url=llm.url)
    for i in range(10):
        create_memory(agent.id, f"Memory {i} on subject {i * 3}", actor="admin:seed")
    return agent


def child_env(app) -> dict[str, str]:
    rq = app.extensions["rq"]
    rq.connection.ping()
    return {
        **os.environ,
        "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "REDIS_URL": rq.url,
        "OPENAI_API_KEY": "test-key",
        "REFINEMENT_LOCK_TTL": "2",
        "SECRET_KEY": "test",
    }


def wait_for(predicate, timeout: float = 30, interval: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError("timed out waiting")


def test_two_workers_on_one_agent_run_exactly_one_session(app, agent, llm, redis_conn, tmp_path):
    release = threading.Event()
    llm.script = [lambda request: s.Reply(body=s.consent()(request).body, hold=release), s.complete("ok")]
    queue = Queue("llm", connection=redis_conn)
    jobs = [queue.enqueue(run_refinement, agent.id, "test", None, True, job_timeout=120) for _ in range(2)]
    env = child_env(app)
    logs = [open(tmp_path / f"worker{i}.log", "wb") for i in range(2)]  # noqa: SIM115
    workers = [
        subprocess.Popen(
            [*FLASK, "rq", "worker", "llm", "--burst", "--name", f"w{i}-{os.getpid()}"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        for i, log in enumerate(logs)
    ]
    try:
        # The first session holds the lock while its model "thinks"; the second worker must be refused.
        def second_refused() -> bool:
            for job in jobs:
                job.refresh()
                if job.get_status() == "finished" and job.return_value().get("status") == "busy":
                    return True
            return False

        wait_for(second_refused, timeout=60)
        release.set()
        for i, worker in enumerate(workers):
            try:
                worker.wait(timeout=60)
            except subprocess.TimeoutExpired:  # what the worker was doing, for whoever reads the failure
                logs[i].flush()
                said = (tmp_path / f"worker{i}.log").read_text(errors="replace")[-4000:]
                raise AssertionError(
                    f"worker {i} still running 60 s after the model answered:\n{said}"
                ) from None
    finally:
        release.set()
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
        for log in logs:
            log.close()
    results = [Job.fetch(job.id, connection=redis_conn).return_value() for job in jobs]
    assert sorted(r["status"] for r in results) == ["busy", "completed"]
    db.session.expire_all()
    sessions = db.session.scalars(
        sa.select(RefinementSession).where(RefinementSession.agent_id == agent.id)
    ).all()
    assert [x.status for x in sessions] == ["completed"]
    assert sum(1 for r in llm.requests if not r.get("tools")) == 1  # one consent request: one session ran


def test_worker_killed_mid_session_leaves_whole_audited_operations_and_is_interrupted(app, agent, llm):
    memories = db.session.scalars(AgentMemory.active_core(agent.id)).all()
    stall = threading.Event()
    llm.script = [
        s.consent(),
        s.tools(("update_memory", {"id": memories[0].id, "content": "Memory zero, tightened"})),
        lambda request: s.Reply(body={}, hold=stall),  # the next turn never answers: we kill the worker here
    ]
    child = subprocess.Popen(
        [*FLASK, "refine", agent.name, "--now"],
        cwd=ROOT,
        env=child_env(app),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: len(llm.requests) >= 3, timeout=60)
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        stall.set()
        if child.poll() is None:
            child.kill()

    db.session.expire_all()
    killed = db.session.scalar(sa.select(RefinementSession).where(RefinementSession.agent_id == agent.id))
    assert killed.status == "running"  # nobody was left to say otherwise
    assert db.session.get(AgentMemory, memories[0].id).content == "Memory zero, tightened"
    record = db.session.scalar(
        sa.select(AuditLog).where(AuditLog.session_id == killed.id, AuditLog.action == "update")
    )
    assert record.before is not None and record.after is not None and killed.ops_count == 1

    # The dead worker's lock lapses within its TTL; then a new session starts and marks the old one.
    llm.script = [s.consent(), s.complete("after the crash")]
    wait_for(
        lambda: run_refinement(agent.id, "test", force=True)["status"] != "busy", timeout=20, interval=0.5
    )
    db.session.expire_all()
    statuses = db.session.scalars(
        sa.select(RefinementSession.status)
        .where(RefinementSession.agent_id == agent.id)
        .order_by(RefinementSession.id)
    ).all()
    assert statuses == ["interrupted", "completed"]


def test_database_allows_only_one_running_session_per_agent(agent):
    db.session.add(RefinementSession(agent_id=agent.id, trigger="a", status="running"))
    db.session.commit()
    db.session.add(RefinementSession(agent_id=agent.id, trigger="b", status="running"))
    with pytest.raises(sa.exc.IntegrityError):
        db.session.commit()
    db.session.rollback()
