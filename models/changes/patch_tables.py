"""The consent policy's tables (docs/explanation/governance.md, "Consent"): held patches and the signals that
corroborate them.

A `proposed_patches` row holds one write to a user-context field until it is confirmed, corroborated,
rejected, expires or goes stale; a `consent_signals` row is one independent signal for a benign
proposal. The rules that file, corroborate and decide them are in `patches.py`.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from models.db import Model, utcnow
from models.memories.fields import SCOPE_ID

# Column vocabularies: a patch's status and policy, the kinds of a consent signal, and the sources of
# a user's consent (each also a signal kind, and what a patch it confirmed names as decided_by).
PATCH_STATUSES = ("pending", "confirmed", "rejected", "expired", "stale")
POLICIES = ("consent", "signals")
CONSENT_SOURCES = ("chat_ack", "ui")
SIGNAL_KINDS = ("mention", "chat_ack", "ui", "tom")


class ProposedPatch(Model):
    __tablename__ = "proposed_patches"
    __table_args__ = (
        Index("ix_proposed_patches_agent_status", "agent_id", "status", "expires_at"),
        Index("ix_proposed_patches_value_key", "agent_id", "value_key", "status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), nullable=False)
    op: Mapped[str] = mapped_column(String(8), nullable=False)  # create | update
    field: Mapped[str] = mapped_column(String(64), nullable=False)
    memory_id: Mapped[int | None] = mapped_column(Integer)  # the memory an update targets
    user_id: Mapped[str | None] = mapped_column(SCOPE_ID.column())
    # The proposed write (the agent's own words); emptied when the patch is decided or expires.
    changes: Mapped[dict | None] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(12), nullable=False, default="pending")
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime)
    decided_by: Mapped[str | None] = mapped_column(String(16))
    result_memory_id: Mapped[int | None] = mapped_column(Integer)
    proposed_by: Mapped[str | None] = mapped_column(String(32))
    policy: Mapped[str] = mapped_column(
        String(12), nullable=False, default="consent", server_default="consent"
    )
    # What the patch proposes, hashed (never the text): a repeated mention finds its pending patch by it.
    value_key: Mapped[str | None] = mapped_column(String(64))
    # The user turn the proposing write came from; an acknowledgement must come from another turn.
    proposed_turn: Mapped[str | None] = mapped_column(SCOPE_ID.column())
    # Who confirmed it, and on what grounds: {"by": actor, "source": ..., "user_turn": ..., "at": ...}.
    acknowledgement: Mapped[dict | None] = mapped_column(JSON)


class ConsentSignal(Model):
    """One independent signal for a benign proposal; (kind, source) is unique per patch, so a repeat
    of the same signal (the same thread mentioning it again) counts once."""

    __tablename__ = "consent_signals"
    __table_args__ = (
        UniqueConstraint("patch_id", "kind", "source", name="uq_consent_signals_patch_kind_source"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    patch_id: Mapped[int] = mapped_column(
        ForeignKey("proposed_patches.id", name="fk_consent_signals_patch_id_proposed_patches"), nullable=False
    )
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    source: Mapped[str] = mapped_column(String(128), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)
