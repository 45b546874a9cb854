"""The agents overview, the agent page (settings, refinement trigger and progress, sessions)."""

from . import quotas, routes, safeguards  # registers the routes on the blueprint
from .blueprint import bp

__all__ = ["bp"]
