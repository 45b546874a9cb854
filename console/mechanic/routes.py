from __future__ import annotations

import logging
import math
import re

from flask import abort, flash, make_response, request, url_for
from flask_login import current_user
from redis.exceptions import RedisError

from console.web.htmx import page_number, redirect_to, render
from console.web.lookups import get_agent
from jobs.mechanic import enqueue_consent
from models import DomainError, MechanicGrant, db
from models.admins.mechanic import MAX_GRANT_MINUTES, record_view, request_grant, revoke_grant
from models.parsing import parse_id
from models.readmodels.grants import grant_contents, grants_with_views, pending_or_active_grant

from .blueprint import bp

log = logging.getLogger(__name__)
PER_PAGE = 100


def _own_grant(grant_id: int) -> MechanicGrant:
    """A grant is personal: only the admin who asked may use it."""
    grant = db.session.get(MechanicGrant, grant_id)
    if grant is None:
        abort(404, description=f"There is no grant #{grant_id}.")
    if grant.requested_by != current_user.id:
        abort(
            403,
            description="This grant belongs to another admin; access is personal to whoever asked for it.",
        )
    return grant


def _parse_ids(text: str) -> list[int] | None:
    parts = [p for p in re.split(r"[\s,#]+", text or "") if p]
    ids = [parse_id(p) for p in parts]  # models/parsing.py: only ids the column can hold
    if not ids or None in ids:
        return None
    return ids


@bp.get("/agents/<int:agent_id>/mechanic")
def index(agent_id: int):
    """Every grant on this agent with each recorded view, and the form to ask for one."""
    return _index(get_agent(agent_id))


def _index_context(agent, form: dict | None = None, error: str | None = None) -> dict:
    return {
        "agent": agent,
        "grants": grants_with_views(agent.id),
        "mine": pending_or_active_grant(agent.id, current_user.id),
        "form": form or {"scope": "ids", "minutes": 15},
        "error": error,
        "max_minutes": MAX_GRANT_MINUTES,
    }


def _index(agent, form: dict | None = None, error: str | None = None, status: int = 200):
    return render("mechanic/index.html", status=status, **_index_context(agent, form, error))


@bp.post("/agents/<int:agent_id>/mechanic")
def ask(agent_id: int):
    """Ask the agent for access: a written purpose, a scope and a duration. Its own model answers (a job)."""
    agent = get_agent(agent_id)
    form = {k: request.form.get(k, "") for k in ("purpose", "scope", "memory_ids", "minutes")}
    scope = form["scope"] if form["scope"] in ("all", "ids") else None
    ids = _parse_ids(form["memory_ids"]) if scope == "ids" else []
    minutes = parse_id(form["minutes"]) if len(form["minutes"]) < 4 else None
    if scope is None:
        return _index(agent, form, "Choose a scope: all memories, or listed ids.", 422)
    if ids is None:
        return _index(agent, form, "List memory ids as numbers separated by commas or spaces.", 422)
    if minutes is None:
        return _index(
            agent, form, f"The duration is a whole number of minutes, 1 to {MAX_GRANT_MINUTES}.", 422
        )
    try:
        grant = request_grant(agent.id, current_user.id, form["purpose"], scope, ids, minutes)
    except DomainError as err:
        db.session.rollback()
        return _index(agent, form, err.message, 422)
    try:
        enqueue_consent(grant.id)
    except RedisError as err:
        db.session.rollback()
        log.error("could not queue the consent question: %s", type(err).__name__)
        revoke_grant(grant.id, actor=current_user.actor)
        flash(
            "The job queue is unreachable, so the agent could not be asked; the request was withdrawn.",
            "error",
        )
        return redirect_to(url_for("mechanic.index", agent_id=agent.id))
    flash(f"Asked agent {agent.name} for consent (grant #{grant.id}).", "info")
    return redirect_to(url_for("mechanic.index", agent_id=agent.id))


@bp.get("/agents/<int:agent_id>/mechanic/grants")
def grants_table(agent_id: int):
    """The grants table alone: it refreshes itself when a grant's status panel sees the answer."""
    agent = get_agent(agent_id)
    return render("mechanic/index.html", "mechanic/_grants.html", **_index_context(agent))


@bp.get("/mechanic/grants/<int:grant_id>/status")
def status(grant_id: int):
    """The grant's state: polls itself while pending; once decided, a countdown and the way in, and an
    event (`grant-changed`) that makes the grants table on the same page refresh with the same status."""
    grant = _own_grant(grant_id)
    response = render(
        "mechanic/status_page.html", "mechanic/_status.html", grant=grant, agent=get_agent(grant.agent_id)
    )
    if grant.current_status() != "pending":
        response.headers["HX-Trigger"] = "grant-changed"
    return response


@bp.get("/mechanic/grants/<int:grant_id>")
def view(grant_id: int):
    """The mechanic's view: contents within the grant's scope while it is live; every view is recorded."""
    grant = _own_grant(grant_id)
    agent = get_agent(grant.agent_id)
    if not grant.is_active():
        return render(
            "mechanic/view.html", grant=grant, agent=agent, rows=[], total=0, page=1, pages=1, state="active"
        )
    state = request.args.get("state", "active")
    state = state if state in ("active", "deleted", "all") else "active"
    page = page_number(request.args.get("page"))
    rows, total = grant_contents(grant, state=state, page=page, per_page=PER_PAGE)
    shown = [m.id for m in rows]
    response = render(
        "mechanic/view.html",
        grant=grant,
        agent=agent,
        rows=rows,
        total=total,
        page=page,
        pages=max(1, math.ceil(total / PER_PAGE)),
        state=state,
    )
    # Recorded after rendering (the commit expires the rows the template reads); no record, no page.
    record_view(grant, current_user.id, request.full_path, shown)
    return response


@bp.get("/mechanic/grants/<int:grant_id>/watch")
def watch(grant_id: int):
    """Polled every few seconds by any page showing text under a grant: once the grant lapses
    (expired, revoked by the agent), the page reloads itself and the text is gone."""
    grant = _own_grant(grant_id)
    if grant.is_active():
        response = make_response("", 204)
    else:
        response = make_response("closed", 200)
        response.headers["HX-Refresh"] = "true"
    response.vary.add("HX-Request")
    return response


@bp.post("/mechanic/grants/<int:grant_id>/revoke")
def revoke(grant_id: int):
    """The admin closes their own grant early."""
    grant = _own_grant(grant_id)
    try:
        revoke_grant(grant.id, actor=current_user.actor)
        flash(f"Grant #{grant.id} is revoked: nothing of this agent's memory is readable under it.", "info")
    except DomainError as err:
        db.session.rollback()
        flash(err.message, "error")
    return redirect_to(url_for("mechanic.index", agent_id=grant.agent_id))
