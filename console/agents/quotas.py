"""The agent page's storage panel: usage against MAX_MEMORIES_PER_AGENT and
MAX_CHECKPOINT_BYTES_PER_AGENT (models/agents/quotas.py). Loaded by the page as its own fragment, so the
page's other queries do not wait for the counts."""

from __future__ import annotations

from console.web.htmx import render
from console.web.lookups import get_agent
from models.agents.quotas import usage

from .blueprint import bp


@bp.get("/agents/<int:agent_id>/quotas")
def quotas(agent_id: int):
    agent = get_agent(agent_id)
    return render("agents/_quotas.html", "agents/_quotas.html", agent=agent, usage=usage(agent.id))
