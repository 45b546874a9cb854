from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from flask import abort, request, url_for
from flask_login import current_user

from console.agents.outcome import outcome_for
from console.web.filters import display_zone, from_local_input, when
from console.web.glossary import ACTIONS
from console.web.htmx import render
from console.web.lookups import get_agent
from models import Agent, AuditLog, DomainError, NotFound, db
from models.admins.mechanic import active_grant, record_view
from models.changes.timemachine import (
    RollbackPlan,
    RollbackResult,
    plan_agent_rollback,
    plan_operation_rollback,
    plan_session_rollback,
    rollback_agent,
    rollback_operation,
    rollback_session,
)
from models.parsing import BadInput, parse_id, parse_utc
from models.readmodels.common import agent_names, users_by_id
from models.readmodels.dashboard import memory_stats
from models.readmodels.grants import audit_texts
from models.readmodels.sessions import session_metadata, session_statuses
from models.readmodels.timeline import (
    TimelineFilters,
    TimelinePage,
    activity,
    timeline,
    undoers,
)

from .after_rollback import after_rollback
from .blueprint import bp
from .describe import actor_label, admin_ids, details, operation_title

OP_ID = re.compile(r"^[0-9a-f-]{8,36}$")


def _int_arg(name: str) -> int | None:
    """An id from the query string, or None: models/parsing.py's bound (it fits the id columns)."""
    return parse_id(request.args.get(name, ""))


ACTOR_KINDS = ("admin", "agent", "system")
ACTOR = re.compile(r"^(admin|system):[\w.-]{1,40}$")


def _filters() -> TimelineFilters:
    """Timeline filters from the query string (bad values are ignored, never an error page):
    actor, action, session, and a date range (a date-time field, read in the admin's zone, or ISO 8601)."""
    actor = request.args.get("actor", "").strip()
    action = request.args.get("action", "").strip()
    return TimelineFilters(
        actor=actor if actor in ACTOR_KINDS or ACTOR.match(actor) else None,
        action=action if action in ACTIONS else None,
        session_id=_int_arg("session"),
        since=_parse_time(request.args.get("since")),
        until=_parse_time(request.args.get("until")),
    )


def _filter_args(filters: TimelineFilters) -> dict:
    """The filters as query-string arguments, for links that must keep them (paging, the feed)."""
    args = {}
    if filters.actor:
        args["actor"] = filters.actor
    if filters.action:
        args["action"] = filters.action
    if filters.session_id is not None:
        args["session"] = filters.session_id
    if filters.since:
        args["since"] = filters.since.isoformat(timespec="seconds") + "Z"
    if filters.until:
        args["until"] = filters.until.isoformat(timespec="seconds") + "Z"
    return args


def _timeline_context(agent, page: TimelinePage, agents: dict | None = None) -> dict:
    """Labels and, under the admin's live grant, the before/after text of covered records (view recorded)."""
    users = users_by_id(admin_ids(page.ops))
    grant = active_grant(agent.id, current_user.id) if agent is not None else None
    texts: dict[int, dict] = {}
    shown: list[int] = []
    if grant is not None:
        texts = audit_texts(grant, [r for op in page.ops for r in op.records])
        shown = sorted({r.memory_id for op in page.ops for r in op.records if r.id in texts})
    agents = agents or {}
    return {
        "page": page,
        "labels": {
            op.op_id: actor_label(op.actor, users, agent or agents.get(op.first.agent_id)) for op in page.ops
        },
        "details": {op.op_id: details(op) for op in page.ops},
        "undone": undoers(page.ops),
        "grant": grant,
        "texts": texts,
        "shown": shown,
        "actions": ACTIONS,
        "actor_kinds": ACTOR_KINDS,
    }


def _recorded(response, context: dict):
    """A page that showed text under a grant is recorded (after rendering: the commit would expire
    every row the template still reads). If recording fails, the page is not sent."""
    if context["shown"]:
        record_view(context["grant"], current_user.id, request.full_path, context["shown"])
    return response


