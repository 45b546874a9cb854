"""A running console for the integration tests: gunicorn on loopback, once per module, on the suite's
database (a copy of the migrated SQLite template, or the PostgreSQL test database, emptied after the
module as tests/conftest.py empties it after each test). Agents are made in-process with their own
tokens; every client then talks real HTTP."""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from console import create_app
from models import Agent, db
from tests.conftest import DB_KIND, TABLES

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")
START_TIMEOUT = 30


@dataclass
class LiveConsole:
    base_url: str
    app: object  # the Flask app on the same database, for set-up and checks in-process

    def agent(self, role: str | None = "supervisor") -> tuple[int, str]:
        """A new agent: (id, API token)."""
        with self.app.app_context():
            agent = Agent(name=f"integration-{uuid.uuid4().hex[:8]}", role=role)
            token = agent.issue_token()
            db.session.add(agent)
            db.session.commit()
            return agent.id, token


def _status(port: int, path: str) -> int | None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    except OSError:
        return None
    finally:
        conn.close()


@pytest.fixture(scope="module")
def module_database(database_template, tmp_path_factory) -> Iterator[str]:
    if DB_KIND == "sqlite":
        path = tmp_path_factory.mktemp("integration-db") / "live.sqlite"
        shutil.copy(database_template, path)
        yield f"sqlite:///{path}"
        return
    yield database_template
    engine = sa.create_engine(database_template)
    with engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL session_replication_role = replica"))
        conn.execute(sa.text(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE"))
    engine.dispose()


@pytest.fixture(scope="module")
def live_console(module_database, redis_url, tmp_path_factory) -> Iterator[LiveConsole]:
    """gunicorn (2 workers x 4 threads) on 127.0.0.1 and a free port, stopped in any case. The
    listening socket is bound here and inherited (fd://), so no other process can take the port."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    env = {
        **os.environ,
        "DATABASE_URL": module_database,
        "REDIS_URL": redis_url,
        "SECRET_KEY": "test-secret",
        # The tests and the benchmark send hundreds of requests a minute from one token.
        "API_RATE_LIMIT": "100000/minute",
    }
    cmd = [str(GUNICORN), "-w", "2", "-k", "gthread", "--threads", "4", "--preload", "--timeout", "30",
           "--graceful-timeout", "2", "-b", f"fd://{listener.fileno()}", "--log-level", "warning", "wsgi:app"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, pass_fds=(listener.fileno(),), start_new_session=True)
    listener.close()
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": module_database,
            "REDIS_URL": redis_url,
            "SECRET_KEY": "test-secret",
            "EMBEDDED_REDIS_DIR": str(tmp_path_factory.mktemp("redis-unused")),
        }
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while _status(port, "/healthz") != 200:
            assert proc.poll() is None, f"gunicorn exited with status {proc.returncode}"
            assert time.monotonic() < deadline, "gunicorn did not come up"
            time.sleep(0.1)
        yield LiveConsole(base_url=f"http://127.0.0.1:{port}", app=app)
    finally:
        with app.app_context():
            db.session.remove()
            db.engine.dispose()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
