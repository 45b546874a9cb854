"""Consent policy (spec 003 §10): sensitive user-context writes wait for the user's consent.

A memory that sets a user-context field is tagged `field:<name>`. Creating or updating one whose
field is sensitive (preferred name, pronouns, city, language) does not touch `agent_memories`: it
files a proposed patch, held for 7 days. The agent confirms it once the user has agreed (explicit
chat acknowledgement or a UI click), and only then is the change applied, through the mutation
path, with the decision in the audit log. Rejected and expired patches are emptied: the proposed
text is dropped and only metadata remains. Benign fields (tone, goals, ...) apply at once.

Deleting such a memory is not held: removing personal data never needs consent, and a soft delete
is restorable.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, String, select
from sqlalchemy.orm import Mapped, mapped_column

from .audit import new_op_id, write_audit
from .db import atomic, db, utcnow
from .errors import DomainError, NotFound, ValidationFailed
from .memory import AgentMemory
from .mutations import AGENT_ACTOR, create_memory, update_memory

SENSITIVE_FIELDS = frozenset({"preferred_name", "pronouns", "city", "language"})
FIELD_TAG_PREFIX = "field:"
HOLD = timedelta(days=7)
PATCH_STATUSES = ("pending", "confirmed", "rejected", "expired", "stale")
CONSENT_SOURCES = ("chat_ack", "ui")


class PatchNotPending(DomainError):
    code = "patch_not_pending"
    http_status = 409


class ProposedPatch(db.Model):
    __tablename__ = "proposed_patches"
    __table_args__ = (Index("ix_proposed_patches_agent_status", "agent_id", "status", "expires_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), nullable=False)
    op: Mapped[str] = mapped_column(String(8), nullable=False)  # create | update
    field: Mapped[str] = mapped_column(String(64), nullable=False)
    memory_id: Mapped[int | None] = mapped_column(Integer)  # the memory an update targets
    user_id: Mapped[str | None] = mapped_column(String(128))
    # The proposed write (the agent's own words); emptied when the patch is decided or expires.
    changes: Mapped[dict | None] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(12), nullable=False, default="pending")
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime)
    decided_by: Mapped[str | None] = mapped_column(String(16))
    result_memory_id: Mapped[int | None] = mapped_column(Integer)


def field_tags(tags: Iterable[str] | None) -> set[str]:
    return {
        t[len(FIELD_TAG_PREFIX) :]
        for t in tags or []
        if isinstance(t, str) and t.startswith(FIELD_TAG_PREFIX)
    }


def sensitive_fields(tags: Iterable[str] | None) -> list[str]:
    """The sensitive user-context fields these tags declare (sorted)."""
    return sorted(field_tags(tags) & SENSITIVE_FIELDS)


def _audit(patch: ProposedPatch, action: str, **data: Any) -> None:
    # Metadata only: the proposed text stays on the patch row and goes when the patch is decided.
    write_audit(
        op_id=new_op_id(),
        actor=AGENT_ACTOR,
        action=action,
        agent_id=patch.agent_id,
        data={
            "patch_id": patch.id,
            "op": patch.op,
            "field": patch.field,
            "memory_id": patch.memory_id,
            **data,
        },
    )


def propose(
    agent_id: int, op: str, field: str, changes: dict[str, Any], memory_id: int | None = None
) -> ProposedPatch:
    """Hold a sensitive write for consent (7 days). `changes` are validated arguments of the mutation."""
    if op not in ("create", "update"):
        raise ValidationFailed("a patch creates or updates a memory")
    with atomic():
        now = utcnow()
        patch = ProposedPatch(
            agent_id=agent_id,
            op=op,
            field=field,
            memory_id=memory_id,
            user_id=changes.get("user_id"),
            changes=changes,
            status="pending",
            created_at=now,
            expires_at=now + HOLD,
        )
        db.session.add(patch)
        db.session.flush()
        _audit(patch, "consent_proposed", expires_at=patch.expires_at.isoformat())
    return patch


def _load(agent_id: int, patch_id: int, *, lock: bool = False) -> ProposedPatch:
    stmt = select(ProposedPatch).where(ProposedPatch.id == patch_id, ProposedPatch.agent_id == agent_id)
    patch = db.session.scalar(stmt.with_for_update() if lock else stmt)
    if patch is None:  # another agent's patch is reported like a missing one
        raise NotFound(f"patch {patch_id} not found")
    return patch


def _close(patch: ProposedPatch, status: str, decided_by: str | None = None) -> None:
    patch.status = status
    patch.decided_at = utcnow()
    patch.decided_by = decided_by
    patch.changes = None


def expire_patches(agent_id: int | None = None, now: datetime | None = None) -> int:
    """Close pending patches past their hold (dropping the proposed text); audited. Safe to re-run."""
    now = now or utcnow()
    with atomic():
        stmt = select(ProposedPatch).where(ProposedPatch.status == "pending", ProposedPatch.expires_at <= now)
        if agent_id is not None:
            stmt = stmt.where(ProposedPatch.agent_id == agent_id)
        lapsed = db.session.scalars(stmt.with_for_update()).all()
        for patch in lapsed:
            _close(patch, "expired")
            _audit(patch, "consent_expired")
    return len(lapsed)


def list_patches(agent_id: int, status: str | None = None, limit: int = 100) -> list[ProposedPatch]:
    expire_patches(agent_id)
    stmt = select(ProposedPatch).where(ProposedPatch.agent_id == agent_id)
    if status is not None:
        stmt = stmt.where(ProposedPatch.status == status)
    return list(db.session.scalars(stmt.order_by(ProposedPatch.id.desc()).limit(limit)))


def get_patch(agent_id: int, patch_id: int) -> ProposedPatch:
    expire_patches(agent_id)
    return _load(agent_id, patch_id)


def confirm(agent_id: int, patch_id: int, source: str = "chat_ack") -> ProposedPatch:
    """The user consented: apply the held write through the mutation path, in one transaction."""
    if source not in CONSENT_SOURCES:
        raise ValidationFailed(f"consent source must be one of {', '.join(CONSENT_SOURCES)}", field="source")
    expire_patches(agent_id)
    stale = False
    with atomic():
        patch = _load(agent_id, patch_id, lock=True)
        if patch.status != "pending":
            raise PatchNotPending(f"patch {patch_id} is {patch.status}, not pending", status=patch.status)
        changes = dict(patch.changes or {})
        data = {"patch_id": patch.id, "consent": source}
        if patch.op == "update" and not _is_active(agent_id, patch.memory_id):
            stale = True
            _close(patch, "stale", source)
            _audit(patch, "consent_stale")
        else:
            if patch.op == "create":
                memory = create_memory(
                    agent_id, changes.pop("content"), actor=AGENT_ACTOR, data=data, **changes
                )
            else:
                memory = update_memory(agent_id, patch.memory_id, actor=AGENT_ACTOR, **changes)
            _close(patch, "confirmed", source)
            patch.result_memory_id = memory.id
            _audit(patch, "consent_confirmed", source=source, result_memory_id=memory.id)
    if stale:  # closed and committed above; the caller learns why nothing was applied
        raise PatchNotPending(
            f"patch {patch_id} targets memory #{patch.memory_id}, which is gone; the patch is closed",
            status="stale",
        )
    return patch


def _is_active(agent_id: int, memory_id: int | None) -> bool:
    return (
        memory_id is not None
        and db.session.scalar(
            select(AgentMemory.id).where(
                AgentMemory.id == memory_id,
                AgentMemory.agent_id == agent_id,
                AgentMemory.deleted_at.is_(None),
            )
        )
        is not None
    )


def reject(agent_id: int, patch_id: int) -> ProposedPatch:
    """The user declined: the held write is dropped, nothing else changes."""
    expire_patches(agent_id)
    with atomic():
        patch = _load(agent_id, patch_id, lock=True)
        if patch.status != "pending":
            raise PatchNotPending(f"patch {patch_id} is {patch.status}, not pending", status=patch.status)
        _close(patch, "rejected", "agent")
        _audit(patch, "consent_rejected")
    return patch


def applied_memory(agent_id: int, patch: ProposedPatch) -> AgentMemory | None:
    """The memory a confirmed patch created or changed."""
    if patch.result_memory_id is None:
        return None
    return db.session.scalar(
        select(AgentMemory).where(AgentMemory.id == patch.result_memory_id, AgentMemory.agent_id == agent_id)
    )
