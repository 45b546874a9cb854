"""Sign in and sign out (Flask-Login; CSRF on both forms)."""

from . import routes  # registers the routes on the blueprint
from .blueprint import bp

__all__ = ["bp"]
