"""What a rollback answers once applied. On the agent's page and on a session's page it closes the dialog
and re-sends, out of band, every panel the rollback changed: the message, the figures, the sessions and
their statuses, the session's card and its timeline. Any other page (a timeline, the activity feed)
reloads, since the rollback is a new row at the top of the list it shows."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlparse

from flask import flash, request, url_for

from console.agents.routes import agent_context
from console.web.htmx import is_htmx, redirect_to, render
from models import Agent
from models.changes.timemachine import RollbackResult

AGENT_PAGE = re.compile(r"^/agents/(\d{1,12})$")
SESSION_PAGE = re.compile(r"^/sessions/(\d{1,12})$")


def rollback_message(result: RollbackResult) -> str:
    if result.op_id is None:
        return "Nothing to change: every memory was already in that state."
    summary = result.summary
    return (
        f"Rolled back: {summary['restored']:,} restored, {summary['removed']:,} removed; core tokens "
        f"{result.tokens_before:,} → {result.tokens_after:,}. The rollback is in the audit timeline and "
        "can itself be undone."
    )


def after_rollback(
    agent: Agent,
    result: RollbackResult,
    session_context: Callable[[int], dict],
    recorded: Callable,
):
    """The answer to an applied rollback (see the module docstring)."""
    message = rollback_message(result)
    page = urlparse(request.headers.get("HX-Current-URL", "")).path
    on_agent, on_session = AGENT_PAGE.match(page), SESSION_PAGE.match(page)
    if is_htmx() and on_agent and int(on_agent[1]) == agent.id:
        context = agent_context(agent)
        return render("timeline/_after_rollback.html", message=message, panels="agent", **context)
    if is_htmx() and on_session:
        context = session_context(int(on_session[1]))
        if context["agent"].id == agent.id:
            response = render("timeline/_after_rollback.html", message=message, panels="session", **context)
            return recorded(response, context)
    flash(message, "info")
    if is_htmx() and page and (page.startswith("/activity") or page == f"/agents/{agent.id}/audit"):
        return redirect_to(request.headers["HX-Current-URL"])
    return redirect_to(url_for("timeline.agent_timeline", agent_id=agent.id))
