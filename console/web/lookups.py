"""Rows named in a console URL: the row, or a 404 page that names what was not found."""

from __future__ import annotations

from flask import abort

from models import Agent, db


def get_agent(agent_id: int) -> Agent:
    agent = db.session.get(Agent, agent_id)
    if agent is None:
        abort(404, description=f"There is no agent #{agent_id}.")
    return agent
