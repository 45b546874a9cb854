"""The Mechanic's Exception, admin side: ask for access, watch for consent, read within scope until it lapses."""

from flask import Blueprint

from console.web.security import require_admin

bp = Blueprint("mechanic", __name__)
bp.before_request(require_admin)

from . import routes  # noqa: E402,F401
