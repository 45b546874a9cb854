"""An agent's memories as metadata (never content), and the constitutional toggle."""

from flask import Blueprint

from console.web.security import require_admin

bp = Blueprint("memories", __name__)
bp.before_request(require_admin)

from . import routes  # noqa: E402,F401
