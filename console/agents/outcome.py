"""A finished session's outcome as a story an admin can act on: what happened before the session
(the content-blind dedup), what the model did (or that it chose nothing, and why where the status
says), where the agent stands now against its budget, and what to do next.

Built from metadata only: the session's figures and stats, the agent's settings and today's totals.
The agent's own words (its consent reason, its summary) are never shown, only their length.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flask import url_for

from console.web.glossary import TRIGGERS
from models import Agent, RefinementSession, db
from models.readmodels.sessions import SessionStatus, session_statuses
from models.refinement.due import held_agents

OPERATION_STATS = (
    ("consolidations", "merge", "merges"),
    ("updated", "edit", "edits"),
    ("deleted", "deletion", "deletions"),
    ("protected", "lock", "locks"),
)


@dataclass
class Step:
    text: str
    href: str | None = None
    link: str | None = None
    dialog: bool = False  # the link opens the confirm dialog


@dataclass
class Outcome:
    tone: str  # ok, warn, bad: the colour of the panel's edge
    headline: str
    before: list[str] = field(default_factory=list)  # before the session: dedup
    during: list[str] = field(default_factory=list)  # the model's work
    now: str = ""  # where the agent stands against its budget today
    next_steps: list[Step] = field(default_factory=list)


def _plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _operations(stats: dict) -> str:
    parts = [
        _plural(int(stats[key]), one, many)
        for key, one, many in OPERATION_STATS
        if isinstance(stats.get(key), int) and stats[key]
    ]
    return ", ".join(parts)


def session_outcome(
    session: RefinementSession,
    agent: Agent,
    core_tokens: int,
    *,
    held: bool = False,
    state: SessionStatus | None = None,
) -> Outcome:
    """The story of one finished session (see the module docstring). `state` is the session's status
    as it stands now (models/readmodels/sessions.py): a session rolled back since says so."""
    stats = session.stats if isinstance(session.stats, dict) else {}
    offline = (session.model or "").startswith("offline")
    # Who did the work, in words: with no model configured it was the built-in refiner, not "the model".
    worker = "The built-in offline refiner" if offline else "The agent's model"
    budget = agent.core_token_budget
    story = Outcome(tone="ok", headline="")

    removed, dedup_tokens = int(stats.get("dedup_removed") or 0), int(stats.get("dedup_tokens") or 0)
    if removed:
        start = (session.tokens_before or 0) + dedup_tokens
        story.before.append(
            f"Before the session, the content-blind dedup removed {_plural(removed, 'exact duplicate', 'exact duplicates')} "
            f"({dedup_tokens:,} tokens): core went from {start:,} to {session.tokens_before or 0:,} tokens. "
            "That is the starting figure below."
        )

    ops = session.ops_count or 0
    before, after = session.tokens_before, session.tokens_after
    change = (
        f"core tokens {before:,} → {after:,} ({after - before:+,})"
        if before is not None and after is not None
        else ""
    )
    status = session.status
    if status == "completed" and ops:
        story.headline = f"{worker} made {_plural(ops, 'operation', 'operations')}."
        detail = _operations(stats)
        story.during.append((detail + "; " if detail else "") + change + ".")
    elif status == "completed":
        story.headline = f"{worker} chose to change nothing."
        why = (
            "The built-in offline refiner merges only memories that state exactly the same fact; it found none."
            if offline
            else "Zero operations is a valid outcome: the model found nothing it should merge or tighten."
        )
        story.during.append(why)
    elif status == "consent_declined":
        story.tone = "warn"
        story.headline = "The agent declined to refine its memory."
        story.during.append(
            (
                "The built-in policy (no model configured) answered the consent question: no"
                if offline
                else "Its model answered the consent question with anything but an explicit yes"
            )
            + ", so nothing changed."
        )
    elif status == "skipped":
        story.headline = "The session was skipped."
        story.during.append(f"Reason: {session.error or 'nothing to do'}.")
    elif status == "terminated":
        story.tone = "bad"
        story.headline = "The circuit breaker rolled the whole session back."
        story.during.append(
            f"An operation would have left less than {agent.min_retention:.0%} of the starting core, so every "
            "change of this session was undone in the same transaction."
        )
    elif status == "incomplete":
        story.tone = "warn"
        story.headline = (
            f"The model stopped before finishing ({_plural(ops, 'operation', 'operations')} kept)."
        )
        story.during.append(
            "It never called complete_refinement within the turn and time limits; its applied operations stay."
        )
    elif status == "failed":
        story.tone = "bad"
        story.headline = "The session failed."
        story.during.append(f"Error: {session.error or 'unknown'} (the type only; messages are never shown).")
    elif status == "interrupted":
        story.tone = "warn"
        story.headline = "The session was interrupted (its worker stopped)."
        story.during.append("Every operation it applied is whole and audited.")
    else:
        story.headline = f"The session is {status.replace('_', ' ')}."
    chars = stats.get("consent_reason_chars")
    if isinstance(chars, int) and chars and status in ("completed", "consent_declined"):
        answer = "yes" if status == "completed" else "no"
        story.during.append(
            f"The built-in policy (no model configured) answered the consent question: {answer}."
            if offline
            else f"The agent's model answered the consent question ({answer}) with a reason of {chars:,} "
            "characters; its words are the agent's own and are not shown."
        )
    if session.trigger:
        story.during.append(f"Started by {TRIGGERS.get(session.trigger, session.trigger.replace('_', ' '))}.")

    over = core_tokens - budget
    percent = round(100 * core_tokens / max(budget, 1))
    if over > 0:
        story.now = f"Now {core_tokens:,} of {budget:,} core tokens ({percent}%): over budget by {over:,}."
        if story.tone == "ok":
            story.tone = "warn"
        story.next_steps.append(
            Step(
                f"Raise the budget if {core_tokens:,} tokens is what this agent needs.",
                url_for("agents.agent_page", agent_id=agent.id) + "#agent-settings",
                "Budget settings",
            )
        )
        if offline:
            story.next_steps.append(
                Step(
                    "Configure a model: the offline refiner only merges exact same-fact duplicates; a model can also tighten wording.",
                    url_for("agents.agent_page", agent_id=agent.id) + "#agent-settings",
                    "Model setting",
                )
            )
        story.next_steps.append(
            Step(
                "Review the largest memories and their duplicates (same hash prefix) in the memories list.",
                url_for("memories.index", agent_id=agent.id, sort="tokens", dir="desc"),
                "Largest memories",
            )
        )
        if held:
            story.next_steps.append(
                Step(
                    "The over-budget scan will not run this agent again until one of its memories changes: "
                    "the same memories would give the same result."
                )
            )
    else:
        story.now = f"Now {core_tokens:,} of {budget:,} core tokens ({percent}%): within budget."
    if state is not None and state.rolled_back and state.rollback is not None:
        story.tone = "warn"
        story.during.insert(0, story.headline)
        story.headline = "Rolled back: every change of this session is undone."
        story.next_steps.append(
            Step(
                "Put the session's changes back if the rollback was a mistake; that too is audited.",
                url_for("timeline.confirm_operation", op_id=state.rollback.op_id),
                "Undo the rollback…",
                dialog=True,
            )
        )
    elif ops and status in ("completed", "incomplete"):
        story.next_steps.append(
            Step(
                "Undo the whole session if its changes are wrong; the rollback can itself be undone.",
                url_for("timeline.confirm_session", session_id=session.id),
                "Roll back this session…",
                dialog=True,
            )
        )
    return story


def outcome_for(session: RefinementSession, state: SessionStatus | None = None) -> Outcome | None:
    """The outcome of a finished session, against the agent's totals today and its status now (looked
    up when not given); None while it runs."""
    if not session.finished:
        return None
    agent = db.session.get(Agent, session.agent_id)
    held = session.agent_id in held_agents([session.agent_id])
    state = state or session_statuses([session])[session.id]
    return session_outcome(session, agent, agent.core_tokens, held=held, state=state)
