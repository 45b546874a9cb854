"""Liveness and readiness (docs/explanation/security.md; docs/reference/configuration.md).

`/healthz` says the process answers, and nothing more: a load balancer that restarts on it must not
restart every web process because the database is down. `/readyz` asks the database and Redis, each
with a short timeout, and answers 503 naming what is down, so traffic can be held back until they
return. It also lists `warnings`, without failing: when the history tables are partitioned (PostgreSQL),
a default partition holding rows or a month without its partition — writes still succeed; with the local
embedder, a process holding the model on PyTorch, or exports whose checks no process has recorded
(`memconsole embeddings prepare`) — questions are still answered, at a cost in memory and a slow first one.
"""

from __future__ import annotations

import logging

from flask import Flask, jsonify
from redis.exceptions import RedisError
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from infra.queues import get_rq
from jobs.embeddings import readiness_warnings as embedder_warnings
from models.db import REPLICA, utcnow
from models.history.partitions import readiness_warnings

from .extensions import db

log = logging.getLogger(__name__)


def _database_ok(bind: str | None = None) -> bool:
    try:
        with db.engines[bind].connect() as conn:
            conn.execute(text("SELECT 1"))
        return True
    except SQLAlchemyError as err:
        log.warning("readyz: database unavailable (%s)", type(err).__name__)
        return False


def _redis_ok() -> bool:
    try:
        return bool(get_rq().connection.ping())
    except (RedisError, OSError, RuntimeError) as err:  # RuntimeError: the embedded server did not start
        log.warning("readyz: redis unavailable (%s)", type(err).__name__)
        return False


def _history_warnings() -> list[str]:
    try:
        with db.engine.connect() as conn:
            warnings = readiness_warnings(conn, utcnow())
    except SQLAlchemyError as err:
        log.warning("readyz: history partitions not checked (%s)", type(err).__name__)
        return []
    for warning in warnings:
        log.warning("readyz: %s", warning)
    return warnings


def _embedder_warnings() -> list[str]:
    warnings = embedder_warnings()
    for warning in warnings:
        log.warning("readyz: %s", warning)
    return warnings


def healthz():
    """Liveness: the process serves requests. No database, no Redis."""
    return jsonify(status="ok")


def readyz():
    """Readiness: 200 when the database and Redis answer, else 503 with `down` naming them."""
    checks = {"database": _database_ok(), "redis": _redis_ok()}
    if REPLICA in db.engines:  # DATABASE_REPLICA_URL: console pages and memory.query read there
        checks["replica"] = _database_ok(REPLICA)
    down = [name for name, ok in checks.items() if not ok]
    body = {
        "status": "ok" if not down else "unavailable",
        "checks": {k: "ok" if v else "down" for k, v in checks.items()},
    }
    if down:
        body["down"] = down
        return jsonify(body), 503
    warnings = _history_warnings() + _embedder_warnings()
    if warnings:
        body["warnings"] = warnings
    return jsonify(body)


def init_app(app: Flask) -> None:
    app.add_url_rule("/healthz", "healthz", healthz, methods=["GET"])
    app.add_url_rule("/readyz", "readyz", readyz, methods=["GET"])
