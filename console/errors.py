"""Error pages and JSON errors: clear messages, never a stack trace, never memory content."""

from __future__ import annotations

import logging

from flask import Flask, jsonify, render_template, request
from flask_wtf.csrf import CSRFError
from markupsafe import escape
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy.exc import InterfaceError, OperationalError
from werkzeug.exceptions import HTTPException

from infra.queues import QueueUnreachable
from models import DomainError, db
from models.db import is_retryable

log = logging.getLogger(__name__)


def _wants_json() -> bool:
    return request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json"


def _respond(status: int, code: str, message: str, extra: dict | None = None):
    if _wants_json():
        return jsonify(error=code, message=message, **(extra or {})), status
    return render_template("error.html", status=status, code=code, message=message), status


def _unavailable(code: str, message: str, retry_after: int = 30):
    """503 while a backing service is down or busy. The console's page is plain HTML on purpose: the
    normal layout asks the database who is signed in, which is what just failed."""
    if _wants_json():
        response = jsonify(error=code, message=message)
    else:
        html = (
            "<!doctype html><html lang=en><meta charset=utf-8><title>503 · Memory console</title>"
            f"<h1>Temporarily unavailable</h1><p>{escape(message)}</p></html>"
        )
        response = app_response(html)
    response.status_code = 503
    response.headers["Retry-After"] = str(retry_after)
    return response


def app_response(html: str):
    from flask import current_app

    return current_app.response_class(html, mimetype="text/html")


def _rollback_quietly() -> None:
    try:
        db.session.rollback()
    except Exception:  # noqa: BLE001 - the connection is what failed; dropping the session is enough
        db.session.remove()


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(OperationalError)
    @app.errorhandler(InterfaceError)
    def database_unavailable(err):
        # Never a 500. A database that answered but aborted the transaction for a conflict with another
        # writer (a deadlock or a serialization failure, still there after the agent API's retries:
        # models/db.py, `retrying`) is reachable, so it is not reported as unavailable.
        _rollback_quietly()
        if is_retryable(err):
            log.warning("write conflict on %s %s (%s)", request.method, request.path, type(err.orig).__name__)
            return _unavailable(
                "write_conflict",
                "This write collided with concurrent writes to the same memories and was not applied; "
                "send it again.",
                retry_after=1,
            )
        # Connection refused, lost, timed out, or the database busy past its timeout.
        log.error("database unavailable on %s %s (%s)", request.method, request.path, type(err.orig).__name__)
        return _unavailable(
            "database_unavailable", "The database is unavailable; nothing was changed. Try again shortly."
        )

    @app.errorhandler(RedisConnectionError)
    @app.errorhandler(RedisTimeoutError)
    def redis_unavailable(err):
        # The code says what failed: queueing a job (nothing was queued), or any other use of Redis.
        _rollback_quietly()
        log.error("redis unavailable on %s %s (%s)", request.method, request.path, type(err).__name__)
        if isinstance(err, QueueUnreachable):
            return _unavailable(
                "queue_unavailable", "The job queue is unavailable; nothing was queued. Try again shortly."
            )
        return _unavailable("redis_unavailable", "Redis is unavailable. Try again shortly.")

    @app.errorhandler(DomainError)
    def domain_error(err: DomainError):
        db.session.rollback()
        return _respond(err.http_status, err.code, err.message, err.details)

    @app.errorhandler(CSRFError)
    def csrf_error(err: CSRFError):
        return _respond(
            400, "csrf", "The form expired or the CSRF token is missing; reload the page and try again."
        )

    @app.errorhandler(HTTPException)
    def http_error(err: HTTPException):
        return _respond(
            err.code or 500, (err.name or "error").lower().replace(" ", "_"), err.description or err.name
        )

    @app.errorhandler(Exception)
    def unexpected(err: Exception):
        db.session.rollback()
        # Log the type and where, not the message: driver errors can quote the statement's parameters.
        log.error("unhandled %s on %s %s", type(err).__name__, request.method, request.path, exc_info=False)
        return _respond(500, "internal_error", "Something went wrong on our side; nothing was changed.")
