"""Browser fixtures: the test app on a real HTTP server, Debian's Chromium through Playwright (sync API),
a signed-in page, and a real RQ worker process on the test database and Redis."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from models import db

from .live import LiveServer, chromium, sign_in
from .support import ADMIN_EMAIL, ADMIN_PASSWORD, make_admin

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def browser() -> Iterator:
    with chromium() as browser:
        yield browser


@pytest.fixture
def live(app) -> Iterator[LiveServer]:
    db.session.commit()  # the server's threads open their own sessions: nothing may be left uncommitted
    with LiveServer(app) as server:
        yield server


@pytest.fixture
def admin(app):
    return make_admin()


@pytest.fixture
def page(browser, live, admin) -> Iterator:
    """A fresh browser context, signed in as the admin."""
    context = browser.new_context(base_url=live.url, viewport={"width": 1400, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    sign_in(page, live.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    yield page
    context.close()


@pytest.fixture
def start_worker(app, redis_conn, tmp_path) -> Iterator:
    """Start real `flask rq worker llm` processes on this test's database and Redis (offline refiner)."""
    rq = app.extensions["rq"]
    rq.connection.ping()
    env = {
        **os.environ,
        "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "REDIS_URL": rq.url,
        "SECRET_KEY": "test",
        "LLM_OFFLINE": "1",
    }
    started: list[tuple[subprocess.Popen, object]] = []

    def start() -> subprocess.Popen:
        log = open(tmp_path / f"worker{len(started)}.log", "wb")  # noqa: SIM115
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "flask",
                "--app",
                "wsgi",
                "rq",
                "worker",
                "interactive",
                "llm",
                "--name",
                f"browser-{os.getpid()}-{len(started)}",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        started.append((process, log))
        return process

    yield start
    for process, log in started:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@pytest.fixture
def worker(start_worker) -> subprocess.Popen:
    return start_worker()
