from __future__ import annotations

import math

from flask import abort, request, url_for
from flask_login import current_user

from console.agents.routes import get_agent
from console.web.htmx import is_htmx, page_number, redirect_to, render
from models import MEMORY_TYPES, DomainError, db
from models.console_queries import MEMORY_STATES, memory_metadata, memory_page
from models.mechanic import active_grant
from models.mutations import set_constitutional

from . import bp

PER_PAGE = 100


@bp.get("/agents/<int:agent_id>/memories")
def index(agent_id: int):
    """Id, type, category, tokens, dates, tags, flags and a content-hash prefix: never the content."""
    agent = get_agent(agent_id)
    state = request.args.get("state", "active")
    state = state if state in MEMORY_STATES else "active"
    memory_type = request.args.get("type") or None
    memory_type = memory_type if memory_type in MEMORY_TYPES else None
    page = page_number(request.args.get("page"))
    rows, total = memory_page(agent.id, state=state, memory_type=memory_type, page=page, per_page=PER_PAGE)
    pages = max(1, math.ceil(total / PER_PAGE))
    return render(
        "memories/index.html",
        "memories/_table.html",
        agent=agent,
        rows=rows,
        total=total,
        page=page,
        pages=pages,
        state=state,
        memory_type=memory_type,
        memory_types=MEMORY_TYPES,
        states=MEMORY_STATES,
        grant=active_grant(agent.id, current_user.id),
    )


@bp.post("/agents/<int:agent_id>/memories/<int:memory_id>/constitutional")
def toggle_constitutional(agent_id: int, memory_id: int):
    """Set or clear the lock, audited with the admin's id; the row re-renders itself."""
    agent = get_agent(agent_id)
    wanted = request.form.get("value")
    if wanted not in ("true", "false"):
        abort(400, description="Say value=true or value=false.")
    error = None
    try:
        set_constitutional(agent.id, memory_id, wanted == "true", actor=current_user.actor)
    except DomainError as err:
        db.session.rollback()
        error = err.message
    memory = memory_metadata(agent.id, memory_id)
    if memory is None:
        abort(404, description=f"Agent #{agent.id} has no memory #{memory_id}.")
    if not is_htmx():
        return redirect_to(url_for("memories.index", agent_id=agent.id))
    return render(
        "memories/_row.html", agent=agent, memory=memory, row_error=error, status=409 if error else 200
    )
