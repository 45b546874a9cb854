"""Derived knowledge about memories: embeddings, relation edges, and consolidation pair fingerprints.

None of these change a memory, so none goes through the mutation path's snapshots; edges are still
audited (action `link`, metadata only) as docs/spec/003-memory-system.md §2 asks. Rows disappear with their memory
(ON DELETE CASCADE) when the TTL purge removes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    UniqueConstraint,
    case,
    or_,
    select,
)
from sqlalchemy.orm import Mapped, mapped_column

from models.db import Model, db, utcnow


class MemoryEmbedding(Model):
    """One vector per memory (float32 bytes in a plain column: pgvector is not available everywhere).

    Written by the embedding jobs (jobs/embeddings.py, jobs/relations.py); `created_at` is when the vector
    was (re)computed, which is what memory.query's in-process matrices refresh by."""

    __tablename__ = "memory_embeddings"
    __table_args__ = (
        Index("ix_memory_embeddings_agent_model", "agent_id", "model"),
        # memory.query's matrices refresh from the rows embedded since their last look (models/retrieval/vectors.py).
        Index("ix_memory_embeddings_agent_created", "agent_id", "created_at"),
    )

    memory_id: Mapped[int] = mapped_column(
        ForeignKey("agent_memories.id", ondelete="CASCADE"), primary_key=True
    )
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"), nullable=False)
    model: Mapped[str] = mapped_column(String(100), nullable=False)
    dims: Mapped[int] = mapped_column(Integer, nullable=False)
    # The memory's content_hash when embedded: a different hash means the vector is stale.
    content_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    vector: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)


class MemoryRelation(Model):
    """A lightweight edge between two memories of one agent (docs/spec/003-memory-system.md §2); one per ordered pair."""

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


class PairFingerprint(Model):
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


@dataclass(frozen=True)
class Neighbour:
    """An active memory linked to one of `sources`: the strongest such edge."""

    id: int
    category: str | None
    content: str
    related_to: int
    strength: float


def neighbours(
    agent_id: int,
    sources: Sequence[int],
    *,
    categories: Iterable[str | None] | None = None,
    where: Sequence = (),
    params: Mapping[str, Any] | None = None,
    limit: int = 2,
) -> list[Neighbour]:
    """The `limit` strongest active neighbours of `sources` (docs/spec/003-memory-system.md §2's "1-2 related bullets").

    Only the agent's own memories, never one of `sources`, only within `categories` when given (the
    caller's allowlist; None: memories without a category) and the extra `where` clauses on the memory, binding `params` (the request's filters), strongest
    edge first, each neighbour once. One query.
    """
    from models.memories.memory import AgentMemory  # late: memory imports db too, keep this module light

    sources = list(dict.fromkeys(int(s) for s in sources))
    if not sources or limit <= 0:
        return []
    edges = MemoryRelation.__table__.c
    other = case((edges.from_id.in_(sources), edges.to_id), else_=edges.from_id)
    source = case((edges.from_id.in_(sources), edges.from_id), else_=edges.to_id)
    stmt = (
        select(AgentMemory.id, AgentMemory.category, AgentMemory.content, source, edges.strength)
        .select_from(MemoryRelation.__table__)
        .join(AgentMemory, AgentMemory.id == other)
        .where(
            edges.agent_id == agent_id,
            or_(edges.from_id.in_(sources), edges.to_id.in_(sources)),
            AgentMemory.agent_id == agent_id,
            AgentMemory.deleted_at.is_(None),
            AgentMemory.id.not_in(sources),
            *where,
        )
        .order_by(edges.strength.desc(), AgentMemory.id)
        .limit(limit * len(sources))  # a neighbour repeats at most once per source
    )
    if categories is not None:
        from models.memories.categories import in_categories

        stmt = stmt.where(in_categories(AgentMemory.category, categories))
    found: dict[int, Neighbour] = {}
    for memory_id, category, content, related_to, strength in db.session.execute(stmt, dict(params or {})):
        if memory_id not in found:
            found[memory_id] = Neighbour(memory_id, category, content, int(related_to), float(strength))
        if len(found) == limit:
            break
    return list(found.values())


def pair_fingerprint(a: int, b: int, score: float) -> str:
    """docs/spec/003-memory-system.md §4: hash of (id_a, id_b, round(score, 2)), order-independent."""
    import hashlib

    low, high = sorted((a, b))
    return hashlib.sha256(f"{low}:{high}:{round(score, 2):.2f}".encode()).hexdigest()
