"""The jobs page: queues, workers, recurring jobs with their next runs, recent failures (type only)."""

from . import events, events_view, routes  # registers the routes on the blueprint
from .blueprint import bp

__all__ = ["bp"]
