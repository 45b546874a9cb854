"""DATABASE_REPLICA_URL: console pages and memory.query read a streaming replica; no write path ever does.

PostgreSQL only: the replica is a second local cluster following the suite's PostgreSQL by streaming
replication (`scripts/replica.sh`, run by `scripts/test.sh`; `TEST_REPLICA_PORT`, default 5433). To
tell the two apart, the tests pause the replica's WAL replay: whatever is written afterwards exists on
the primary only, so a read that finds it came from the primary and a read that misses it came from
the replica. Replay is always resumed, and every wait has a deadline.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from console import create_app
from models import AgentMemory, db
from models.changes.mutations import create_memory, set_constitutional, update_memory
from models.db import REPLICA, read_from_replica
from tests.audit_chain import assert_audit_chain
from tests.browser.support import make_admin, post, signed_in
from tests.conftest import DB_KIND

pytestmark = pytest.mark.skipif(DB_KIND != "postgresql", reason="streaming replication is PostgreSQL's")
REPLICA_PORT = os.environ.get("TEST_REPLICA_PORT", "5433")


def _replica_url(primary_url: str) -> str:
    url = sa.make_url(primary_url)
    return url.set(port=int(REPLICA_PORT)).render_as_string(hide_password=False)


def _caught_up(primary: sa.Engine, replica: sa.Engine, seconds: float = 20) -> None:
    with primary.connect() as conn:
        lsn = conn.execute(sa.text("SELECT pg_current_wal_lsn()")).scalar_one()
    deadline = time.monotonic() + seconds
    with replica.connect() as conn:
        while time.monotonic() < deadline:
            if conn.execute(
                sa.text("SELECT pg_last_wal_replay_lsn() >= CAST(:lsn AS pg_lsn)"), {"lsn": lsn}
            ).scalar():
                return
            time.sleep(0.05)
    raise AssertionError(f"the replica did not replay up to {lsn} within {seconds} s")


def _replaying(primary_url: str) -> None:
    """Resume a replay left paused — by a test process killed before its teardown, or another suite sharing
    this replica — and wait until the replica has caught up (this test's database included)."""
    server_db = {"database": "postgres"}
    primary = sa.create_engine(sa.make_url(primary_url).set(**server_db))
    replica = sa.create_engine(sa.make_url(_replica_url(primary_url)).set(**server_db))
    try:
        with replica.connect() as conn:
            conn.execute(sa.text("SELECT pg_wal_replay_resume()"))
        _caught_up(primary, replica)
    finally:
        primary.dispose()
        replica.dispose()


@pytest.fixture
def replica_app(database_url, redis_url, tmp_path) -> Iterator:
    _replaying(database_url)
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": database_url,
            "DATABASE_REPLICA_URL": _replica_url(database_url),
            "REDIS_URL": redis_url,
            "SECRET_KEY": "test-secret",
            "EMBEDDED_REDIS_DIR": str(tmp_path / "redis-unused"),
        }
    )
    with app.app_context():
        yield app
        db.session.remove()
        for engine in db.engines.values():
            engine.dispose()


class Replay:
    """The replica's WAL replay: pause() freezes it (caught up first), so what is written afterwards is
    on the primary only; resume() lets it catch up again."""

    def __init__(self) -> None:
        self.primary, self.replica = db.engines[None], db.engines[REPLICA]

    def _call(self, function: str) -> None:
        with self.replica.connect() as conn:
            conn.execute(sa.text(f"SELECT {function}()"))

    def pause(self) -> None:
        _caught_up(self.primary, self.replica)
        self._call("pg_wal_replay_pause")

    def resume(self) -> None:
        self._call("pg_wal_replay_resume")
        _caught_up(self.primary, self.replica)


@pytest.fixture
def replay(replica_app) -> Iterator[Replay]:
    replay = Replay()
    try:
        yield replay
    finally:
        replay.resume()


@pytest.fixture
def replica_statements(replica_app) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)

    engine = db.engines[REPLICA]
    sa.event.listen(engine, "before_cursor_execute", record)
    yield seen
    sa.event.remove(engine, "before_cursor_execute", record)


