"""Embeddings per memory and the minimal relations layer (docs/spec/003-memory-system.md §2).

On create or update of a semantic memory, its top-K neighbours among the agent's active memories
with cosine ≥ `link_min` become edges (one per unordered pair, strength = score), audited as `link`.
Neighbours are found with one NumPy matrix product over the agent's stored vectors: for a batch, loaded
afresh; for the few memories of one API write (`link_related`'s per-write path, PER_WRITE or fewer), from
the agent's matrix this process keeps for memory.query (models/retrieval/vectors.py), so a write does not
reload the agent's vectors. `link_pending` is the catch-up job for memories written without it (imports,
older rows). Reading edges back is the query's: the ranking's relation boost (models/retrieval/ranking.py) and `models.retrieval.relations.neighbours`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from functools import cache as once
from typing import Any

import numpy as np
from flask import current_app
from sqlalchemy import Select, bindparam, insert, or_, select, update

from models import AgentMemory, MemoryEmbedding, MemoryRelation, atomic, db, utcnow
from models.changes.records import record_changes
from models.db import binary_rows
from models.history.audit import new_op_id
from models.retrieval import pgvector

from .embeddings import from_bytes, get_embedder, semantic_configured, to_bytes
from .neighbours import neighbours_from_cache, scanned

log = logging.getLogger(__name__)

BATCH = 256
SCORE_CHUNK = 1024  # batch rows scored per matrix product (bounds memory: rows x agent memories)
LINKED_TYPES = ("semantic",)
# Up to this many memories, link_related takes the per-write path (jobs/neighbours.py); the API enqueues
# one.
PER_WRITE = 16


def _settings() -> tuple[float, int]:
    config = current_app.config
    return float(config["RELATIONS_LINK_MIN"]), int(config["RELATIONS_TOP_K"])


def embed_memories(agent_id: int, memory_ids: Iterable[int] | None = None) -> int:
    """Store vectors for the agent's active memories that have none, or a stale one. Returns how many."""
    embedder = get_embedder()
    # The database picks the stale rows: usually none, so an agent's current vectors never cross the wire.
    stmt = (
        select(AgentMemory.id)
        .outerjoin(MemoryEmbedding, MemoryEmbedding.memory_id == AgentMemory.id)
        .where(
            AgentMemory.agent_id == agent_id,
            AgentMemory.deleted_at.is_(None),
            or_(
                MemoryEmbedding.memory_id.is_(None),
                MemoryEmbedding.content_hash != AgentMemory.content_hash,
                MemoryEmbedding.model != embedder.label,
            ),
        )
        .order_by(AgentMemory.id)
    )
    if memory_ids is not None:
        stmt = stmt.where(AgentMemory.id.in_(list(memory_ids)))
    stale = list(db.session.scalars(stmt))
    for start in range(0, len(stale), BATCH):
        chunk = stale[start : start + BATCH]
        rows = db.session.execute(
            select(AgentMemory.id, AgentMemory.content, AgentMemory.content_hash).where(
                AgentMemory.id.in_(chunk)
            )
        ).all()
        vectors = embedder.embed([r.content for r in rows])  # before the write: no lock held over the network
        with atomic():  # one unit of work per batch: a rerun redoes at most one batch
            existing = {
                e.memory_id: e
                for e in db.session.scalars(
                    select(MemoryEmbedding).where(MemoryEmbedding.memory_id.in_(chunk))
                )
            }
            for row, vector in zip(rows, vectors, strict=True):
                record = existing.get(row.id) or MemoryEmbedding(memory_id=row.id, agent_id=agent_id)
                record.model, record.dims = embedder.label, int(vector.shape[0])
                record.content_hash, record.vector, record.created_at = (
                    row.content_hash,
                    to_bytes(vector),
                    utcnow(),
                )
                db.session.add(record)
    if stale and len(vectors) and semantic_configured():  # pgvector, where the database has it: this
        pgvector.ensure_index(embedder.label, int(vectors[0].shape[0]))  # model's index, built once
    return len(stale)


