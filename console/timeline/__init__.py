"""Audit timelines (per agent, per session) and the Time Machine's one-click rollback behind a confirm step."""

from flask import Blueprint

from console.web.security import require_admin

bp = Blueprint("timeline", __name__)
bp.before_request(require_admin)

from . import routes  # noqa: E402,F401