@bp.get("/agents/<int:agent_id>/audit")
def agent_timeline(agent_id: int):
    """Who, what, when, which memories, token delta — per operation, newest first. Text only under a grant.
    Filters (actor, action, session, date range) live in the query string."""
    agent = get_agent(agent_id)
    memory_id = _int_arg("memory")
    filters = _filters()
    page = timeline(agent_id=agent.id, memory_id=memory_id, before=_int_arg("before"), filters=filters)
    context = _timeline_context(agent, page)
    response = render(
        "timeline/agent.html",
        "timeline/_ops.html",
        agent=agent,
        memory_id=memory_id,
        stats=memory_stats([agent.id])[agent.id],
        scope="agent",
        filters=filters,
        filter_args=_filter_args(filters),
        **context,
    )
    return _recorded(response, context)


@bp.get("/activity")
def activity_feed():
    """Every agent's operations in one feed, newest first, with the same filters. Metadata only:
    no grant applies here, so no text is ever shown."""
    filters = _filters()
    page = activity(filters, before=_int_arg("before"))
    agents = agent_names(op.first.agent_id for op in page.ops if op.first.agent_id is not None)
    context = _timeline_context(None, page, agents)
    return render(
        "timeline/activity.html",
        "timeline/_ops.html",
        agent=None,
        agents=agents,
        scope="feed",
        filters=filters,
        filter_args=_filter_args(filters),
        **context,
    )


def _session_context(session_id: int) -> dict:
    """Everything the session page shows: figures, status as it stands now, outcome, its own timeline."""
    session = session_metadata(session_id)
    if session is None:
        abort(404, description=f"There is no refinement session #{session_id}.")
    agent = get_agent(session.agent_id)
    page = timeline(session_id=session.id, before=_int_arg("before"))
    state = session_statuses([session])[session.id]
    return {
        "agent": agent,
        "session": session,
        "state": state,  # not "status": render() takes that as the HTTP status
        "outcome": outcome_for(session, state),
        "scope": "session",
        **_timeline_context(agent, page),
    }


@bp.get("/sessions/<int:session_id>")
def session_page(session_id: int):
    """A refinement session's figures and its own audit timeline, with a one-click rollback (or, once
    rolled back, who did it, when, and the undoing of that rollback)."""
    context = _session_context(session_id)
    response = render("timeline/session.html", "timeline/_ops.html", **context)
    return _recorded(response, context)


# ----- rollback: a confirm step that says what will change, then the change -----


def _parse_time(value: str | None) -> datetime | None:
    """A datetime-local field's value, read in the admin's zone, or ISO 8601 with its offset. Returns naive UTC, clamped
    to years 1-9999 (models/parsing.py); None when empty or malformed (the caller says what to send)."""
    try:
        return parse_utc(from_local_input(value), field="to")
    except BadInput:
        return None


@dataclass(frozen=True)
class _Rollback:
    """One kind of rollback (an operation, a refinement session, a point in time), as both of its
    routes need it: the GET shows the plan behind a confirm step, the POST applies it. One shape, so
    the three kinds cannot drift apart in how they plan, refuse, audit or answer HTMX."""

    agent: Agent
    title: str  # the confirm step's heading
    refused_title: str  # the heading when the POST is refused
    action: str  # the endpoint the confirm step posts to
    action_args: dict
    plan: Callable[[], RollbackPlan]
    apply: Callable[[str], RollbackResult]
    extra: dict = field(default_factory=dict)


def _operation(op_id: str) -> _Rollback:
    if not OP_ID.match(op_id):
        abort(404, description="No such operation.")
    first = db.session.execute(
        db.select(AuditLog.agent_id, AuditLog.action, AuditLog.created_at, AuditLog.data)
        .where(AuditLog.op_id == op_id)
        .order_by(AuditLog.id)
        .limit(1)
    ).first()
    if first is None or first.agent_id is None:
        abort(404, description="No such operation.")
    agent_id = first.agent_id
    title = operation_title(first.action, first.data, first.created_at)
    return _Rollback(
        get_agent(agent_id), title, title, "timeline.rollback_op", {"op_id": op_id},
        lambda: plan_operation_rollback(op_id), lambda actor: rollback_operation(op_id, actor=actor),
    )  # fmt: skip


