"""The jobs page: queues, workers, recurring jobs with their next runs, recent failures (type only)."""

from flask import Blueprint

from console.web.security import require_admin

bp = Blueprint("workers", __name__)
bp.before_request(require_admin)

from . import events, routes  # noqa: E402,F401
