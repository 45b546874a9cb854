from __future__ import annotations

import math

from flask import abort, flash, request, url_for
from flask_login import current_user

from console.web.htmx import is_htmx, page_number, redirect_to, render
from console.web.lookups import get_agent
from models import MEMORY_TYPES, DomainError, db
from models.admins.mechanic import active_grant
from models.changes import write
from models.readmodels.dashboard import memory_stats
from models.readmodels.memories_list import MEMORY_SORTS, MEMORY_STATES, memory_metadata, memory_page

from .blueprint import bp

PER_PAGE = 100


@bp.get("/agents/<int:agent_id>/memories")
def index(agent_id: int):
    """Id, type, category, tokens, dates, tags, flags and a content-hash prefix: never the content.
    Search (id, tag, hash prefix), filters and sort live in the query string, so a view is a link."""
    agent = get_agent(agent_id)
    state = request.args.get("state", "active")
    state = state if state in MEMORY_STATES else "active"
    memory_type = request.args.get("type") or None
    memory_type = memory_type if memory_type in MEMORY_TYPES else None
    search = request.args.get("q", "").strip()[:64]
    locked = request.args.get("locked") == "1"
    sort = request.args.get("sort", "created")
    sort = sort if sort in MEMORY_SORTS else "created"
    descending = request.args.get("dir", "desc") != "asc"
    page = page_number(request.args.get("page"))

    def fetch(page: int):
        return memory_page(
            agent.id,
            state=state,
            memory_type=memory_type,
            page=page,
            per_page=PER_PAGE,
            search=search,
            locked=locked,
            sort=sort,
            descending=descending,
        )

    rows, total = fetch(page)
    pages = max(1, math.ceil(total / PER_PAGE))
    if page > pages:
        page = pages
        rows, total = fetch(page)
    args = {"agent_id": agent.id, "state": state}
    if memory_type:
        args["type"] = memory_type
    if search:
        args["q"] = search
    if locked:
        args["locked"] = "1"
    if sort != "created" or not descending:
        args.update(sort=sort, dir="desc" if descending else "asc")
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
        search=search,
        locked=locked,
        sort=sort,
        descending=descending,
        args=args,
        memory_types=MEMORY_TYPES,
        states=MEMORY_STATES,
        grant=active_grant(agent.id, current_user.id),
        stats=memory_stats([agent.id])[agent.id],
    )


@bp.post("/agents/<int:agent_id>/memories/<int:memory_id>/constitutional")
def toggle_constitutional(agent_id: int, memory_id: int):
    """Set or clear the lock, audited with the admin's id; the row re-renders itself."""
    agent = get_agent(agent_id)
    wanted = request.form.get("value")
    if wanted not in ("true", "false"):
        abort(400, description="Say value=true or value=false.")
    error = message = None
    try:
        write.protect(agent.id, memory_id, wanted == "true", actor=current_user.actor)
        message = (
            f"Memory #{memory_id} is locked: no agent, job or refinement can delete, merge or rewrite it."
            if wanted == "true"
            else f"Memory #{memory_id} is unlocked: refinements may merge or delete it again."
        )
    except DomainError as err:
        db.session.rollback()
        error = err.message
    memory = memory_metadata(agent.id, memory_id)
    if memory is None:
        abort(404, description=f"Agent #{agent.id} has no memory #{memory_id}.")
    if not is_htmx():
        if message:
            flash(message, "info")
        return redirect_to(url_for("memories.index", agent_id=agent.id))
    return render(
        "memories/_row.html",
        agent=agent,
        memory=memory,
        row_error=error,
        row_message=message,
        row_stats=None if error else memory_stats([agent.id])[agent.id],
        status=409 if error else 200,
    )


@bp.post("/agents/<int:agent_id>/memories/<int:memory_id>/restore")
def restore(agent_id: int, memory_id: int):
    """Bring back a soft-deleted memory through the agent API's own path (`models.changes.write.restore`), audited with
    the admin's id; the row re-renders itself (its error, if refused, names ids only)."""
    agent = get_agent(agent_id)
    error = None
    try:
        write.restore(agent.id, memory_id, actor=current_user.actor)
    except DomainError as err:
        db.session.rollback()
        error = err.message
    memory = memory_metadata(agent.id, memory_id)
    if memory is None:
        abort(404, description=f"Agent #{agent.id} has no memory #{memory_id}.")
    if not is_htmx():
        return redirect_to(url_for("memories.index", agent_id=agent.id, state="deleted"))
    return render(
        "memories/_row.html",
        agent=agent,
        memory=memory,
        row_error=error,
        row_stats=None if error else memory_stats([agent.id])[agent.id],
        status=409 if error else 200,
    )
