"""The Mechanic's Exception: the only way a human may read an agent's memory.

A grant is purpose-specific (a written purpose), scoped (all memories, or listed ids), time-limited
(at most 60 minutes from consent), and explicitly consented to by the agent. It expires on its own,
the agent can revoke it, and every view under it is recorded (a row here and an audit record).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, String, Text, select
from sqlalchemy.orm import Mapped, mapped_column

from models.db import Model, atomic, db, utcnow
from models.errors import NotFound, ValidationFailed
from models.history.audit import new_op_id, write_audit
from models.memories.memory import AgentMemory

MAX_GRANT_MINUTES = 60
MIN_PURPOSE_CHARS = 10
MAX_PURPOSE_CHARS = 1000
MAX_SCOPED_IDS = 200
GRANT_STATUSES = ("pending", "active", "declined", "revoked", "expired")


class MechanicGrant(Model):
    __tablename__ = "mechanic_grants"
    __table_args__ = (Index("ix_mechanic_grants_agent_status", "agent_id", "status"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), nullable=False)
    requested_by: Mapped[int] = mapped_column(ForeignKey("users.id"), nullable=False)
    purpose: Mapped[str] = mapped_column(Text, nullable=False)
    scope: Mapped[str] = mapped_column(String(8), nullable=False)  # all | ids
    memory_ids: Mapped[list] = mapped_column(JSON, nullable=False, default=list)
    duration_minutes: Mapped[int] = mapped_column(Integer, nullable=False)
    status: Mapped[str] = mapped_column(String(12), nullable=False, default="pending")
    requested_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime)
    decision_reason: Mapped[str | None] = mapped_column(String(300))
    decided_by: Mapped[str | None] = mapped_column(String(32))  # offline policy, pre-consent, the model
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime)
    revoked_by: Mapped[str | None] = mapped_column(String(64))
    job_id: Mapped[str | None] = mapped_column(String(64))

    def is_active(self, now: datetime | None = None) -> bool:
        """Active means consented, not revoked, and not yet expired — checked on every use."""
        now = now or utcnow()
        return self.status == "active" and self.expires_at is not None and self.expires_at > now

    def current_status(self, now: datetime | None = None) -> str:
        if self.status == "active" and not self.is_active(now):
            return "expired"
        return self.status

    def seconds_left(self, now: datetime | None = None) -> int:
        if not self.is_active(now) or self.expires_at is None:
            return 0
        return max(0, int((self.expires_at - (now or utcnow())).total_seconds()))

    def covers(self, memory_id: int) -> bool:
        return self.scope == "all" or memory_id in set(self.memory_ids or [])

    def __repr__(self) -> str:
        return f"<MechanicGrant #{self.id} agent={self.agent_id} {self.status}>"


class MechanicView(Model):
    """One page view under a grant: who, when, which page, how many memories were shown."""

    __tablename__ = "mechanic_views"
    __table_args__ = (Index("ix_mechanic_views_grant", "grant_id", "viewed_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    grant_id: Mapped[int] = mapped_column(ForeignKey("mechanic_grants.id"), nullable=False)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), nullable=False)
    path: Mapped[str] = mapped_column(String(300), nullable=False)
    memory_ids: Mapped[list] = mapped_column(JSON, nullable=False, default=list)
    viewed_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)


def request_grant(
    agent_id: int, user_id: int, purpose: Any, scope: Any, memory_ids: Any, minutes: Any
) -> MechanicGrant:
    """An admin asks for access; nothing is readable until the agent consents."""
    if not isinstance(purpose, str) or len(purpose.strip()) < MIN_PURPOSE_CHARS:
        raise ValidationFailed(f"a written purpose of at least {MIN_PURPOSE_CHARS} characters is required")
    if len(purpose) > MAX_PURPOSE_CHARS:
        raise ValidationFailed(f"the purpose is limited to {MAX_PURPOSE_CHARS} characters")
    if scope not in ("all", "ids"):
        raise ValidationFailed("scope must be 'all' or 'ids'")
    if isinstance(minutes, bool) or not isinstance(minutes, int) or not 1 <= minutes <= MAX_GRANT_MINUTES:
        raise ValidationFailed(f"duration must be 1 to {MAX_GRANT_MINUTES} minutes")
    ids: list[int] = []
    if scope == "ids":
        if not isinstance(memory_ids, list) or not memory_ids or len(memory_ids) > MAX_SCOPED_IDS:
            raise ValidationFailed(f"list 1 to {MAX_SCOPED_IDS} memory ids for an 'ids' scope")
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in memory_ids):
            raise ValidationFailed("memory ids must be integers")
        ids = sorted(set(memory_ids))
        found = set(
            db.session.scalars(
                select(AgentMemory.id).where(AgentMemory.agent_id == agent_id, AgentMemory.id.in_(ids))
            )
        )
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFound("memories not found for this agent: " + ", ".join(f"#{i}" for i in missing))
    with atomic():
        grant = MechanicGrant(
            agent_id=agent_id,
            requested_by=user_id,
            purpose=purpose.strip(),
            scope=scope,
            memory_ids=ids,
            duration_minutes=minutes,
            status="pending",
            requested_at=utcnow(),
        )
        db.session.add(grant)
        db.session.flush()
        _audit(grant, f"admin:{user_id}", "mechanic_requested", scope=scope, ids=len(ids), minutes=minutes)
    return grant


def decide_grant(grant_id: int, consent: bool, *, reason: str = "", decided_by: str) -> MechanicGrant:
    """Record the agent's answer. Consent starts the clock: expiry is counted from now."""
    with atomic():
        grant = _load(grant_id)
        if grant.status != "pending":
            raise ValidationFailed(f"grant {grant_id} is {grant.status}, not pending")
        now = utcnow()
        grant.decided_at = now
        grant.decided_by = decided_by[:32]
        grant.decision_reason = (reason or "")[:300] or None
        if consent:
            grant.status = "active"
            grant.expires_at = now + timedelta(minutes=grant.duration_minutes)
        else:
            grant.status = "declined"
        _audit(
            grant,
            "agent",
            "mechanic_consented" if consent else "mechanic_declined",
            decided_by=grant.decided_by,
        )
    return grant


