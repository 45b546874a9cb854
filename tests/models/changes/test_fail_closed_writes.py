"""Concurrent writes to one agent never fail for lock reasons, with real processes.

gunicorn (2 workers x 8 threads) on the suite's database; 16 client threads, released together by a
barrier, each PATCH / DELETE / restore its own memories of ONE agent for a bounded time. Every write
changes the agent's counters (core tokens, memory count) in the same transaction, so every one of them
takes the agent's row lock: nothing may answer an error for it (a deadlock or a serialization failure is
retried by the server, whole), and afterwards every memory's audit chain is whole and holds exactly the
writes that were acknowledged.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import threading
import time
import uuid
from collections import Counter

import pytest
import sqlalchemy as sa

from models import Agent, db
from models.changes import mutations as mut
from models.db import MAX_RETRIES, atomic, retrying
from tests.audit_chain import assert_audit_chains
from tests.gunicorn_server import TIMEOUT, serve

CLIENTS = 16
MEMORIES_PER_CLIENT = 3
SECONDS = 12  # how long the clients write


def _deadlocks() -> int | None:
    """PostgreSQL: deadlocks its statistics have counted in the test's database so far (None on SQLite).
    A backend reports them when it goes idle or exits: read after the server has stopped."""
    if db.engine.dialect.name != "postgresql":
        return None
    with db.engine.connect() as conn:
        conn.exec_driver_sql("SELECT pg_stat_clear_snapshot()")
        return conn.exec_driver_sql(
            "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
        ).scalar_one()


def _agent_with_memories() -> tuple[int, str, list[list[int]]]:
    agent = Agent(name=f"writers-{uuid.uuid4().hex[:8]}")
    token = agent.issue_token()
    db.session.add(agent)
    db.session.commit()
    agent_id = agent.id
    owned: list[list[int]] = []
    for client in range(CLIENTS):
        ids = []
        for n in range(MEMORIES_PER_CLIENT):
            # Some in one shared thread: its revision counter is one more row their writers all lock.
            thread = {"thread_id": "shared"} if n % 2 else {}
            memory = mut.create_memory(
                agent_id, f"Note {n} of writer {client}", actor="admin:seed", category="profile", **thread
            )
            ids.append(memory.id)
        owned.append(ids)
    db.session.close()  # this process holds no transaction while the server works
    return agent_id, token, owned


def _write_for(
    port: int, token: str, ids: list[int], seed: int, barrier: threading.Barrier, out: dict
) -> None:
    """One client: PATCH, DELETE or restore one of its own memories at a time until the time is up.
    Only this client writes these memories, so it knows each one's state from its own answers."""
    rng = random.Random(seed)
    active = dict.fromkeys(ids, True)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    conn.connect()
    barrier.wait(timeout=TIMEOUT)
    deadline = time.monotonic() + SECONDS
    n = 0
    while time.monotonic() < deadline:
        memory_id = rng.choice(ids)
        if not active[memory_id]:
            method, path, body = "POST", f"/api/v1/memory/{memory_id}/restore", None
        elif rng.random() < 0.6:
            method, path = "PATCH", f"/api/v1/memory/{memory_id}"
            body = {"content": f"Revision {n} of note {memory_id}", "importance": 1 + n % 5}
        else:
            method, path, body = "DELETE", f"/api/v1/memory/{memory_id}", None
        n += 1
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            response = conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException):  # the server closed a kept-alive connection
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            out["reconnects"] += 1
            continue
        out["answers"][(method, response.status)] += 1
        if response.status == 200:
            out["writes"][memory_id] += 1
            active[memory_id] = method != "DELETE"
        elif len(out["failures"]) < 3:
            out["failures"].append((method, response.status, json.loads(raw) if raw else None))
    conn.close()


def test_concurrent_writes_to_one_agent_never_fail_for_lock_reasons(app, redis_url):
    agent_id, token, owned = _agent_with_memories()
    deadlocks = _deadlocks()
    # Neither the per-token rate limit nor the retention guard on the agent's own deletions is what this
    # test is about: the clients send far more than 600 calls a minute, and delete and restore all along.
    settings = {"API_RATE_LIMIT": "100000/minute", "RETENTION_GUARD_WINDOW_HOURS": "0"}
    with serve(app.config["SQLALCHEMY_DATABASE_URI"], redis_url, **settings) as port:
        outs = _write_concurrently(port, token, owned)
    answers = sum((out["answers"] for out in outs), Counter())
    failures = [f for out in outs for f in out["failures"]]
    print(f"answers: {dict(answers)}")
    assert sum(answers.values()) > 10 * CLIENTS, "too few writes to mean anything"
    assert set(status for _, status in answers) == {200}, f"refused or failed writes: {failures}"
    # Writers take the agent's row before their memories' (models/changes/rows.py), so none deadlocked:
    # the retries (models/db.py) are for what is left, not the normal case.
    if deadlocks is not None:
        assert _deadlocks() == deadlocks, "writers of one agent deadlocked"
    # Every acknowledged write is one record in its memory's unbroken chain; nothing else was written.
    chains = assert_audit_chains(agent_id)
    writes = sum((out["writes"] for out in outs), Counter())
    for memory_id, records in chains.items():
        assert len(records) == 1 + writes[memory_id], f"memory #{memory_id}: records are not the writes"