def agent_vectors(
    agent_id: int, memory_types: tuple[str, ...] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(ids, matrix) of the agent's active memories with a current vector of the configured model."""
    stmt = (
        select(MemoryEmbedding.memory_id, MemoryEmbedding.vector)
        .join(AgentMemory, AgentMemory.id == MemoryEmbedding.memory_id)
        .where(
            MemoryEmbedding.agent_id == agent_id,
            MemoryEmbedding.model == get_embedder().label,
            MemoryEmbedding.content_hash == AgentMemory.content_hash,
            AgentMemory.deleted_at.is_(None),
        )
        .order_by(MemoryEmbedding.memory_id)
    )
    if memory_types:
        stmt = stmt.where(AgentMemory.memory_type.in_(memory_types))
    rows = binary_rows(stmt)
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
    # One vector model, so one width: a single buffer, not one small array per row.
    matrix = from_bytes(b"".join(r[1] for r in rows)).reshape(len(rows), -1)
    return np.array([r[0] for r in rows], dtype=np.int64), matrix


def _nearest(matrix: np.ndarray, rows: list[int], top_k: int, link_min: float):
    """For each row, its top_k other rows with cosine >= link_min, best first: (column, score) pairs.

    Scores come from one matrix product per SCORE_CHUNK rows (memory stays bounded for big batches);
    a vectorised threshold keeps only the candidates, so sorting touches a handful per row, not all
    of the agent's memories. Equal scores go to the lower column (the older memory): deterministic.
    """
    for start in range(0, len(rows), SCORE_CHUNK):
        chunk = np.asarray(rows[start : start + SCORE_CHUNK])
        scores = matrix[chunk] @ matrix.T
        scores[np.arange(len(chunk)), chunk] = -np.inf  # never link a memory to itself
        hit_rows, hit_columns = np.nonzero(scores >= link_min)  # row-major: columns ascending per row
        hit_scores = scores[hit_rows, hit_columns]
        bounds = np.searchsorted(hit_rows, np.arange(len(chunk) + 1))
        for row in range(len(chunk)):
            columns, values = (
                hit_columns[bounds[row] : bounds[row + 1]],
                hit_scores[bounds[row] : bounds[row + 1]],
            )
            best = np.lexsort((columns, -values))[:top_k]  # score descending, then column ascending
            yield list(zip(columns[best].tolist(), values[best].tolist(), strict=True))


def link_related(agent_id: int, memory_ids: Iterable[int]) -> int:
    """Create edges from these memories to their nearest neighbours. Idempotent. Returns edges added."""
    memory_ids = list(memory_ids)
    if not memory_ids:
        return 0
    link_min, top_k = _settings()
    if len(memory_ids) <= PER_WRITE:
        began, label = utcnow(), get_embedder().label
        found, stores = neighbours_from_cache(agent_id, memory_ids, link_min, top_k)
        added = _write_edges(agent_id, found, stores)
        scanned(agent_id, label, began, stores)
        return added
    embed_memories(agent_id)
    ids, matrix = agent_vectors(agent_id)
    if len(ids) < 2:
        return 0
    position = {int(mid): i for i, mid in enumerate(ids)}
    sources = [m for m in memory_ids if m in position]
    neighbours = _nearest(matrix, [position[m] for m in sources], top_k, link_min)
    found = [
        (source, [(int(ids[column]), strength) for column, strength in nearest])
        for source, nearest in zip(sources, neighbours, strict=True)
    ]
    return _write_edges(agent_id, found)


def _store_vectors(stores: list[dict]) -> None:
    """Insert or replace these memory_embeddings rows (jobs/neighbours.py); then pgvector's index for the
    model, where the database has it (as `embed_memories`)."""
    if not stores:
        return
    table = MemoryEmbedding.__table__
    new = [
        {k: v for k, v in row.items() if k not in ("replaces", "user_id")}
        for row in stores
        if not row["replaces"]
    ]
    if new:
        db.session.execute(insert(table), new)
    for row in (r for r in stores if r["replaces"]):
        values = {k: row[k] for k in ("model", "dims", "content_hash", "vector", "created_at")}
        db.session.execute(update(table).where(table.c.memory_id == row["memory_id"]).values(**values))
    if semantic_configured():
        pgvector.ensure_index(stores[0]["model"], stores[0]["dims"])


@once
def _edges_statement() -> Select[int, int]:
    """The stored edges with either end among the memories `ids`. Built once, bound at each run: the
    per-write job runs it on every write, and building and keying it cost about as much as running it."""
    ids: Any = bindparam("ids", expanding=True)
    return select(MemoryRelation.from_id, MemoryRelation.to_id).where(
        or_(MemoryRelation.from_id.in_(ids), MemoryRelation.to_id.in_(ids))
    )


def _write_edges(
    agent_id: int, found: list[tuple[int, list[tuple[int, float]]]], stores: list[dict] | None = None
) -> int:
    """Add the edges `found` (memory, [(neighbour, strength)]) not already stored, one per unordered pair,
    with one `link` audit record per linked memory, and store the vectors `stores` (rows of
    memory_embeddings; `replaces`: whether the memory has one already), in one unit of work. Returns edges
    added."""
    stores = stores or []
    sources = [source for source, _ in found]
    if not sources:
        with atomic():
            _store_vectors(stores)
        return 0
    # A memory whose first vector is stored here has no edge yet: an edge is only ever added here, once
    # both of its ends have a vector, and a vector row goes only with its memory (ON DELETE CASCADE). So
    # for a new memory, the per-write job's usual case, there are no stored edges to read.
    first_vector = {row["memory_id"] for row in stores if not row["replaces"]}
    linked_before = [source for source in sources if source not in first_vector]
    existing = {
        (min(a, b), max(a, b))
        for a, b in (db.session.execute(_edges_statement(), {"ids": linked_before}) if linked_before else ())
    }
    edges: list[dict] = []
    per_memory: dict[int, list[list]] = {}  # both ends of every new edge: it shows in each one's history
    for source, nearest in found:
        for target, strength in nearest:
            pair = (min(source, target), max(source, target))
            if pair in existing:
                continue
            existing.add(pair)
            edges.append(
                {"agent_id": agent_id, "from_id": pair[0], "to_id": pair[1], "strength": round(strength, 4)}
            )
            per_memory.setdefault(source, []).append([target, round(strength, 4)])
            per_memory.setdefault(target, []).append([source, round(strength, 4)])
    now = utcnow()
    with atomic():
        _store_vectors(stores)
        if edges:  # one executemany INSERT, not one ORM object per edge
            db.session.execute(
                insert(MemoryRelation.__table__), [{**edge, "created_at": now} for edge in edges]
            )
        # One audit record per linked memory (each end of an edge), metadata only, in multi-row INSERTs, so a
        # big batch costs a few statements rather than one per edge. It names the memory, so
        # the edge is a LINK in that memory's history and a `link` event; it has no snapshot, so the Time
        # Machine and the audit chain pass it by (a link changes no memory row).
        record_changes(
            [
                {
                    "op_id": new_op_id(),
                    "actor": "system:relations",
                    "action": "link",
                    "agent_id": agent_id,
                    "memory_id": memory,
                    "data": {"memory": memory, "linked": linked},
                }
                for memory, linked in sorted(per_memory.items())
            ]
        )
    return len(edges)


def link_pending() -> dict:
    """Catch-up: embed and link active semantic memories that have no current vector yet."""
    pending = db.session.execute(
        select(AgentMemory.agent_id, AgentMemory.id)
        .outerjoin(MemoryEmbedding, MemoryEmbedding.memory_id == AgentMemory.id)
        .where(
            AgentMemory.deleted_at.is_(None),
            AgentMemory.memory_type.in_(LINKED_TYPES),
            or_(
                MemoryEmbedding.memory_id.is_(None), MemoryEmbedding.content_hash != AgentMemory.content_hash
            ),
        )
        .order_by(AgentMemory.agent_id, AgentMemory.id)
        .limit(5000)
    ).all()
    by_agent: dict[int, list[int]] = {}
    for agent_id, memory_id in pending:
        by_agent.setdefault(agent_id, []).append(memory_id)
    edges = sum(link_related(agent_id, ids) for agent_id, ids in by_agent.items())
    log.info("relations: %d memories embedded and linked, %d edges", len(pending), edges)
    return {"memories": len(pending), "edges": edges}


# ----- vectors for memory.query: after an API write, and the backfill of what is stored -----


def embed_written(agent_id: int, memory_ids: list[int]) -> int:
    """The maintenance job after an API write of a memory the relations job does not link: store its
    vector (a no-op when it is current, or when no real embedder is configured). Returns how many."""
    if not semantic_configured():
        return 0
    return embed_memories(agent_id, memory_ids)


def stale_memories(agent_ids: Iterable[int] | None = None) -> list[tuple[int, int]]:
    """(agent_id, memory_id) of every active memory (of these agents, or all) without a current vector of
    the configured embedder, in order."""
    label = get_embedder().label
    stmt = (
        select(AgentMemory.agent_id, AgentMemory.id)
        .outerjoin(MemoryEmbedding, MemoryEmbedding.memory_id == AgentMemory.id)
        .where(
            AgentMemory.deleted_at.is_(None),
            or_(
                MemoryEmbedding.memory_id.is_(None),
                MemoryEmbedding.content_hash != AgentMemory.content_hash,
                MemoryEmbedding.model != label,
            ),
        )
        .order_by(AgentMemory.agent_id, AgentMemory.id)
    )
    if agent_ids is not None:
        stmt = stmt.where(AgentMemory.agent_id.in_(list(agent_ids)))
    return [(int(a), int(m)) for a, m in db.session.execute(stmt)]


BACKFILL_BATCH = 256


def backfill(pending: list[tuple[int, int]], on_progress: Callable[[int], None] | None = None) -> int:
    """Embed and store these (agent_id, memory_id) pairs (`stale_memories`), BACKFILL_BATCH at a time, each
    batch its own unit of work (an interrupted backfill resumes where it stopped). Returns how many were
    embedded; `on_progress(n)` is told after each batch."""
    done = 0
    by_agent: dict[int, list[int]] = {}
    for agent_id, memory_id in pending:
        by_agent.setdefault(agent_id, []).append(memory_id)
    for agent_id, ids in by_agent.items():
        for start in range(0, len(ids), BACKFILL_BATCH):
            chunk = ids[start : start + BACKFILL_BATCH]
            done += embed_memories(agent_id, chunk)
            if on_progress is not None:
                on_progress(len(chunk))
    return done
