"""The caller's own settings: profile, self-authored refinement prompt, Mechanic pre-consent and grants."""

from __future__ import annotations

from sqlalchemy import select

from models import db
from models.admins.mechanic import MechanicGrant, revoke_grant
from models.changes.agent_settings import set_refinement_prompt, update_agent_settings
from models.changes.rules import AGENT_ACTOR
from models.history import events

from .auth import allowed_categories, current_agent
from .blueprint import api
from .convert import grant_out
from .schemas import (
    AgentOut,
    EventCountOut,
    GrantList,
    GrantOut,
    PreconsentIn,
    PreconsentOut,
    RecallShareOut,
    RefinementPromptIn,
    RefinementPromptOut,
)


def _agent_out() -> AgentOut:
    agent = current_agent()
    return AgentOut(
        id=agent.id,
        name=agent.name,
        role=agent.role,
        active=agent.active,
        core_token_budget=agent.core_token_budget,
        core_token_usage=agent.core_token_usage,
        min_retention=agent.min_retention,
        mechanic_preconsent=agent.mechanic_preconsent,
        has_refinement_prompt=bool(agent.refinement_prompt),
        last_refinement_at=agent.last_refinement_at,
        categories=allowed_categories(),
        events=[EventCountOut(**vars(row)) for row in events.counts(agent.id)],
        recall=[RecallShareOut(**vars(r), share=r.share) for r in events.recall_shares(agent.id)],
    )


@api.route("/agent", "GET", summary="Your own settings", tag="agent", responses={200: AgentOut})
def get_agent():
    """Name, role and its categories, core token budget and usage, when it was last refined, retention
    threshold, pre-consent, event counts by node and op over 24 hours and 7 days, and the share of your
    noted turns that recalled (POST /turns)."""
    return _agent_out()


@api.route(
    "/agent/refinement-prompt",
    "GET",
    summary="Your self-authored refinement prompt (docs/spec/002-refinement-lessons.md C)",
    tag="agent",
    responses={200: RefinementPromptOut},
)
def get_refinement_prompt():
    prompt = current_agent().refinement_prompt
    return RefinementPromptOut(refinement_prompt=prompt, is_default=not prompt)


@api.route(
    "/agent/refinement-prompt",
    "PUT",
    summary="Write your own refinement prompt",
    tag="agent",
    body=RefinementPromptIn,
    responses={200: RefinementPromptOut},
)
def put_refinement_prompt(body: RefinementPromptIn):
    """Up to 4,000 characters, used in your next refinement session after the global safety rules.
    Null or blank restores the conservative default. Audited (its length, never its words)."""
    agent = set_refinement_prompt(current_agent().id, body.refinement_prompt, actor=AGENT_ACTOR)
    return RefinementPromptOut(
        refinement_prompt=agent.refinement_prompt, is_default=not agent.refinement_prompt
    )


@api.route(
    "/agent/mechanic-preconsent",
    "PUT",
    summary="Pre-consent to the Mechanic's Exception",
    tag="agent",
    body=PreconsentIn,
    responses={200: PreconsentOut},
)
def put_mechanic_preconsent(body: PreconsentIn):
    """With pre-consent, an admin's purpose-specific, time-limited request to view your memories is granted
    without asking your model first; every view is still recorded and you can revoke any grant. Audited."""
    agent = update_agent_settings(current_agent().id, actor=AGENT_ACTOR, mechanic_preconsent=body.preconsent)
    return PreconsentOut(mechanic_preconsent=agent.mechanic_preconsent)


@api.route(
    "/mechanic/grants",
    "GET",
    summary="Mechanic's Exception grants on your memories",
    tag="agent",
    responses={200: GrantList},
)
def list_grants():
    """Newest first, with the admin's stated purpose, scope, status and expiry."""
    grants = db.session.scalars(
        select(MechanicGrant)
        .where(MechanicGrant.agent_id == current_agent().id)
        .order_by(MechanicGrant.id.desc())
    ).all()
    return GrantList(grants=[grant_out(g) for g in grants])


@api.route(
    "/mechanic/grants/<int:grant_id>/revoke",
    "POST",
    summary="Revoke a grant at once",
    tag="agent",
    responses={200: GrantOut},
)
def revoke_mechanic_grant(grant_id: int):
    """A pending or active grant ends now (audited); another agent's grant id is not found."""
    grant = revoke_grant(grant_id, actor=AGENT_ACTOR, agent_id=current_agent().id)
    return grant_out(grant)
