"""Refinement triggers: the weekly sweep and the over-budget scan."""

from __future__ import annotations

import logging

from models import Agent

log = logging.getLogger(__name__)


def over_budget_scan() -> dict:
    """Every 15 minutes: find agents over their core token budget with one aggregate query."""
    agent_ids = Agent.over_budget_ids()
    log.info("over-budget scan: %d agent(s) over budget", len(agent_ids))
    return {"over_budget": agent_ids}


def refinement_sweep() -> dict:
    """Weekly: refinement for agents due. Sessions themselves land with the refinement-session issue."""
    agent_ids = Agent.over_budget_ids()
    log.info("refinement sweep: not yet running sessions; %d agent(s) over budget", len(agent_ids))
    return {"status": "not yet", "over_budget": agent_ids}
