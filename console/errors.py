"""Error pages and JSON errors: clear messages, never a stack trace, never memory content."""

from __future__ import annotations

import logging

from flask import Flask, jsonify, render_template, request
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from models import DomainError, db

log = logging.getLogger(__name__)


def _wants_json() -> bool:
    return request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json"


def _respond(status: int, code: str, message: str, extra: dict | None = None):
    if _wants_json():
        return jsonify(error=code, message=message, **(extra or {})), status
    return render_template("error.html", status=status, code=code, message=message), status


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(DomainError)
    def domain_error(err: DomainError):
        db.session.rollback()
        return _respond(err.http_status, err.code, err.message, err.details)

    @app.errorhandler(CSRFError)
    def csrf_error(err: CSRFError):
        return _respond(400, "csrf", "The form expired or the CSRF token is missing; reload the page and try again.")

    @app.errorhandler(HTTPException)
    def http_error(err: HTTPException):
        return _respond(err.code or 500, (err.name or "error").lower().replace(" ", "_"), err.description or err.name)

    @app.errorhandler(Exception)
    def unexpected(err: Exception):
        db.session.rollback()
        # Log the type and where, not the message: driver errors can quote the statement's parameters.
        log.error("unhandled %s on %s %s", type(err).__name__, request.method, request.path, exc_info=False)
        return _respond(500, "internal_error", "Something went wrong on our side; nothing was changed.")