def _write_concurrently(server: int, token: str, owned: list[list[int]]) -> list[dict]:
    barrier = threading.Barrier(CLIENTS)
    outs = [{"answers": Counter(), "writes": Counter(), "failures": [], "reconnects": 0} for _ in owned]
    threads = [
        threading.Thread(target=_write_for, args=(server, token, ids, i, barrier, out), daemon=True)
        for i, (ids, out) in enumerate(zip(owned, outs, strict=True))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=SECONDS + 3 * TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a client is still waiting"
    return outs


# ----- the retry of a whole unit of work (models/db.py, `retrying`) -----

postgresql_only = pytest.mark.skipif(
    os.environ.get("TEST_DATABASE", "sqlite") != "postgresql",
    reason="SQLite has one writer at a time: no deadlock, no serialization failure",
)


def _abort(sqlstate: str) -> None:
    """Have PostgreSQL itself abort the transaction with this SQLSTATE."""
    db.session.execute(
        sa.text(f"DO $$ BEGIN RAISE EXCEPTION 'injected' USING ERRCODE = '{sqlstate}'; END $$")
    )


@postgresql_only
def test_a_unit_of_work_chosen_as_a_deadlock_victim_is_run_again_whole(app, make_agent):
    first, second = make_agent().id, make_agent().id
    db.session.close()
    barrier = threading.Barrier(2)
    attempts = Counter()

    def write(name: str, column: str, order: tuple[int, int]) -> str:
        def unit() -> str:
            attempts[name] += 1
            with atomic():
                for n, agent_id in enumerate(order):
                    db.session.execute(
                        sa.update(Agent.__table__).where(Agent.id == agent_id).values({column: name})
                    )
                    if n == 0 and attempts[name] == 1:
                        barrier.wait(timeout=TIMEOUT)  # each holds one row and wants the other's
            return name

        with app.app_context():
            return retrying(unit)

    results: dict[str, object] = {}

    def run(*args) -> None:
        try:
            results[args[0]] = write(*args)
        except Exception as error:  # noqa: BLE001 - asserted below
            results[args[0]] = error

    threads = [
        threading.Thread(target=run, args=("one", "model_id", (first, second))),
        threading.Thread(target=run, args=("two", "base_url", (second, first))),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=2 * TIMEOUT)
    assert results == {"one": "one", "two": "two"}
    assert sorted(attempts.values()) == [1, 2]  # the victim ran once more, whole
    rows = db.session.execute(sa.select(Agent.model_id, Agent.base_url).where(Agent.id.in_([first, second])))
    assert set(rows) == {("one", "two")}


@postgresql_only
@pytest.mark.parametrize("sqlstate", ["40P01", "40001"])
def test_a_unit_of_work_is_run_again_a_bounded_number_of_times(app, sqlstate):
    attempts = []

    def unit() -> None:
        attempts.append(1)
        with atomic():
            _abort(sqlstate)

    with pytest.raises(sa.exc.OperationalError):
        retrying(unit)
    assert len(attempts) == 1 + MAX_RETRIES


@postgresql_only
def test_a_unit_of_work_that_committed_before_the_abort_is_not_run_again(app, make_agent):
    agent_id = make_agent().id
    attempts = []

    def unit() -> None:
        attempts.append(1)
        with atomic():
            db.session.execute(sa.update(Agent.__table__).where(Agent.id == agent_id).values(model_id="kept"))
        with atomic():
            _abort("40P01")

    with pytest.raises(sa.exc.OperationalError):
        retrying(unit)
    assert len(attempts) == 1  # a second run would apply the first unit twice


@postgresql_only
def test_an_api_write_the_database_aborts_once_is_applied_once(app, client, make_agent, make_memory):
    agent = make_agent()
    token = agent.issue_token()
    db.session.commit()
    agent_id = agent.id
    memory_id = make_memory(agent_id, "Likes rainy mornings", category="profile").id
    # The first UPDATE of the memory is aborted as a deadlock's victim would be; the sequence counts
    # outside every transaction, so the retry sees that it already failed once.
    create = [
        "CREATE SEQUENCE test_fault_once",
        "CREATE FUNCTION test_fault_once() RETURNS trigger AS $$ BEGIN "
        "IF nextval('test_fault_once') = 1 THEN RAISE EXCEPTION 'injected' USING ERRCODE = '40P01'; "
        "END IF; RETURN NEW; END $$ LANGUAGE plpgsql",
        "CREATE TRIGGER test_fault_once BEFORE UPDATE ON agent_memories "
        "FOR EACH ROW EXECUTE FUNCTION test_fault_once()",
    ]
    for statement in create:
        db.session.execute(sa.text(statement))
    db.session.commit()
    try:
        response = client.patch(
            f"/api/v1/memory/{memory_id}",
            json={"content": "Likes rainy evenings"},
            headers={"Authorization": f"Bearer {token}"},
        )
    finally:  # PostgreSQL's test database is shared by the whole run
        db.session.rollback()
        for statement in (
            "DROP TRIGGER test_fault_once ON agent_memories",
            "DROP FUNCTION test_fault_once()",
            "DROP SEQUENCE test_fault_once",
        ):
            db.session.execute(sa.text(statement))
        db.session.commit()
    assert response.status_code == 200, response.get_json()
    db.session.close()
    records = assert_audit_chains(agent_id)[memory_id]
    assert [r["action"] for r in records] == ["create", "update"]


@postgresql_only
def test_a_conflict_left_after_the_retries_is_not_reported_as_the_database_unavailable(app, client):
    def conflicted():
        _abort("40P01")

    app.add_url_rule("/api/test-conflict", "test_conflict", conflicted)
    response = client.get("/api/test-conflict")
    assert response.status_code == 503
    assert response.get_json()["error"] == "write_conflict"
    assert response.headers["Retry-After"] == "1"
