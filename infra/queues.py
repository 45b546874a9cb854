"""One Redis connection and the named RQ queues, built by the app factory and passed explicitly."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any

import redis
from flask import Flask, current_app
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError, RedisError, TimeoutError
from redis.retry import Retry
from redis.sentinel import Sentinel
from rq import Queue

from infra import embedded_redis

LOCAL_REDIS = "redis://127.0.0.1:6379/0"
# Queues are named by purpose so they scale separately.
# `interactive` carries what an admin asked for just now (a refinement triggered from the console or
# the CLI: the same job as on `llm`, hence the same timeout); workers take it first.
QUEUE_TIMEOUTS = {"interactive": 1800, "default": 300, "llm": 1800, "maintenance": 3600}
FAILURE_TTL = 7 * 24 * 3600
# Retries of one Redis command while Sentinel fails over (backoff 0.1 s doubling to 2 s: about 20 s in all).
SENTINEL_RETRIES = 12
# Text a job needs but must not carry in its arguments (RQ logs a job's description and keeps its arguments
# in the job's record): it waits under a key of its own this long, and the job deletes it when done.
PARKED_PREFIX = "memconsole:parked:"
PARKED_TTL_SECONDS = 24 * 3600


class QueueUnreachable(ConnectionError):
    """Enqueueing failed because Redis did not answer: a request that queues nothing never raises it."""


def describe(func: Callable, args: tuple) -> str:
    """A job's description as RQ logs it and the jobs page could show it: the function and the ids it
    was given, never a text argument (RQ's default quotes every argument)."""
    shown = []
    for arg in args:
        if isinstance(arg, int) and not isinstance(arg, bool):
            shown.append(str(arg))
        elif isinstance(arg, list | tuple) and all(
            isinstance(a, int) and not isinstance(a, bool) for a in arg
        ):
            shown.append("[" + ", ".join(map(str, arg[:10])) + (", ..." if len(arg) > 10 else "") + "]")
        else:
            shown.append("…")
    return f"{func.__module__}.{func.__qualname__}({', '.join(shown)})"


class RQ:
    """Holds the connection and queues for one app. The connection is opened lazily, on first use."""

    def __init__(self, app: Flask) -> None:
        self._configured_url = app.config.get("REDIS_URL")
        self._sentinels = parse_sentinels(app.config.get("REDIS_SENTINELS"))
        self._sentinel_master = app.config.get("REDIS_SENTINEL_MASTER") or "mymaster"
        self._sentinel_db = int(app.config.get("REDIS_SENTINEL_DB") or 0)
        self._embedded_dir = app.config.get("EMBEDDED_REDIS_DIR") or os.path.join(app.instance_path, "redis")
        # Connect and read timeouts on every command: a Redis that stops answering costs a request this long,
        # not a hung worker thread (docs/explanation/security.md).
        self._timeout = float(app.config["REDIS_TIMEOUT_SECONDS"])
        self._names = tuple(app.config["RQ_QUEUES"])
        self._connection: redis.Redis | None = None
        self._queues: dict[str, Queue] = {}
        self.url: str | None = None

    def _resolve_url(self) -> str:
        url = self._configured_url
        if url and url != "embedded":
            return url
        if url is None and embedded_redis._answers(LOCAL_REDIS):
            return LOCAL_REDIS
        return embedded_redis.ensure_running(self._embedded_dir)

    @property
    def connection(self) -> redis.Redis:
        if self._connection is None:
            if self._sentinels:
                self._connection = self._sentinel_connection()
            else:
                self.url = self._resolve_url()
                self._connection = redis.Redis.from_url(
                    self.url, socket_timeout=self._timeout, socket_connect_timeout=self._timeout
                )
        return self._connection

    def _sentinel_connection(self) -> redis.Redis:
        """The current master of `REDIS_SENTINEL_MASTER`, as the Sentinels report it.

        The client's pool asks the Sentinels again whenever a connection to the old master fails, and
        each command is retried with backoff for about as long as a failover takes (`down-after-milliseconds`
        plus the election), so a job enqueued during a failover waits for the new master instead of failing.
        """
        sentinel = Sentinel(
            self._sentinels, socket_timeout=self._timeout, socket_connect_timeout=self._timeout
        )
        self.url = "sentinel://" + ",".join(f"{host}:{port}" for host, port in self._sentinels)
        self.url += f"/{self._sentinel_master}/{self._sentinel_db}"
        return sentinel.master_for(
            self._sentinel_master,
            db=self._sentinel_db,
            socket_timeout=self._timeout,
            socket_connect_timeout=self._timeout,
            retry=Retry(ExponentialBackoff(cap=2.0, base=0.1), SENTINEL_RETRIES),
            retry_on_error=[ConnectionError, TimeoutError],
        )

    def queue(self, name: str) -> Queue:
        if name not in self._names:
            raise KeyError(f"unknown queue {name!r}; queues are {', '.join(self._names)}")
        if name not in self._queues:
            self._queues[name] = Queue(
                name, connection=self.connection, default_timeout=QUEUE_TIMEOUTS.get(name, 300)
            )
        return self._queues[name]

    @property
    def queues(self) -> list[Queue]:
        return [self.queue(name) for name in self._names]

    def enqueue(self, func: Callable, *args: Any, queue: str, **kwargs: Any):
        """Enqueue an imported job function with an explicit queue, timeout, failure TTL and a description
        that names ids only. QueueUnreachable (a redis ConnectionError) when Redis does not answer."""
        kwargs.setdefault("job_timeout", QUEUE_TIMEOUTS.get(queue, 300))
        kwargs.setdefault("failure_ttl", FAILURE_TTL)
        kwargs.setdefault("description", describe(func, args))
        try:
            return self.queue(queue).enqueue(func, *args, **kwargs)
        except (RedisError, OSError) as error:
            raise QueueUnreachable(f"could not queue {func.__qualname__}: {type(error).__name__}") from error

    def park(self, text: str, ttl: int = PARKED_TTL_SECONDS) -> str:
        """Keep `text` for a job under a new key, for `ttl` seconds; the key goes in the job's arguments."""
        key = PARKED_PREFIX + uuid.uuid4().hex
        self.connection.set(key, text.encode("utf-8", "surrogatepass"), ex=ttl)
        return key

    def parked(self, key: str) -> str | None:
        """The text kept under `key`, or None when it expired or was never parked."""
        if not isinstance(key, str) or not key.startswith(PARKED_PREFIX):
            return None
        value = self.connection.get(key)
        if isinstance(value, bytes):
            return value.decode("utf-8", "surrogatepass")
        return value

    def unpark(self, key: str) -> None:
        if isinstance(key, str) and key.startswith(PARKED_PREFIX):
            self.connection.delete(key)


def parse_sentinels(value: str | None) -> list[tuple[str, int]]:
    """`REDIS_SENTINELS`: "host:port,host:port" (IPv6 hosts in brackets, "[::1]:26379")."""
    sentinels = []
    for item in (value or "").split(","):
        item = item.strip()
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"REDIS_SENTINELS: {item!r} is not host:port")
        sentinels.append((host.strip("[]"), int(port)))
    return sentinels


def init_app(app: Flask) -> None:
    app.extensions["rq"] = RQ(app)


def get_rq() -> RQ:
    return current_app.extensions["rq"]
