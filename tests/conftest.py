"""Fixtures: one suite, two databases.

TEST_DATABASE=sqlite (default) or postgresql picks the database; TEST_REDIS=embedded (default)
or a redis:// URL picks the Redis. CI runs the suite once each way (scripts/test.sh). Tests that
need a server never skip silently: if the chosen server does not answer, the run fails.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import sqlalchemy as sa
from flask import Flask

from console import create_app
from models import Agent, db
from models.changes.mutations import create_memory

DB_KIND = os.environ.get("TEST_DATABASE", "sqlite")
PG_ADMIN_URL = os.environ.get("TEST_POSTGRES_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
# One database per pytest process, so concurrent runs on one server never share state.
PG_DB_NAME = os.environ.get("TEST_POSTGRES_DB", f"memconsole_test_{os.getpid()}")
REDIS_CHOICE = os.environ.get("TEST_REDIS", "embedded")
TABLES = ("audit_logs", "audit_contents", "agent_memories", "refinement_sessions", "users", "agents")


@contextmanager
def scratch_database(suffix: str) -> Iterator[str]:
    """PostgreSQL: an empty database of its own (this run's name plus `suffix`), for a test that migrates
    step by step; its URL, and it is dropped afterwards."""
    name = f"{PG_DB_NAME}_{suffix}"
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _migrate(url: str) -> None:
    """Build the schema the way production does: the Alembic revisions, not create_all()."""
    from flask_migrate import upgrade

    app = create_app({"TESTING": True, "DATABASE_URL": url, "SECRET_KEY": "test"})
    with app.app_context():
        upgrade()
        db.engine.dispose()


@pytest.fixture(scope="session")
def database_template(tmp_path_factory) -> Iterator[str]:
    """SQLite: a migrated template file copied per test. PostgreSQL: a migrated database, truncated per test."""
    if DB_KIND == "sqlite":
        path = tmp_path_factory.mktemp("db") / "template.sqlite"
        _migrate(f"sqlite:///{path}")
        yield str(path)
        return
    if DB_KIND != "postgresql":
        raise pytest.UsageError(f"TEST_DATABASE must be sqlite or postgresql, not {DB_KIND!r}")
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{PG_DB_NAME}" WITH (FORCE)'))
        conn.execute(sa.text(f'CREATE DATABASE "{PG_DB_NAME}"'))
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + PG_DB_NAME
    _migrate(url)
    yield url
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{PG_DB_NAME}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture
def database_url(database_template, tmp_path) -> Iterator[str]:
    if DB_KIND == "sqlite":
        path = tmp_path / "test.sqlite"
        shutil.copy(database_template, path)
        yield f"sqlite:///{path}"
        return
    yield database_template
    engine = sa.create_engine(database_template)
    with engine.begin() as conn:
        # Triggers guard audit_logs against TRUNCATE; a superuser test session may switch them off.
        conn.execute(sa.text("SET LOCAL session_replication_role = replica"))
        conn.execute(sa.text(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE"))
    engine.dispose()
    # The same address, emptied: word figures cached of it (per process, for term_stats.CACHE_SECONDS)
    # describe rows that are gone.
    from models.retrieval import term_stats

    term_stats.forget()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory) -> str:
    if REDIS_CHOICE == "embedded":
        from infra import embedded_redis

        directory = str(tmp_path_factory.mktemp("redis"))
        url = embedded_redis.ensure_running(directory)
        yield url
        embedded_redis.stop(directory)
        return
    yield REDIS_CHOICE


@pytest.fixture
def app(database_url, redis_url, tmp_path) -> Iterator[Flask]:
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "SECRET_KEY": "test-secret",
            "EMBEDDED_REDIS_DIR": str(tmp_path / "redis-unused"),
        }
    )
    with app.app_context():
        yield app
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def redis_conn(app):
    """Real Redis, flushed before and after the test (rq's RQTestCase does the same)."""
    conn = app.extensions["rq"].connection
    conn.flushdb()
    yield conn
    conn.flushdb()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def llm():
    """The scripted OpenAI-compatible server on loopback (tests/scripted_llm.py)."""
    from tests.scripted_llm import ScriptedLLM

    server = ScriptedLLM().start()
    yield server
    server.stop()


@pytest.fixture
def make_agent(app):
    """Create an agent (unique name by default); returns the Agent row."""

    def make(name: str | None = None, **fields) -> Agent:
        agent = Agent(name=name or f"agent-{uuid.uuid4().hex[:8]}", **fields)
        agent.issue_token()
        db.session.add(agent)
        db.session.commit()
        return agent

    return make


@pytest.fixture
def make_memory(app):
    """Create a memory through the mutation path (actor admin:test unless given)."""

    def make(agent: Agent | int, content: str, **fields):
        agent_id = agent if isinstance(agent, int) else agent.id
        fields.setdefault("actor", "admin:test")
        return create_memory(agent_id, content, **fields)

    return make


@pytest.fixture
def admin(app):
    """A site admin (tests/browser/support.py's credentials)."""
    from tests.browser.support import make_admin

    return make_admin()


@pytest.fixture
def web(app, admin, redis_conn):
    """The console's test client, signed in as `admin`; `web.csrf` holds a token for POSTs."""
    from tests.browser.support import signed_in

    return signed_in(app)


@pytest.fixture
def server(app, redis_url) -> Iterator[int]:
    """gunicorn (2 workers x 8 threads, tests/gunicorn_server.py) on the test's database; the port."""
    from tests.gunicorn_server import serve

    with serve(app.config["SQLALCHEMY_DATABASE_URI"], redis_url) as port:
        yield port
