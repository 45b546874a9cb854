"""No memory text in any log line or job record (invariant 6): a canary planted in a turn and in a memory
never shows in what the web app and a real RQ worker log, in a job's description or arguments, or in a job's
failure record, even after a database error inside the job. Logging runs at INFO, as in production
(console/__init__.py), so SQLAlchemy's statement log is on too."""

from __future__ import annotations

import json
import logging
import uuid

import pytest
import sqlalchemy as sa
from rq import SimpleWorker
from rq.job import Job, JobStatus

from infra.queues import PARKED_PREFIX, get_rq
from models import db
from tests import scripted_llm as s
from tests.api_support import bearer
from tests.conftest import DB_KIND
from tests.job_records import visible


@pytest.fixture
def canary() -> str:
    return f"canary{uuid.uuid4().hex}"


@pytest.fixture
def logs(caplog, capfd):
    """Everything logged at INFO and above, through logging and straight to the process's stdout/stderr."""
    caplog.set_level(logging.INFO)

    def text() -> str:
        out, err = capfd.readouterr()
        return caplog.text + out + err

    return text


@pytest.fixture
def failing_inserts():
    """Make every INSERT into a table fail inside the database (tests/models/changes/test_invariants.py's way); the
    triggers are dropped afterwards."""
    made: list[str] = []

    def fail(table: str) -> None:
        name = f"test_{table}_insert_fails"
        if DB_KIND == "sqlite":
            db.session.execute(
                sa.text(
                    f"CREATE TRIGGER {name} BEFORE INSERT ON {table} BEGIN SELECT RAISE(ABORT, 'refused'); END"
                )
            )
        else:
            db.session.execute(
                sa.text(
                    f"CREATE FUNCTION {name}() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$ "
                    "LANGUAGE plpgsql"
                )
            )
            db.session.execute(
                sa.text(
                    f"CREATE TRIGGER {name} BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION {name}()"
                )
            )
        db.session.commit()
        made.append(table)

    yield fail
    db.session.rollback()
    for table in made:
        name = f"test_{table}_insert_fails"
        if DB_KIND == "sqlite":
            db.session.execute(sa.text(f"DROP TRIGGER {name}"))
        else:
            db.session.execute(sa.text(f"DROP TRIGGER {name} ON {table}"))
            db.session.execute(sa.text(f"DROP FUNCTION {name}()"))
    db.session.commit()


def _run(queue_name: str) -> None:
    queue = get_rq().queue(queue_name)
    SimpleWorker([queue], connection=queue.connection).work(burst=True)


def test_an_extraction_job_and_its_failure_log_no_turn_text(
    app, client, make_agent, llm, monkeypatch, redis_conn, logs, canary, failing_inserts
):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    app.config["MULTI_FACT_EXTRACTION"] = True
    agent = make_agent(role="planner", model_id="scripted-model", base_url=llm.url)
    turn = f"The user said the code word is {canary} and went through the launch plan in detail. " * 6
    queued = client.post(
        "/api/v1/memory/extract", json={"turn": turn, "thread_id": "t1"}, headers=bearer(agent)
    )
    assert queued.status_code == 202, queued.json
    job = Job.fetch(queued.json["job_id"], connection=redis_conn)
    assert canary not in visible(job)
    assert [key.decode() for key in redis_conn.keys(PARKED_PREFIX + "*")] == [job.args[1]]
    # The model proposes a fact quoting the canary; the database refuses to store it.
    fact = {"text": f"The user's code word is {canary}", "category": "tasks", "importance": 3}
    llm.script = [s.text(json.dumps({"facts": [fact]}))]
    failing_inserts("agent_memories")

    _run("llm")

    assert job.get_status(refresh=True) == JobStatus.FAILED
    assert "refused" in visible(job)  # the database's own message is kept; its parameters are not
    assert canary not in visible(job)
    assert canary not in logs()
    assert redis_conn.keys(PARKED_PREFIX + "*"), "a failed run keeps the turn until it expires, for a requeue"


def test_a_finished_extraction_deletes_the_parked_turn(
    app, client, make_agent, llm, monkeypatch, redis_conn, logs, canary
):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    app.config["MULTI_FACT_EXTRACTION"] = True
    agent = make_agent(role="planner", model_id="scripted-model", base_url=llm.url)
    turn = f"The user mentioned {canary} while we went through the launch plan in detail. " * 6
    queued = client.post("/api/v1/memory/extract", json={"turn": turn}, headers=bearer(agent))
    llm.script = [
        s.text(json.dumps({"facts": [{"text": f"The user mentioned {canary}", "category": "tasks"}]}))
    ]

    _run("llm")

    job = Job.fetch(queued.json["job_id"], connection=redis_conn)
    assert job.get_status(refresh=True) == JobStatus.FINISHED, visible(job)
    assert job.return_value()["status"] == "ok" and canary not in repr(job.return_value())
    assert redis_conn.keys(PARKED_PREFIX + "*") == []
    assert canary not in logs()


@pytest.mark.parametrize(
    ("memory_type", "job_name"),
    [("semantic", "jobs.relations.link_related"), ("episodic", "jobs.relations.embed_written")],
)
def test_linking_and_embedding_jobs_and_their_failures_log_no_memory_text(
    app, client, make_agent, redis_conn, logs, canary, failing_inserts, monkeypatch, memory_type, job_name
):
    # A non-semantic memory is queued for its vector only when a real embedder is configured; the job
    # itself embeds with the suite's embedder.
    monkeypatch.setattr("console.api.routes_memory.semantic_configured", lambda: True)
    monkeypatch.setattr("jobs.relations.semantic_configured", lambda: True)
    agent = make_agent(role="executor")
    created = client.post(
        "/api/v1/memory",
        json={
            "content": f"The user said the locker code was {canary}.",
            "memory_type": memory_type,
            "category": "tasks",
        },
        headers=bearer(agent),
    )
    assert created.status_code == 201, created.json
    (job_id,) = get_rq().queue("maintenance").job_ids
    job = Job.fetch(job_id, connection=redis_conn)
    assert job.description == f"{job_name}({agent.id}, [{created.json['memory']['id']}])"
    failing_inserts("memory_embeddings")

    _run("maintenance")

    assert job.get_status(refresh=True) == JobStatus.FAILED
    assert canary not in visible(job)
    assert canary not in logs()


def test_a_database_error_in_a_request_logs_no_memory_text(
    app, client, make_agent, logs, canary, failing_inserts
):
    agent = make_agent(role="executor")
    failing_inserts("agent_memories")
    answer = client.post(
        "/api/v1/memory",
        json={
            "content": f"The user's locker code is {canary}.",
            "memory_type": "semantic",
            "category": "tasks",
        },
        headers=bearer(agent),
    )
    assert answer.status_code >= 400
    assert canary not in answer.get_data(as_text=True)
    assert canary not in logs()
