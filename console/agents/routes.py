from __future__ import annotations

import logging
import math
import re

from flask import abort, flash, request, url_for
from flask_login import current_user
from redis.exceptions import RedisError
from rq.exceptions import NoSuchJobError
from rq.job import Job
from sqlalchemy import select

from console.queues import get_rq
from console.web.htmx import is_htmx, page_number, redirect_to, render
from jobs.refinement import enqueue_refinement
from models import Agent, DomainError, db
from models.console_queries import recent_sessions, search_agents, session_metadata
from models.mutations import update_agent_settings
from models.session import SESSION_STATUSES

from . import bp
from .overview import agent_rows, sparkline_series

log = logging.getLogger(__name__)
PER_PAGE = 50
PHASE = re.compile(r"^(queued|dedup|consent|turn \d{1,4}|" + "|".join(SESSION_STATUSES) + r")$")


def get_agent(agent_id: int) -> Agent:
    agent = db.session.get(Agent, agent_id)
    if agent is None:
        abort(404, description=f"There is no agent #{agent_id}.")
    return agent


@bp.get("/")
def dashboard():
    """Every agent, a page at a time: budget bars, counts by type, refinements, the next run, a sparkline."""
    query = request.args.get("q", "").strip()[:100]
    page = page_number(request.args.get("page"))
    agents, total = search_agents(query, page, PER_PAGE)
    pages = max(1, math.ceil(total / PER_PAGE))
    if page > pages:
        page = pages
        agents, total = search_agents(query, page, PER_PAGE)
    rows = agent_rows(agents, current_user.id, build_histories=False)
    pending = [row.agent.id for row in rows if row.series is None]
    return render(
        "agents/dashboard.html",
        "agents/_agents_table.html",
        rows=rows,
        query=query,
        page=page,
        pages=pages,
        total=total,
        pending=pending,
    )


@bp.get("/agents/sparklines")
def sparklines():
    """Sparklines the dashboard did not have cached, as out-of-band swaps into their cells."""
    raw = request.args.get("ids", "")
    ids = [int(part) for part in raw.split(",") if part.isdigit() and len(part) < 12][:PER_PAGE]
    agents = (
        db.session.scalars(select(Agent).where(Agent.id.in_(ids)).order_by(Agent.id)).all() if ids else []
    )
    return render("agents/_sparklines.html", agents=agents, series=sparkline_series(list(agents)))


def _agent_context(agent: Agent) -> dict:
    (row,) = agent_rows([agent], current_user.id)
    sessions = recent_sessions(agent.id)
    live = next((s for s in sessions if s.status in ("queued", "running")), None)
    return {"agent": agent, "row": row, "sessions": sessions, "live": live}


@bp.get("/agents/<int:agent_id>")
def agent_page(agent_id: int):
    """One agent: figures, settings, the refinement trigger with live progress, its sessions."""
    agent = get_agent(agent_id)
    return render("agents/agent.html", **_agent_context(agent))


@bp.get("/agents/<int:agent_id>/summary")
def summary(agent_id: int):
    agent = get_agent(agent_id)
    return render("agents/agent.html", "agents/_summary.html", **_agent_context(agent))


@bp.get("/agents/<int:agent_id>/sessions")
def sessions(agent_id: int):
    agent = get_agent(agent_id)
    return render("agents/agent.html", "agents/_sessions.html", **_agent_context(agent))


def _parse_settings(form) -> tuple[dict, list[str]]:
    changes, errors = {}, []
    budget = form.get("core_token_budget", "").replace(",", "").strip()
    if budget:
        try:
            changes["core_token_budget"] = int(budget)
        except ValueError:
            errors.append("The budget must be a whole number of tokens.")
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
            message = "Saved: " + ", ".join(sorted(changed)) + "."
        except DomainError as err:
            db.session.rollback()
            errors.append(err.message)
    elif not errors:
        message = "Nothing changed."
    db.session.refresh(agent)
    context = {**_agent_context(agent), "settings_errors": errors, "settings_message": message}
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
            **_agent_context(agent),
            refine_error="The job queue is unreachable; nothing was queued.",
        )
    if not is_htmx():
        return redirect_to(url_for("agents.agent_page", agent_id=agent.id))
    context = _agent_context(agent)
    context["live"] = session
    return render("agents/agent.html", "agents/_refinement.html", **context, job=_job_state(session.job_id))


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


@bp.get("/sessions/<int:session_id>/progress")
def progress(session_id: int):
    """The progress widget: it replaces itself and polls only while the session is queued or running."""
    session = session_metadata(session_id)
    if session is None:
        abort(404, description=f"There is no refinement session #{session_id}.")
    response = render(
        "agents/progress_page.html", "agents/_progress.html", session=session, job=_job_state(session.job_id)
    )
    if session.finished:
        response.headers["HX-Trigger"] = "refinement-finished"
    return response
