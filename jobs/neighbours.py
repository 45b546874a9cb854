"""The per-write linking job's neighbours (jobs/relations.py `link_related` on the few memories of one API
write): found in the agent's vector matrix this process keeps for memory.query
(models/retrieval/vectors.py) rather than by reloading every vector of the agent, which cost the job tens of
milliseconds at a few thousand memories (docs/benchmarks.md, "The per-write linking job")."""

from __future__ import annotations

from datetime import datetime
from functools import cache as once
from typing import Any

import numpy as np
from flask import current_app
from sqlalchemy import CompoundSelect, Select, bindparam, or_, select, union_all

from models import AgentMemory, MemoryEmbedding, db, utcnow
from models.db import binary_rows
from models.retrieval import vectors

from .embeddings import from_bytes, get_embedder, to_bytes

# The per-write path asks the cached matrix for this many candidates a memory per edge wanted, so that
# those dropped when checked against the database (deleted, rewritten since the matrix was refreshed) or
# below RELATIONS_LINK_MIN once scored from the stored vectors leave enough.
CANDIDATES_PER_EDGE = 3


def neighbours_from_cache(
    agent_id: int, memory_ids: list[int], link_min: float, top_k: int
) -> tuple[list[tuple[int, list[tuple[int, float]]]], list[dict]]:
    """The per-write path: ((memory, its top_k neighbours with cosine >= link_min, best first) for each of
    these active memories; the vectors to store, of these memories and of any other the agent has whose
    vector is missing or stale, for `_write_edges` to write in its unit of work).

    Candidates come from the agent's matrix this process keeps for memory.query (vectors.cache(): refreshed
    incrementally, at most once a second; past EXACT_ROWS rows, from the same sign-bit shortlist as
    memory.query's dense step), then are checked against the database and scored exactly from their
    stored vectors: a memory deleted or rewritten since the last refresh is never linked, and every
    strength is the cosine of the vectors stored now. A memory embedded by another process within the
    last refresh interval may be missed as a neighbour; its own write links it to this one.

    Other memories without a current vector (written around the API: imports, an admin) are embedded
    too, as the batch path does, so they are neighbours: all of the agent's on this process's first job
    for it, then those written since (`_scan_window`)."""
    embedder = get_embedder()
    label = embedder.label
    since = _scan_window(agent_id, label)
    params = {"agent": agent_id, "label": label, "ids": memory_ids, "since": since}
    rows = db.session.execute(_memories_to_read(since is not None), params).all()
    current = {
        int(r[0]): from_bytes(bytes(r[4]))
        for r in rows
        if r[2] == r[1] and r[3] == label and r[4] is not None
    }
    missing = [int(r[0]) for r in rows if int(r[0]) not in current]
    texts = {int(r[0]): r[6] for r in rows}
    hashes = {int(r[0]): r[1] for r in rows}
    had_row = {int(r[0]) for r in rows if r[2] is not None}
    users = {int(r[0]): r[5] for r in rows}
    embedded = dict(zip(missing, embedder.embed([texts[i] for i in missing]), strict=True)) if missing else {}
    now = utcnow()
    stores = [
        {
            "memory_id": i,
            "agent_id": agent_id,
            "model": label,
            "dims": int(v.shape[0]),
            "content_hash": hashes[i],
            "vector": to_bytes(v),
            "created_at": now,
            "replaces": i in had_row,
            "user_id": users[i],
        }
        for i, v in embedded.items()
    ]
    known = {**embedded, **current}
    sources = {i: known[i] for i in memory_ids if i in known}
    if not sources:
        return [], stores
    matrix = vectors.cache().matrix(agent_id, label)
    count = top_k * CANDIDATES_PER_EDGE + len(sources)
    candidates = {
        source: [int(i) for i in matrix.nearest(vector, count)[0] if i != source]
        for source, vector in sources.items()
    }
    # Memories embedded in this job are not in the matrix yet: they are candidates of every source.
    fresh = [i for i in embedded if i not in sources]
    looked_up = sorted({i for found in candidates.values() for i in found} - set(embedded) - set(current))
    stored = {**_live_vectors(agent_id, label, matrix, looked_up), **current, **embedded}
    found = []
    for source, vector in sources.items():
        scored = [
            (target, float(stored[target] @ vector))
            for target in [*candidates[source], *fresh, *(s for s in sources if s != source)]
            if target in stored
        ]
        # Score descending, then the older memory first: as the batch path orders them.
        best = sorted({p for p in scored if p[1] >= link_min}, key=lambda p: (-p[1], p[0]))
        found.append((source, best[:top_k]))
    return found, stores


