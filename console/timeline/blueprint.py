"""The `timeline` blueprint object, apart from its routes so route modules import it without a cycle."""

from flask import Blueprint

from console.web.security import require_admin

bp = Blueprint("timeline", __name__)
bp.before_request(require_admin)
