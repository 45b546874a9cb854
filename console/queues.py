"""One Redis connection and the named RQ queues, built by the app factory and passed explicitly."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import redis
from flask import Flask, current_app
from rq import Queue

from . import embedded_redis

LOCAL_REDIS = "redis://127.0.0.1:6379/0"
# Queues are named by purpose so they scale separately.
QUEUE_TIMEOUTS = {"default": 300, "llm": 1800, "maintenance": 3600}
FAILURE_TTL = 7 * 24 * 3600


class RQ:
    """Holds the connection and queues for one app. The connection is opened lazily, on first use."""

    def __init__(self, app: Flask) -> None:
        self._configured_url = app.config.get("REDIS_URL")
        self._embedded_dir = app.config.get("EMBEDDED_REDIS_DIR") or os.path.join(app.instance_path, "redis")
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
            self.url = self._resolve_url()
            self._connection = redis.Redis.from_url(self.url)
        return self._connection

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
        """Enqueue an imported job function with an explicit queue, timeout and failure TTL."""
        kwargs.setdefault("job_timeout", QUEUE_TIMEOUTS.get(queue, 300))
        kwargs.setdefault("failure_ttl", FAILURE_TTL)
        return self.queue(queue).enqueue(func, *args, **kwargs)


def init_app(app: Flask) -> None:
    app.extensions["rq"] = RQ(app)


def get_rq() -> RQ:
    return current_app.extensions["rq"]
