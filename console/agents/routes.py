from __future__ import annotations

import logging
import math
import re
from urllib.parse import urlparse

from flask import abort, flash, request, url_for
from flask_login import current_user
from redis.exceptions import RedisError
from rq.exceptions import NoSuchJobError
from rq.job import Job
from sqlalchemy import select

from console.web.filters import TZ_COOKIE, common_zones, display_zone, valid_zone
from console.web.glossary import plain
from console.web.htmx import is_htmx, page_number, redirect_to, render
from console.web.lookups import get_agent
from infra.queues import get_rq
from jobs.triggers import enqueue_refinement
from models import Agent, DomainError, db
from models.agents.quotas import usage
from models.changes.agent_settings import update_agent_settings
from models.history.events import recall_shares
from models.history.session import SESSION_STATUSES
from models.parsing import parse_id
from models.readmodels.dashboard import DASHBOARD_FILTERS, DASHBOARD_SORTS, dashboard_agents
from models.readmodels.sessions import recent_sessions, session_metadata, session_statuses

from .blueprint import bp
from .outcome import outcome_for
from .overview import agent_rows, sparkline_series

log = logging.getLogger(__name__)
PER_PAGE = 50
PHASE = re.compile(r"^(queued|dedup|consent|turn \d{1,4}|" + "|".join(SESSION_STATUSES) + r")$")


@bp.get("/")
def dashboard():
    """Every agent, a page at a time: usage against budget, counts by type, refinements, the next run,
    a sparkline; searched, filtered and sorted through the query string (so a view can be bookmarked)."""
    query = request.args.get("q", "").strip()[:100]
    sort = request.args.get("sort", "name")
    sort = sort if sort in DASHBOARD_SORTS else "name"
    descending = request.args.get("dir") == "desc"
    filters = [f for f in DASHBOARD_FILTERS if request.args.get(f) == "1"]
    page = page_number(request.args.get("page"))

    def fetch(page: int):
        return dashboard_agents(
            query, page, PER_PAGE, sort=sort, descending=descending, filters=filters, user_id=current_user.id
        )

    agents, total = fetch(page)
    pages = max(1, math.ceil(total / PER_PAGE))
    if page > pages:
        page = pages
        agents, total = fetch(page)
    rows = agent_rows(agents, current_user.id, build_histories=False)
    statuses = session_statuses([row.last for row in rows])
    pending = [row.agent.id for row in rows if row.series is None]
    args = {"q": query} if query else {}
    if sort != "name" or descending:
        args.update(sort=sort, dir="desc" if descending else "asc")
    args.update({f: "1" for f in filters})
    return render(
        "agents/dashboard.html",
        "agents/_agents_table.html",
        rows=rows,
        statuses=statuses,
        query=query,
        sort=sort,
        descending=descending,
        filters=filters,
        args=args,
        page=page,
        pages=pages,
        total=total,
        pending=pending,
    )


@bp.route("/preferences", methods=["GET", "POST"])
def preferences():
    """The admin's display time zone, kept in a cookie: every time is shown in it, with its name."""
    error = None
    if request.method == "POST":
        zone = request.form.get("zone", "").strip()
        if valid_zone(zone):
            response = redirect_to(url_for("agents.preferences"))
            response.set_cookie(
                TZ_COOKIE,
                zone,
                max_age=365 * 24 * 3600,
                samesite="Lax",
                httponly=True,
                secure=request.is_secure,
            )
            flash(f"Times are now shown in {zone}.", "info")
            return response
        error = "Choose a time zone from the list (an IANA name such as Europe/Paris, or UTC)."
    return render(
        "agents/preferences.html",
        zones=common_zones(),
        current=display_zone(),
        error=error,
        status=422 if error else 200,
    )


@bp.get("/agents/sparklines")
def sparklines():
    """Sparklines the dashboard did not have cached, as out-of-band swaps into their cells."""
    raw = request.args.get("ids", "")
    ids = [n for n in map(parse_id, raw.split(",")[:PER_PAGE]) if n is not None]  # models/parsing.py
    agents = (
        db.session.scalars(select(Agent).where(Agent.id.in_(ids)).order_by(Agent.id)).all() if ids else []
    )
    return render("agents/_sparklines.html", agents=agents, series=sparkline_series(list(agents)))


def agent_context(agent: Agent) -> dict:
    (row,) = agent_rows([agent], current_user.id)
    sessions = recent_sessions(agent.id)
    live = next((s for s in sessions if s.status in ("queued", "running")), None)
    statuses = session_statuses([*sessions, row.last])
    recall = recall_shares(agent.id)[-1]  # the last 7 days' turns noted by the agent (POST /api/v1/turns)
    return {
        "agent": agent,
        "row": row,
        "sessions": sessions,
        "live": live,
        "statuses": statuses,
        "recall": recall,
    }


@bp.get("/agents/<int:agent_id>")
def agent_page(agent_id: int):
    """One agent: figures, settings, the refinement trigger with live progress, its sessions."""
    agent = get_agent(agent_id)
    return render("agents/agent.html", **agent_context(agent))


