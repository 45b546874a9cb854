"""Agent settings: the refinement budget, retention threshold, prompt and model of an agent, audited.

No memory row is touched here; the change and its audit record commit together (`atomic()`), like
every change of the mutation path (models/changes/mutations.py); its actor and agent checks are the
mutation path's own (models/changes/rules.py).
"""

from __future__ import annotations

from typing import Any

from models.agents.agent import Agent
from models.changes.rules import AGENT_ACTOR, check_actor, require_agent
from models.db import atomic
from models.errors import ValidationFailed
from models.history.audit import new_op_id, write_audit

MAX_REFINEMENT_PROMPT_CHARS = 4000


def update_agent_settings(agent_id: int, *, actor: str, **changes: Any) -> Agent:
    """Change an agent's refinement settings, audited (no memory row is touched)."""
    check_actor(actor)
    allowed = {
        "core_token_budget",
        "min_retention",
        "refinement_prompt",
        "model_id",
        "base_url",
        "mechanic_preconsent",
    }
    unknown = set(changes) - allowed
    if unknown:
        raise ValidationFailed(f"unknown setting(s): {', '.join(sorted(unknown))}")
    budget = changes.get("core_token_budget")
    if "core_token_budget" in changes and (
        isinstance(budget, bool) or not isinstance(budget, int) or not 100 <= budget <= 1_000_000
    ):
        raise ValidationFailed("core_token_budget must be an integer from 100 to 1,000,000")
    retention = changes.get("min_retention")
    if "min_retention" in changes and (
        isinstance(retention, bool) or not isinstance(retention, int | float) or not 0.0 < retention <= 1.0
    ):
        raise ValidationFailed("min_retention must be a number above 0 and at most 1")
    prompt = changes.get("refinement_prompt")
    if prompt is not None:
        if not isinstance(prompt, str):
            raise ValidationFailed("refinement_prompt must be a string")
        prompt = prompt.strip() or None
        if prompt and len(prompt) > MAX_REFINEMENT_PROMPT_CHARS:
            raise ValidationFailed(
                f"refinement_prompt is limited to {MAX_REFINEMENT_PROMPT_CHARS:,} characters"
            )
        changes["refinement_prompt"] = prompt
    if "mechanic_preconsent" in changes and not isinstance(changes["mechanic_preconsent"], bool):
        raise ValidationFailed("mechanic_preconsent must be true or false")
    with atomic():
        agent = require_agent(agent_id)
        before = {name: getattr(agent, name) for name in changes}
        for name, value in changes.items():
            setattr(agent, name, value)
        # The prompt text is the agent's own voice: record that it changed and its size, not its words.
        redact = {"refinement_prompt"}
        write_audit(
            op_id=new_op_id(),
            actor=actor,
            action="agent_settings",
            agent_id=agent_id,
            data={
                "before": {k: (len(v) if k in redact and v else v) for k, v in before.items()},
                "after": {k: (len(v) if k in redact and v else v) for k, v in changes.items()},
            },
        )
    return agent


def set_refinement_prompt(agent_id: int, prompt: str | None, *, actor: str = AGENT_ACTOR) -> Agent:
    """The agent's self-authored refinement instructions (docs/spec/002-refinement-lessons.md C); None restores the default."""
    return update_agent_settings(
        agent_id, actor=actor, refinement_prompt=prompt if prompt is not None else ""
    )
