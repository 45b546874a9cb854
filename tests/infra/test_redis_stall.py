"""A frozen Redis (SIGSTOP: it accepts connections and never answers) costs a request at most about
REDIS_TIMEOUT_SECONDS: reads go on (the rate limiter counts in memory meanwhile), a write that only hopes
to queue follow-up work is kept, a request that must queue says the queue is unavailable, and any other
Redis failure is named as Redis's, not the queue's. The Redis here is our own process on a free loopback
port; a watchdog resumes it after a few seconds whatever happens, and it is stopped after the test."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import redis

from console import create_app
from models import Agent, db
from tests.api_support import bearer

TIMEOUT = 1.0  # REDIS_TIMEOUT_SECONDS for these apps
BOUND = 4.0  # well under the 10 s a call used to wait, and under the watchdog's resume
FROZEN_AT_MOST = 8.0  # the watchdog resumes Redis after this long


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StallableRedis:
    def __init__(self, tmp_path) -> None:
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        server = shutil.which("redis-server") or os.path.join(
            os.path.dirname(os.sys.executable), "redis-server"
        )
        self.process = subprocess.Popen(
            [server, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(tmp_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while True:
            try:
                if redis.Redis.from_url(self.url, socket_timeout=0.5).ping():
                    return
            except redis.RedisError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    @contextmanager
    def frozen(self) -> Iterator[None]:
        """Redis stopped (SIGSTOP) inside the block; resumed at its end, or by the watchdog, whichever first."""
        os.kill(self.process.pid, signal.SIGSTOP)
        watchdog = threading.Timer(FROZEN_AT_MOST, os.kill, (self.process.pid, signal.SIGCONT))
        watchdog.start()
        try:
            yield
        finally:
            watchdog.cancel()
            os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def stallable(tmp_path) -> Iterator[StallableRedis]:
    server = StallableRedis(tmp_path)
    try:
        yield server
    finally:
        server.stop()


def _app(database_url: str, redis_url: str, tmp_path, **extra):
    return create_app(
        {
            "TESTING": True,
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "SECRET_KEY": "test-secret",
            "EMBEDDED_REDIS_DIR": str(tmp_path / "redis-unused"),
            "REDIS_TIMEOUT_SECONDS": TIMEOUT,
            "MULTI_FACT_EXTRACTION": True,
            **extra,
        }
    )


@contextmanager
def _running(app) -> Iterator[tuple[object, dict]]:
    with app.app_context():
        agent = Agent(name="stall", role="executor")
        agent.issue_token()
        db.session.add(agent)
        db.session.commit()
        try:
            yield app.test_client(), bearer(agent)
        finally:
            db.session.remove()
            db.engine.dispose()


def _timed(call):
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


MEMORY = {"content": "The user files taxes in April.", "memory_type": "semantic", "category": "tasks"}
QUERY = {"query": "when does the user file taxes", "top_k": 5}
TURN = {"turn": "We went through the launch plan in detail, owners, dates and the open risks. " * 6}


def test_reads_and_writes_answer_within_the_timeout_while_redis_is_frozen(database_url, stallable, tmp_path):
    with _running(_app(database_url, stallable.url, tmp_path)) as (client, headers):
        assert client.post("/api/v1/memory", json=MEMORY, headers=headers).status_code == 201  # Redis warm
        with stallable.frozen():
            query, took = _timed(lambda: client.post("/api/v1/memory/query", json=QUERY, headers=headers))
            assert query.status_code == 200 and took < BOUND, (query.status_code, took)
            again, took = _timed(lambda: client.post("/api/v1/memory/query", json=QUERY, headers=headers))
            assert again.status_code == 200 and took < TIMEOUT, took  # the limiter counts in memory now
            # A write keeps its memory; the linking it would queue is left to the catch-up job.
            created, took = _timed(lambda: client.post("/api/v1/memory", json=MEMORY, headers=headers))
            assert created.status_code == 201 and took < BOUND, (created.status_code, took)


def test_a_call_that_must_queue_says_the_queue_is_unavailable_within_the_timeout(
    database_url, stallable, tmp_path
):
    with _running(_app(database_url, stallable.url, tmp_path)) as (client, headers):
        with stallable.frozen():
            queued, took = _timed(lambda: client.post("/api/v1/memory/extract", json=TURN, headers=headers))
        assert queued.status_code == 503 and queued.json["error"] == "queue_unavailable", queued.json
        assert took < BOUND + TIMEOUT, took


def test_a_redis_failure_outside_the_queue_is_named_as_redis(database_url, stallable, tmp_path):
    """With the in-memory fallback switched off, the rate limiter's failure is the request's: a 503 that
    names Redis, not the job queue, for a call that queues nothing."""
    app = _app(database_url, stallable.url, tmp_path, RATELIMIT_IN_MEMORY_FALLBACK_ENABLED=False)
    with _running(app) as (client, headers):
        with stallable.frozen():
            query, took = _timed(lambda: client.post("/api/v1/memory/query", json=QUERY, headers=headers))
        assert query.status_code == 503 and query.json["error"] == "redis_unavailable", query.json
        assert "queue" not in query.json["message"]
        assert took < BOUND, took


def test_readiness_reports_a_frozen_redis_within_the_timeout(database_url, stallable, tmp_path):
    with _running(_app(database_url, stallable.url, tmp_path)) as (client, _):
        with stallable.frozen():
            ready, took = _timed(lambda: client.get("/readyz"))
        assert ready.status_code == 503 and took < BOUND, (ready.status_code, took)
