"""The agent page's safeguards panel: held consent patches an admin may confirm or decline (metadata only),
and the retention guard on the agent's own deletions, which an admin may lift. Loaded as its own fragment;
each action re-renders the panel."""

from __future__ import annotations

from flask import request, url_for
from flask_login import current_user

from console.web.htmx import is_htmx, redirect_to, render
from console.web.lookups import get_agent
from models import DomainError, db
from models.changes import patches, retention
from models.readmodels.held_patches import held_patches

from .blueprint import bp


def _panel(agent_id: int, *, message: str | None = None, error: str | None = None, status: int = 200):
    """The panel as a fragment (the page loads it, an action re-renders it); a form posted without htmx
    goes back to the agent page."""
    agent = get_agent(agent_id)
    if request.method == "POST" and not is_htmx():
        return redirect_to(url_for("agents.agent_page", agent_id=agent.id))
    return render(
        "agents/_safeguards.html",
        "agents/_safeguards.html",
        agent=agent,
        patches=held_patches(agent.id),
        guard=retention.status(agent.id),
        message=message,
        error=error,
        status=status,
    )


@bp.get("/agents/<int:agent_id>/safeguards")
def safeguards(agent_id: int):
    return _panel(agent_id)


@bp.post("/agents/<int:agent_id>/patches/<int:patch_id>/confirm")
def confirm_patch(agent_id: int, patch_id: int):
    """An admin applies a held patch, on the record (the acknowledgement names the admin)."""
    return _decide(agent_id, patch_id, confirm=True)


@bp.post("/agents/<int:agent_id>/patches/<int:patch_id>/decline")
def decline_patch(agent_id: int, patch_id: int):
    """An admin drops a held patch; nothing else changes."""
    return _decide(agent_id, patch_id, confirm=False)


def _decide(agent_id: int, patch_id: int, *, confirm: bool):
    agent = get_agent(agent_id)
    try:
        if confirm:
            patches.confirm(agent.id, patch_id, actor=current_user.actor)
            message = f"Patch {patch_id} confirmed: the change is applied, with your name on the record."
        else:
            patches.reject(agent.id, patch_id, actor=current_user.actor)
            message = f"Patch {patch_id} declined: the proposed change is dropped."
    except DomainError as err:
        db.session.rollback()
        return _panel(agent.id, error=err.message, status=409)
    return _panel(agent.id, message=message)


@bp.post("/agents/<int:agent_id>/retention-guard/lift")
def lift_retention_guard(agent_id: int):
    """Let the agent delete again: its deletions so far stop counting (audited as the admin's)."""
    agent = get_agent(agent_id)
    retention.lift(agent.id, actor=current_user.actor)
    return _panel(agent.id, message="The retention guard is lifted: earlier deletions no longer count.")
