"""The jobs page's memory-event counts (docs/spec/003-memory-system.md §14), read by `workers/_events.html` through a template
global, so the query runs only where that partial renders, not on every poll of the board."""

from __future__ import annotations

from models.history import events

from .blueprint import bp


@bp.app_template_global("memory_event_counts")
def memory_event_counts() -> list[events.EventCount]:
    """Every agent's events by node and op over the last 24 hours and 7 days (from the database, so they
    show even when Redis is down)."""
    return events.counts()
