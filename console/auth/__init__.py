"""Sign in and sign out (Flask-Login; CSRF on both forms)."""

from flask import Blueprint

bp = Blueprint("auth", __name__)

from . import routes  # noqa: E402,F401