# The per-write path's statements are built once (parameters bound at each run): building and keying a
# new statement of this size cost about as much as running it, a millisecond of the job between them.


@once
def _memories_to_read(windowed: bool) -> CompoundSelect:
    """`neighbours_from_cache`'s one read: the memories `ids` of the agent and its others without a current
    vector of `label` (since `since` when `windowed`), active, each with its stored vector if any. Two
    parts, so each is found by its index: these memories by id, the others by the agent's recency."""
    m, e = AgentMemory, MemoryEmbedding
    columns: tuple[Any, ...] = (m.id, m.content_hash, e.content_hash, e.model, e.vector, m.user_id, m.content)

    def read(*where: Any) -> Select[Any]:
        base = select(*columns).outerjoin(e, e.memory_id == m.id)
        return base.where(m.agent_id == bindparam("agent"), m.deleted_at.is_(None), *where)

    ids: Any = bindparam("ids", expanding=True)
    stale = or_(e.memory_id.is_(None), e.content_hash != m.content_hash, e.model != bindparam("label"))
    others = read(stale, m.id.not_in(ids), *([m.updated_at >= bindparam("since")] if windowed else []))
    return union_all(read(m.id.in_(ids)), others)


@once
def _live_statement() -> Select[int, datetime]:
    """`_live_vectors`' read: those of the memories `ids` of the agent that are active with a current
    vector of `label`, and when it was stored."""
    m, e = AgentMemory, MemoryEmbedding
    return (
        select(e.memory_id, e.created_at)
        .join(m, m.id == e.memory_id)
        .where(
            e.agent_id == bindparam("agent"),
            e.model == bindparam("label"),
            e.content_hash == m.content_hash,
            m.deleted_at.is_(None),
            e.memory_id.in_(bindparam("ids", expanding=True)),
        )
    )


def _scan_window(agent_id: int, label: str) -> datetime | None:
    """Since when the per-write path looks for memories without a current vector: None (all of the agent's)
    on this process's first job for the agent, else from its previous scan, less vectors.MARGIN (a memory
    stamped before that scan may have committed after it). Every memory is embedded by a scan after it was
    written or changed (`updated_at`), so one before the window has its vector: `link_related` records
    each scan (`scanned`) once what it found is stored."""
    previous = current_app.extensions.get("relations_scans", {}).get((agent_id, label))
    return None if previous is None else previous - vectors.MARGIN


def scanned(agent_id: int, label: str, began: datetime, stores: list[dict]) -> None:
    """Record a scan that began at `began` and whose finds, `stores`, are committed (`_scan_window`); put
    them in this process's matrix of the agent, so the next write's job finds them before a refresh."""
    matrix = vectors.cache().cached(agent_id, label)
    if matrix is not None and stores:
        matrix.put([(r["memory_id"], r["vector"], r["created_at"], r["user_id"]) for r in stores])
    current_app.extensions.setdefault("relations_scans", {})[(agent_id, label)] = began


def _live_vectors(
    agent_id: int, label: str, matrix: vectors.AgentMatrix, memory_ids: list[int]
) -> dict[int, np.ndarray]:
    """The stored vectors of those of these memories that are active with a current vector of `label`:
    from the matrix where it holds the one stored now (`AgentMatrix.stored`), else read."""
    if not memory_ids:
        return {}
    live = db.session.execute(_live_statement(), {"agent": agent_id, "label": label, "ids": memory_ids}).all()
    found: dict[int, np.ndarray] = {}
    unread = []
    for memory_id, created_at in live:
        vector = matrix.stored(int(memory_id), created_at)
        if vector is None:
            unread.append(int(memory_id))
        else:
            found[int(memory_id)] = vector
    if unread:  # embedded since the matrix's last refresh, by another process
        e = MemoryEmbedding
        rows = binary_rows(select(e.memory_id, e.vector).where(e.memory_id.in_(unread)))
        found |= {int(r[0]): from_bytes(bytes(r[1])) for r in rows}
    return found