def revoke_grant(grant_id: int, *, actor: str, agent_id: int | None = None) -> MechanicGrant:
    """The agent (or an admin) ends a grant at once. `agent_id` restricts the lookup to that agent's grants."""
    with atomic():
        grant = _load(grant_id, agent_id)
        if grant.current_status() not in ("pending", "active"):
            raise ValidationFailed(f"grant {grant_id} is already {grant.current_status()}")
        grant.status = "revoked"
        grant.revoked_at = utcnow()
        grant.revoked_by = actor
        _audit(grant, actor, "mechanic_revoked")
    return grant


def active_grant(agent_id: int, user_id: int, now: datetime | None = None) -> MechanicGrant | None:
    """The admin's live grant on this agent, if any (the newest one)."""
    now = now or utcnow()
    return db.session.scalar(
        select(MechanicGrant)
        .where(
            MechanicGrant.agent_id == agent_id,
            MechanicGrant.requested_by == user_id,
            MechanicGrant.status == "active",
            MechanicGrant.expires_at > now,
        )
        .order_by(MechanicGrant.id.desc())
    )


def record_view(grant: MechanicGrant, user_id: int, path: str, memory_ids: list[int]) -> MechanicView:
    """Every page that shows content under a grant writes a view row and an audit record, committed."""
    if not grant.is_active():
        raise ValidationFailed("the grant is not active")
    with atomic():
        view = MechanicView(
            grant_id=grant.id, user_id=user_id, path=path[:300], memory_ids=sorted(set(memory_ids))
        )
        db.session.add(view)
        _audit(grant, f"admin:{user_id}", "mechanic_view", path=path[:300], memories=len(set(memory_ids)))
    return view


def expire_grants(now: datetime | None = None) -> int:
    """Mark lapsed grants expired (their use is already refused by is_active; this keeps lists tidy)."""
    now = now or utcnow()
    with atomic():
        lapsed = db.session.scalars(
            select(MechanicGrant).where(MechanicGrant.status == "active", MechanicGrant.expires_at <= now)
        ).all()
        for grant in lapsed:
            grant.status = "expired"
            _audit(grant, "system:mechanic", "mechanic_expired")
    return len(lapsed)


def _load(grant_id: int, agent_id: int | None = None) -> MechanicGrant:
    grant = db.session.get(MechanicGrant, grant_id) if isinstance(grant_id, int) else None
    if grant is None or (agent_id is not None and grant.agent_id != agent_id):
        raise NotFound(f"grant {grant_id} not found")
    return grant


def _audit(grant: MechanicGrant, actor: str, action: str, **data: Any) -> None:
    # Metadata only: the purpose is the admin's words and stays on the grant row, not in the log.
    write_audit(
        op_id=new_op_id(),
        actor=actor,
        action=action,
        agent_id=grant.agent_id,
        data={"grant_id": grant.id, **data},
    )
