"""The agents overview, the agent page (settings, refinement trigger and progress, sessions)."""

from flask import Blueprint

from console.web.security import require_admin

bp = Blueprint("agents", __name__)
bp.before_request(require_admin)

from . import quotas, routes  # noqa: E402,F401
