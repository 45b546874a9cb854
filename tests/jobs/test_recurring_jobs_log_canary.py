"""No memory text in what a real RQ worker and the scheduler log while every recurring job runs (invariant 6,
"Logs are output too"): each job of jobs/schedule.py's RECURRING is enqueued on its own queue, with an agent
whose every memory carries a canary word — over its budget, holding duplicates, journal and semantic
memories —, and a real `flask rq worker --burst` works them off, the refinement sessions they queue
included (the offline refiner: LLM_OFFLINE=1). Neither its log, nor `flask rq scheduler --burst`'s, nor
any job's record in Redis (description, arguments, failure) holds the canary, while the worker's log names
every job it ran. tests/jobs/test_log_canary.py covers the per-write jobs and a failing one in-process."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import sqlalchemy as sa
from rq import Queue
from rq.job import Job
from rq.registry import FailedJobRegistry, FinishedJobRegistry

from infra.queues import get_rq
from jobs.schedule import RECURRING
from models import AgentMemory, db
from models.changes.mutations import create_memory
from tests.job_records import visible

ROOT = Path(__file__).resolve().parents[2]
FLASK = [sys.executable, "-m", "flask", "--app", "wsgi"]
WAIT = 300  # seconds, for the whole burst


def seeded(make_agent, canary: str) -> int:
    """An agent over its budget whose every memory holds the canary: core memories (two the same), journal
    entries and semantic memories, written as an admin would."""
    agent = make_agent(core_token_budget=40)
    core = [f"Maya keeps the {canary} notebook by the door", f"Tom's {canary} bike is blue"]
    for content in [*core, core[0], f"The {canary} garden needs water every other evening"]:
        create_memory(agent.id, content, actor="admin:seed")
    for kind in ("journal", "semantic", "semantic"):
        create_memory(agent.id, f"A {kind} note about the {canary} trip to Leeds", actor="admin:seed",
                      memory_type=kind)  # fmt: skip
    return agent.id


def flask(command: list[str], env: dict[str, str], log: Path) -> None:
    with open(log, "ab") as out:
        subprocess.run([*FLASK, *command], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                       timeout=WAIT, check=True)  # fmt: skip


def test_every_recurring_job_and_the_sessions_it_queues_log_no_memory_text(
    app, make_agent, redis_conn, tmp_path
):
    canary = f"canary{uuid.uuid4().hex}"
    agent_id = seeded(make_agent, canary)
    enqueued = [
        Queue(job.queue, connection=redis_conn).enqueue(job.func_name, job_timeout=WAIT) for job in RECURRING
    ]
    db.session.close()  # the worker writes; this process holds no transaction meanwhile
    env = {
        **os.environ,
        "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "REDIS_URL": app.extensions["rq"].url,
        "SECRET_KEY": "test",
        "EMBEDDINGS": "hashed",
        "LLM_OFFLINE": "1",
    }
    log = tmp_path / "processes.log"
    flask(["rq", "worker", "--burst"], env, log)
    flask(["rq", "scheduler", "--burst"], env, log)
    written = log.read_text()

    for job in enqueued:
        assert job.get_status(refresh=True) == "finished", written[-3000:]
        assert job.func_name in written  # the log is the worker's, job by job
    # Every job the burst ran, the sessions the sweep and the scan queued among them, and what Redis keeps
    # of each that a person or a log could see.
    ran = {
        job_id
        for queue in get_rq().queues  # the app's queue layout (infra/queues.py)
        for registry in (FinishedJobRegistry, FailedJobRegistry)
        for job_id in registry(queue.name, connection=redis_conn).get_job_ids()
    }
    assert len(ran) > len(enqueued)  # sessions too
    for kept in Job.fetch_many(sorted(ran), connection=redis_conn):
        assert kept is not None and canary not in visible(kept), kept
    assert canary not in written
    # The jobs read and changed the canary's memories: the duplicate is gone.
    remaining = db.session.scalars(
        sa.select(AgentMemory.content).where(
            AgentMemory.agent_id == agent_id, AgentMemory.deleted_at.is_(None)
        )
    ).all()
    assert remaining and sum(content.startswith("Maya keeps") for content in remaining) == 1
