"""The Mechanic's Exception as the console shows it: grants and the views recorded under them, an
admin's live grants, and the only two queries here that return memory text (`grant_contents`,
`audit_texts`), which refuse unless the grant is live and return only what it covers
(docs/explanation/architecture.md, "Privacy: who may read memory text")."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import and_, or_, select

from models.admins.mechanic import MechanicGrant, MechanicView
from models.admins.user import User
from models.db import db, utcnow
from models.history.audit import AuditContent, AuditLog
from models.memories.memory import AgentMemory
from models.readmodels.common import OrderKey, live_grants_of, memory_filter, page_of, users_by_id


@dataclass
class GrantRow:
    grant: MechanicGrant
    views: list[MechanicView]
    requester: User | None
    closed_by: str | None = None  # who revoked it, in words: an admin's email, or "the agent"


def grants_with_views(agent_id: int, limit: int = 50) -> list[GrantRow]:
    """Every grant on this agent (newest first, bounded) with each view recorded under it."""
    grants = db.session.scalars(
        select(MechanicGrant)
        .where(MechanicGrant.agent_id == agent_id)
        .order_by(MechanicGrant.id.desc())
        .limit(limit)
    ).all()
    if not grants:
        return []
    views = db.session.scalars(
        select(MechanicView)
        .where(MechanicView.grant_id.in_([g.id for g in grants]))
        .order_by(MechanicView.viewed_at.desc(), MechanicView.id.desc())
    ).all()
    by_grant: dict[int, list[MechanicView]] = defaultdict(list)
    for view in views:
        by_grant[view.grant_id].append(view)
    closers = [_admin_id(g.revoked_by) for g in grants]
    users = users_by_id(
        [g.requested_by for g in grants] + [v.user_id for v in views] + [i for i in closers if i is not None]
    )
    return [
        GrantRow(
            grant=g,
            views=by_grant[g.id],
            requester=users.get(g.requested_by),
            closed_by=_closer(g.revoked_by, users.get(closer) if closer is not None else None),
        )
        for g, closer in zip(grants, closers, strict=True)
    ]


def _admin_id(actor: str | None) -> int | None:
    kind, _, who = (actor or "").partition(":")
    return int(who) if kind == "admin" and who.isdigit() else None


def _closer(actor: str | None, admin: User | None) -> str | None:
    """Who revoked a grant, as the other pages name people: an admin by email."""
    if actor is None:
        return None
    if admin is not None:
        return admin.email
    if actor == "agent":
        return "the agent"
    kind, _, who = actor.partition(":")
    return f"{kind} ({who})" if who else kind


def grant_contents(
    grant: MechanicGrant, *, state: str = "active", page: int = 1, per_page: int = 100
) -> tuple[list[AgentMemory], int]:
    """Memories a live grant covers, with their content. Callers must check the grant and record the view."""
    if not grant.is_active():
        raise PermissionError("the grant is not active")
    criteria = memory_filter(grant.agent_id, state, None)
    if grant.scope != "all":
        criteria.append(AgentMemory.id.in_(list(grant.memory_ids or [])))
    order: list[OrderKey] = [AgentMemory.created_at.desc(), AgentMemory.id.desc()]
    return page_of(AgentMemory, criteria, order, page, per_page)


def audit_texts(grant: MechanicGrant, records: Iterable[AuditLog]) -> dict[int, dict[str, str | None]]:
    """Before/after text of the given audit records whose memory a live grant covers (record id → texts).

    A purged memory's text was redacted from its history: it comes back as None.
    """
    if not grant.is_active():
        raise PermissionError("the grant is not active")
    covered = [
        r
        for r in records
        if r.memory_id is not None and r.agent_id == grant.agent_id and grant.covers(r.memory_id)
    ]
    refs = {
        snap["content_ref"]
        for r in covered
        for snap in (r.before, r.after)
        if snap and snap.get("content_ref") is not None
    }
    texts: dict[int, str | None] = {}
    if refs:
        for row in db.session.execute(
            select(AuditContent.id, AuditContent.content).where(AuditContent.id.in_(sorted(refs)))
        ):
            texts[row.id] = row.content
    result: dict[int, dict[str, str | None]] = {}
    for record in covered:
        result[record.id] = {
            side: texts.get(snap["content_ref"]) if snap and snap.get("content_ref") is not None else None
            for side, snap in (("before", record.before), ("after", record.after))
        }
    return result


def active_grants_by_agent(user_id: int, agent_ids: Sequence[int]) -> dict[int, MechanicGrant]:
    """The admin's live grants on these agents (for a badge on lists)."""
    if not agent_ids:
        return {}
    grants = db.session.scalars(
        select(MechanicGrant).where(MechanicGrant.agent_id.in_(list(agent_ids)), *live_grants_of(user_id))
    ).all()
    return {g.agent_id: g for g in grants}


def pending_or_active_grant(agent_id: int, user_id: int) -> MechanicGrant | None:
    """The admin's newest grant on this agent that is still pending or live."""
    now = utcnow()
    return db.session.scalar(
        select(MechanicGrant)
        .where(
            MechanicGrant.agent_id == agent_id,
            MechanicGrant.requested_by == user_id,
            or_(
                MechanicGrant.status == "pending",
                and_(MechanicGrant.status == "active", MechanicGrant.expires_at > now),
            ),
        )
        .order_by(MechanicGrant.id.desc())
    )
