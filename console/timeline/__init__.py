"""Audit timelines (per agent, per session) and the Time Machine's one-click rollback behind a confirm step."""

from . import routes  # registers the routes on the blueprint
from .blueprint import bp

__all__ = ["bp"]
