"""An agent's memories as metadata (never content), and the constitutional toggle."""

from . import routes  # registers the routes on the blueprint
from .blueprint import bp

__all__ = ["bp"]
