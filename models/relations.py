"""Derived knowledge about memories: embeddings, relation edges, and consolidation pair fingerprints.

None of these change a memory, so none goes through the mutation path's snapshots; edges are still
audited (action `link`, metadata only) as spec 003 §2 asks. Rows disappear with their memory
(ON DELETE CASCADE) when the TTL purge removes it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Float, ForeignKey, Index, Integer, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .db import db, utcnow


class MemoryEmbedding(db.Model):
    """One vector per memory (float32 bytes in a plain column: pgvector is not available everywhere)."""

    __tablename__ = "memory_embeddings"
    __table_args__ = (Index("ix_memory_embeddings_agent_model", "agent_id", "model"),)

    memory_id: Mapped[int] = mapped_column(ForeignKey("agent_memories.id", ondelete="CASCADE"), primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), nullable=False)
    model: Mapped[str] = mapped_column(String(100), nullable=False)
    dims: Mapped[int] = mapped_column(Integer, nullable=False)
    # The memory's content_hash when embedded: a different hash means the vector is stale.
    content_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    vector: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)


class MemoryRelation(db.Model):
    """A lightweight edge between two memories of one agent (spec 003 §2); one per ordered pair."""

    __tablename__ = "memory_relations"
    __table_args__ = (
        UniqueConstraint("from_id", "to_id", name="uq_memory_relations_pair"),
        Index("ix_memory_relations_to", "to_id"),
        Index("ix_memory_relations_agent", "agent_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), nullable=False)
    from_id: Mapped[int] = mapped_column(ForeignKey("agent_memories.id", ondelete="CASCADE"), nullable=False)
    to_id: Mapped[int] = mapped_column(ForeignKey("agent_memories.id", ondelete="CASCADE"), nullable=False)
    relation_type: Mapped[str] = mapped_column(String(32), nullable=False, default="related_to")
    strength: Mapped[float] = mapped_column(Float, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)


class PairFingerprint(db.Model):
    """A same-fact check already made: (low id, high id, rounded score), so it is not repeated for 14 days."""

    __tablename__ = "consolidation_fingerprints"
    __table_args__ = (
        UniqueConstraint("fingerprint", name="uq_consolidation_fingerprints_fingerprint"),
        Index("ix_consolidation_fingerprints_agent_checked", "agent_id", "checked_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), nullable=False)
    fingerprint: Mapped[str] = mapped_column(String(64), nullable=False)
    verdict: Mapped[str] = mapped_column(String(16), nullable=False)  # same | different | merged | skipped
    checked_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)


def pair_fingerprint(a: int, b: int, score: float) -> str:
    """Spec 003 §4: hash of (id_a, id_b, round(score, 2)), order-independent."""
    import hashlib

    low, high = sorted((a, b))
    return hashlib.sha256(f"{low}:{high}:{round(score, 2):.2f}".encode()).hexdigest()