@bp.get("/agents/<int:agent_id>/summary")
def summary(agent_id: int):
    agent = get_agent(agent_id)
    return render("agents/agent.html", "agents/_summary.html", **agent_context(agent))


@bp.get("/agents/<int:agent_id>/sessions")
def sessions(agent_id: int):
    agent = get_agent(agent_id)
    return render("agents/agent.html", "agents/_sessions.html", **agent_context(agent))


def _parse_settings(form) -> tuple[dict, list[str]]:
    changes, errors = {}, []
    budget = form.get("core_token_budget", "").replace(",", "").strip()
    if budget:
        try:
            changes["core_token_budget"] = int(budget)
        except ValueError:
            errors.append("The budget must be a whole number of tokens.")
    if "model_id" in form:
        model_id = form.get("model_id", "").strip()
        if len(model_id) > 200 or any(c.isspace() for c in model_id):
            errors.append(
                "The model id is one word of at most 200 characters, e.g. anthropic/claude-sonnet-4."
            )
        else:
            changes["model_id"] = model_id or None
    retention = form.get("min_retention_percent", "").strip()
    if retention:
        try:
            changes["min_retention"] = round(float(retention) / 100, 4)
        except ValueError:
            errors.append("The retention threshold must be a percentage.")
    return changes, errors


@bp.post("/agents/<int:agent_id>/settings")
def settings(agent_id: int):
    """Budget and circuit-breaker threshold, changed through the mutation path (audited with the admin's id)."""
    agent = get_agent(agent_id)
    changes, errors = _parse_settings(request.form)
    changed = {k: v for k, v in changes.items() if getattr(agent, k) != v}
    message = None
    if not errors and changed:
        try:
            update_agent_settings(agent.id, actor=current_user.actor, **changed)
            message = "Saved: " + ", ".join(plain(k) for k in sorted(changed)) + "."
        except DomainError as err:
            db.session.rollback()
            errors.append(err.message)
    elif not errors:
        message = "Nothing changed."
    db.session.refresh(agent)
    context = {
        **agent_context(agent),
        "settings_errors": errors,
        "settings_message": message,
        "settings_saved": bool(changed) and not errors,
    }
    if not is_htmx():
        for text in errors:
            flash(text, "error")
        if message:
            flash(message, "info")
        return redirect_to(url_for("agents.agent_page", agent_id=agent.id))
    return render("agents/agent.html", "agents/_settings.html", status=422 if errors else 200, **context)


@bp.post("/agents/<int:agent_id>/refine")
def refine(agent_id: int):
    """Queue a refinement session on RQ (forced: an admin asked); the page then polls its progress."""
    agent = get_agent(agent_id)
    try:
        session = enqueue_refinement(agent.id, "console", current_user.actor)
    except RedisError as err:
        db.session.rollback()
        log.error("could not queue a refinement: %s", type(err).__name__)
        return render(
            "agents/agent.html",
            "agents/_refinement.html",
            status=503,
            **agent_context(agent),
            refine_error="The job queue is unreachable; nothing was queued.",
        )
    if not is_htmx():
        return redirect_to(url_for("agents.agent_page", agent_id=agent.id))
    context = agent_context(agent)
    context["live"] = session
    return render(
        "agents/agent.html", "agents/_refinement.html", **context, job=_job_state(session.job_id), queued=True
    )


def _job_state(job_id: str | None) -> dict | None:
    """The RQ job's status and its progress meta (metadata keys only)."""
    if not job_id:
        return None
    try:
        job = Job.fetch(job_id, connection=get_rq().connection)
    except NoSuchJobError:
        return {"status": "gone"}
    except RedisError:
        return {"status": "unreachable"}
    meta = job.meta or {}
    phase = meta.get("phase")
    status = job.get_status(refresh=False)
    return {
        "status": getattr(status, "value", status) or "unknown",
        # Only the phases the session job writes: meta is free-form and never shown as such.
        "phase": phase if isinstance(phase, str) and PHASE.match(phase) else None,
        "ops": meta.get("ops") if isinstance(meta.get("ops"), int) else None,
    }


def _on_page(path: str) -> bool:
    """Whether this htmx request comes from the page at `path` (the panels to refresh are there)."""
    return urlparse(request.headers.get("HX-Current-URL", "")).path == path


@bp.get("/sessions/<int:session_id>/progress")
def progress(session_id: int):
    """The progress widget: it replaces itself and polls only while the session is queued or running."""
    session = session_metadata(session_id)
    if session is None:
        abort(404, description=f"There is no refinement session #{session_id}.")
    panels = None
    if session.finished and is_htmx() and _on_page(f"/agents/{session.agent_id}"):
        agent = get_agent(session.agent_id)
        panels = {**agent_context(agent), "usage": usage(agent.id)}
    response = render(
        "agents/progress_page.html",
        "agents/_progress.html",
        session=session,
        job=_job_state(session.job_id),
        outcome=outcome_for(session),
        panels=panels,
    )
    if session.finished:
        response.headers["HX-Trigger"] = "refinement-finished"
        if is_htmx() and _on_page(f"/sessions/{session.id}"):
            # The session's own page: its card, figures and timeline all changed with it.
            response.headers["HX-Refresh"] = "true"
    return response
