"""Redis through Sentinel: the queue connection follows a failover (docs/how-to/scaling-out.md, "Redis through
Sentinel").

Real processes on loopback, in a temporary directory: a Redis master, a replica of it, and one
Sentinel (quorum 1) watching them, all started from the machine's own `redis-server` (Sentinel is
`redis-server --sentinel`). The master is killed with SIGKILL; the Sentinel promotes the replica;
the app's connection, built from `REDIS_SENTINELS`, enqueues and runs jobs before and after with no
restart. Bounded: every wait has a deadline, and the processes are killed at the end.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from rq import SimpleWorker
from rq.job import JobStatus

from console import create_app
from infra.queues import get_rq, parse_sentinels
from models import db
from tests.job_fixtures import echo

MASTER = "memconsole-test"
DOWN_AFTER_MS = 500


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait(predicate, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except (redis.RedisError, OSError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


def _redis_server() -> str:
    found = shutil.which("redis-server")
    if found is None:
        raise RuntimeError("redis-server is not on PATH (scripts/services.sh needs it too)")
    return found


class Cluster:
    """A master, a replica and a Sentinel, each a real redis-server process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ports = {"a": _free_port(), "b": _free_port(), "sentinel": _free_port()}
        self.processes: dict[str, subprocess.Popen] = {}
        self.logs: list = []

    def _start(self, name: str, *args: str) -> None:
        log = open(self.root / f"{name}.log", "wb")  # noqa: SIM115 - closed in stop()
        self.logs.append(log)
        self.processes[name] = subprocess.Popen(
            [_redis_server(), *args], stdout=log, stderr=subprocess.STDOUT
        )

    def start(self) -> None:
        common = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        a, b = self.ports["a"], self.ports["b"]
        self._start("a", "--port", str(a), "--dir", str(self.root), *common)
        _wait(lambda: redis.Redis(port=a).ping(), 10, "the master")
        self._start(
            "b", "--port", str(b), "--dir", str(self.root), "--replicaof", "127.0.0.1", str(a), *common
        )
        _wait(
            lambda: redis.Redis(port=b).info("replication")["master_link_status"] == "up", 10, "the replica"
        )
        conf = self.root / "sentinel.conf"
        conf.write_text(
            f"port {self.ports['sentinel']}\nbind 127.0.0.1\ndir {self.root}\n"
            f"sentinel monitor {MASTER} 127.0.0.1 {a} 1\n"
            f"sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n"
            f"sentinel failover-timeout {MASTER} 5000\n"
        )
        self._start("sentinel", str(conf), "--sentinel")
        sentinel = redis.Redis(port=self.ports["sentinel"])
        _wait(
            lambda: sentinel.sentinel_master(MASTER)["num-slaves"] >= 1, 15, "the Sentinel to see the replica"
        )

    def master_port(self) -> int:
        host, port = redis.Redis(port=self.ports["sentinel"]).sentinel_get_master_addr_by_name(MASTER)
        return int(port)

    def kill(self, name: str) -> None:
        process = self.processes[name]
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        for log in self.logs:
            log.close()


@pytest.fixture
def cluster(tmp_path) -> Iterator[Cluster]:
    cluster = Cluster(tmp_path)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def sentinel_app(cluster, database_url, tmp_path):
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": database_url,
            "SECRET_KEY": "test",
            "REDIS_SENTINELS": f"127.0.0.1:{cluster.ports['sentinel']}",
            "REDIS_SENTINEL_MASTER": MASTER,
            "EMBEDDED_REDIS_DIR": str(tmp_path / "redis-unused"),
        }
    )
    with app.app_context():
        yield app
        db.session.remove()
        db.engine.dispose()


def _enqueue_and_run(text: str) -> None:
    rq = get_rq()
    job = rq.enqueue(echo, text, queue="default")
    SimpleWorker([rq.queue("default")], connection=rq.connection).work(burst=True)
    job.refresh()
    assert job.get_status() == JobStatus.FINISHED
    assert job.return_value() == text


def test_the_queue_connection_follows_a_sentinel_failover(cluster, sentinel_app):
    first = cluster.master_port()
    assert first == cluster.ports["a"]
    _enqueue_and_run("before the failover")

    cluster.kill("a")
    promoted = _wait(lambda: cluster.master_port() != first and cluster.master_port(), 30, "a failover")
    assert promoted == cluster.ports["b"]

    # The same app, the same connection object: its pool asks the Sentinel again and finds the new master.
    _enqueue_and_run("after the failover")
    assert get_rq().connection.connection_pool.get_master_address()[1] == promoted


def test_a_command_sent_during_the_failover_waits_for_the_new_master(cluster, sentinel_app):
    conn = get_rq().connection
    conn.set("memconsole:probe", "1")
    assert conn.execute_command("WAIT", 1, 5000) == 1  # the replica has it before the master dies
    cluster.kill("a")
    # Issued at once, before the Sentinel has even noticed: retried with backoff until the replica is promoted.
    started = time.monotonic()
    assert conn.incr("memconsole:probe") == 2  # the replica had the value: nothing written before was lost
    assert time.monotonic() - started >= DOWN_AFTER_MS / 1000 / 2


def test_readyz_names_redis_through_sentinel(cluster, sentinel_app):
    response = sentinel_app.test_client().get("/readyz")
    assert response.status_code == 200, response.get_json()


@pytest.mark.parametrize("value", ["127.0.0.1", "host:port", ":26379"])
def test_a_malformed_sentinel_list_is_refused_naming_the_setting(value):
    with pytest.raises(ValueError, match="REDIS_SENTINELS"):
        parse_sentinels(value)


def test_sentinel_lists_parse_hosts_and_ipv6():
    assert parse_sentinels(" 127.0.0.1:26379,[::1]:26380 ,") == [("127.0.0.1", 26379), ("::1", 26380)]
    assert parse_sentinels(None) == []


def test_the_sign_in_limit_counts_in_the_master_the_sentinel_names(cluster, sentinel_app):
    from tests.browser.support import csrf_from

    client = sentinel_app.test_client()
    token = csrf_from(client.get("/login").text)
    refused = client.post(
        "/login", data={"email": "nobody@example.com", "password": "wrong", "csrf_token": token}
    )
    assert refused.status_code == 401
    master = redis.Redis(port=cluster.master_port())
    prefix = sentinel_app.config["RATELIMIT_KEY_PREFIX"]
    assert [key for key in master.scan_iter(f"*{prefix}*")], (
        "the failed sign-in was not counted in the master"
    )
