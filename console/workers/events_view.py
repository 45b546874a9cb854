"""The events view: operational events (docs/spec/003-memory-system.md §14) counted by op, node and status,
and over time by hour or day, filtered through the query string (so a view is a link). Counts only."""

from __future__ import annotations

from flask import request
from sqlalchemy import select

from console.web.htmx import render
from models import Agent, db
from models.history.events import NODES
from models.parsing import parse_id
from models.readmodels.events import STATUSES, WINDOWS, EventFilters, event_summary

from .blueprint import bp


def _filters() -> EventFilters:
    """Filters from the query string; a value that is not one of the choices is ignored."""
    args = request.args
    window = args.get("window", "7d")
    op = args.get("op", "").strip()
    return EventFilters(
        window=window if window in WINDOWS else "7d",
        agent_id=parse_id(args.get("agent", "")),
        node=args.get("node") if args.get("node") in NODES else None,
        op=op if op.isidentifier() and len(op) <= 16 else None,
        status=args.get("status") if args.get("status") in STATUSES else None,
    )


@bp.get("/events")
def events_page():
    filters = _filters()
    summary = event_summary(filters)
    agents = db.session.execute(select(Agent.id, Agent.name).order_by(Agent.name).limit(500)).all()
    args = {
        key: value
        for key, value in {
            "window": filters.window,
            "agent": filters.agent_id,
            "node": filters.node,
            "op": filters.op,
            "status": filters.status,
        }.items()
        if value is not None
    }
    return render(
        "workers/events.html",
        "workers/_event_counts.html",
        filters=filters,
        summary=summary,
        agents=agents,
        nodes=NODES,
        statuses=STATUSES,
        windows=WINDOWS,
        args=args,
        peak=max((n for _, n in summary.buckets), default=0),
    )