def _agent(name: str):
    from models import Agent

    agent = Agent(name=name)
    token = agent.issue_token()
    db.session.add(agent)
    db.session.commit()
    return agent, token


def test_console_pages_read_the_replica(replica_app, replay, replica_statements):
    make_admin()
    seen_id = _agent("seen-before-the-pause")[0].id
    replay.pause()
    web = signed_in(replica_app)  # signing in reads and writes the primary (users are primary-only)
    late_id = _agent("created-while-replay-is-paused")[0].id

    page = web.get("/")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "created-while-replay-is-paused" not in html  # the replica has not seen it yet
    assert replica_statements, "the dashboard sent no statement to the replica"
    assert not any("users" in s.split("FROM", 1)[-1].split("WHERE", 1)[0] for s in replica_statements)
    # The agent's own page is a 404 on the replica, though the primary has the row: the read went there.
    assert web.get(f"/agents/{late_id}").status_code == 404
    assert web.get(f"/agents/{seen_id}").status_code == 200


def test_memory_query_reads_the_replica_and_authenticates_on_the_primary(
    replica_app, replay, replica_statements
):
    replay.pause()
    agent, token = _agent("querier")  # created while paused: only the primary can authenticate this token
    agent_id = agent.id
    create_memory(agent_id, "The launch window opens in March", actor="agent", memory_type="semantic",
                  category="profile")  # fmt: skip
    client = replica_app.test_client()

    def ask():
        answer = client.post(
            "/api/v1/memory/query",
            json={"query": "launch window March"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert answer.status_code == 200, answer.get_json()
        return answer.get_json()["results"]

    # Authentication read the primary (the agent exists only there), the search read the replica
    # (where neither the agent nor its memory exist yet): an empty answer, not a 401 and not a hit.
    assert ask() == []
    assert any("agent_memories" in s for s in replica_statements)
    replay.resume()
    assert ["The launch window opens in March" in r["text"] for r in ask()] == [True]


def test_no_write_path_reads_the_replica(replica_app, replay, replica_statements):
    """Writes, and every read inside atomic() (the mutation path's locked, fresh reads), use the primary."""
    replay.pause()
    agent, token = _agent("writer")
    agent_id = agent.id
    memory_id = create_memory(agent_id, "Prefers tea in the morning", actor="agent").id
    read_from_replica()  # as a console page or memory.query would have: plain reads may go to the replica
    db.session.expunge_all()
    assert db.session.get(AgentMemory, memory_id) is None  # a plain read: the replica, which lacks the row

    update_memory(agent_id, memory_id, actor="agent", content="Prefers green tea in the morning")
    update_memory(agent_id, memory_id, actor="agent", importance=4)
    set_constitutional(agent_id, memory_id, True, actor="admin:1")
    db.session.remove()
    assert_audit_chain(agent_id, memory_id)  # each before is the previous after: all read on the primary
    writes = [
        s for s in replica_statements if s.lstrip().split()[0].upper() in ("INSERT", "UPDATE", "DELETE")
    ]
    assert writes == []
    assert not any("FOR UPDATE" in s.upper() for s in replica_statements)


def test_console_writes_and_api_writes_never_touch_the_replica(replica_app, replay, replica_statements):
    replay.pause()
    make_admin()
    web = signed_in(replica_app)
    agent, token = _agent("api-writer")
    agent_id = agent.id
    created = replica_app.test_client().post(
        "/api/v1/memory",
        json={"content": "The user lives in Lisbon.", "memory_type": "semantic", "category": "profile"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert created.status_code == 201, created.get_json()
    memory_id = created.get_json()["memory"]["id"]
    patched = replica_app.test_client().patch(
        f"/api/v1/memory/{memory_id}",
        json={"content": "The user lives in Porto."},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert patched.status_code == 200, patched.get_json()
    replica_statements.clear()
    response = post(web, f"/agents/{agent_id}/memories/{memory_id}/constitutional", {"value": "true"})
    assert response.status_code < 400, response.status_code
    assert replica_statements == []
    assert_audit_chain(agent_id, memory_id)


def test_readyz_checks_the_replica(replica_app):
    body = replica_app.test_client().get("/readyz").get_json()
    assert body["checks"]["replica"] == "ok"