def _session(session_id: int) -> _Rollback:
    session = session_metadata(session_id)
    if session is None:
        abort(404, description=f"There is no refinement session #{session_id}.")
    title = f"Roll back refinement session #{session_id}"
    return _Rollback(
        get_agent(session.agent_id), title, title, "timeline.rollback_sess", {"session_id": session_id},
        lambda: plan_session_rollback(session_id), lambda actor: rollback_session(session_id, actor=actor),
    )  # fmt: skip


def _point_in_time(agent: Agent, to: datetime) -> _Rollback:
    return _Rollback(
        agent, f"Roll {agent.name} back to {when(to, seconds=True)}", f"Roll {agent.name} back",
        "timeline.rollback_to", {"agent_id": agent.id},
        lambda: plan_agent_rollback(agent.id, to), lambda actor: rollback_agent(agent.id, to, actor=actor),
        extra={"to": to},
    )  # fmt: skip


def _confirm_step(agent, title: str, action_url: str, *, plan=None, conflict=None, status=200, **extra):
    return render(
        "timeline/confirm_page.html",
        "timeline/_confirm.html",
        status=status,
        agent=agent,
        title=title,
        action_url=action_url,
        plan=plan,
        conflict=conflict,
        stats=memory_stats([agent.id])[agent.id],
        **extra,
    )


def _confirm(rollback: _Rollback):
    """GET: what the rollback would change, or why it cannot be done."""
    plan = conflict = None
    try:
        plan = rollback.plan().summary
    except NotFound as err:
        db.session.rollback()
        abort(404, description=err.message)
    except DomainError as err:  # a RollbackConflict among them
        db.session.rollback()
        conflict = err.message
    action_url = url_for(rollback.action, **rollback.action_args)
    return _confirm_step(
        rollback.agent, rollback.title, action_url, plan=plan, conflict=conflict, **rollback.extra
    )


def _apply(rollback: _Rollback):
    """POST: apply it (audited as one operation by models/changes/timemachine.py), or show the refusal."""
    try:
        result = rollback.apply(current_user.actor)
    except DomainError as err:
        db.session.rollback()
        return _confirm_step(
            rollback.agent, rollback.refused_title, request.path, conflict=err.message, status=409
        )
    return after_rollback(rollback.agent, result, _session_context, _recorded)


@bp.get("/rollback/op/<op_id>")
def confirm_operation(op_id: str):
    return _confirm(_operation(op_id))


@bp.post("/rollback/op/<op_id>")
def rollback_op(op_id: str):
    return _apply(_operation(op_id))


@bp.get("/rollback/session/<int:session_id>")
def confirm_session(session_id: int):
    return _confirm(_session(session_id))


@bp.post("/rollback/session/<int:session_id>")
def rollback_sess(session_id: int):
    return _apply(_session(session_id))


@bp.get("/agents/<int:agent_id>/rollback")
def confirm_agent(agent_id: int):
    agent = get_agent(agent_id)
    to = _parse_time(request.args.get("to"))
    if to is None:
        return _confirm_step(
            agent,
            "Roll the agent back to a point in time",
            "",
            conflict=f"Choose the point in time: a date and a time (in {display_zone()}), or ISO 8601 "
            "such as 2026-11-22T04:00:00Z.",
            status=422,
        )
    return _confirm(_point_in_time(agent, to))


@bp.post("/agents/<int:agent_id>/rollback")
def rollback_to(agent_id: int):
    agent = get_agent(agent_id)  # an unknown agent is a 404 before a malformed time is a 400
    to = _parse_time(request.form.get("to"))
    if to is None:
        abort(
            400, description=f"Give the point in time as a date and time (in {display_zone()}) or ISO 8601."
        )
    return _apply(_point_in_time(agent, to))
