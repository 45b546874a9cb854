"""Dense vectors for memory.query: each agent's stored embeddings as one in-process matrix.

Vectors live in `memory_embeddings` (float32 bytes in a plain column, on SQLite and PostgreSQL alike:
pgvector is not needed). A web process keeps, per (agent, embedding model), the agent's vectors as one
float32 matrix and answers "which memories are nearest to this query vector":

- exactly, with one matrix-vector product, when the rows searched (the agent's, or one user's) are
  EXACT_ROWS or fewer;
- beyond that, in two steps: each row's signs (one bit a dimension, 48 bytes for 384 dimensions) are
  compared with the query's, and the SHORTLIST rows nearest by Hamming distance are re-scored exactly.
  Scanning 100,000 float32 rows reads 154 MB, 8-13 ms on this machine whatever else it does; their
  signs are 4.8 MB. What the shortlist gives up is measured on real all-MiniLM-L6-v2 vectors by
  `python -m bench.vector_recall` (docs/benchmarks.md): the sign of each dimension keeps the angle
  between two vectors roughly (random-hyperplane hashing), so the exact neighbours are nearly always in
  a shortlist of a few percent.

The matrix is:

- loaded on the agent's first dense query (one indexed read of the agent's rows);
- refreshed incrementally, at most once every REFRESH_SECONDS per agent: only rows embedded since the
  last refresh (`memory_embeddings.created_at`, indexed with the agent by migration 0011) are read,
  written over their old row or appended;
- rebuilt from scratch after RELOAD_SECONDS, which drops the rows of memories deleted meanwhile: by a
  thread of its own (not where the process forks), requests searching the old matrix until the new one
  takes its place (`VectorCache.rebuild`);
- bounded: all agents' matrices together stay under `VECTOR_CACHE_MB` (default 512) per process, the
  least recently queried agent evicted first. One agent costs n x dims x 4 bytes, and n x dims / 8 for
  the signs: 100,000 memories of 384 dimensions (all-MiniLM-L6-v2) are 154 + 4.8 MB.

The matrix is only a way to find candidates: memory.query passes their ids to its one SQL statement,
which applies the agent, soft-deletion, the allowlist and every filter again (models/retrieval/fusion.py). A
stale row (a memory deleted, moved to another category) can therefore cost a candidate, never leak
one; rows are loaded with `agent_id = :agent` only, so another agent's vector is never in the matrix.
The `user_id` of each row is kept so a request scoped to one user (nearly all of them) ranks that
user's memories only, however many other users the agent serves.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import cache as once
from typing import Any

import numpy as np
from flask import Flask, current_app
from sqlalchemy import Select, bindparam, select
from threadpoolctl import threadpool_limits

from models.db import binary_rows, db, utcnow
from models.memories.memory import AgentMemory
from models.retrieval import pgvector
from models.retrieval.relations import MemoryEmbedding

log = logging.getLogger(__name__)

REFRESH_SECONDS = 1.0  # how stale a matrix may be: one cheap indexed query per agent per second at most
RELOAD_SECONDS = 3600.0  # a full rebuild, dropping deleted memories' rows
# Each refresh reads the rows stamped since the previous refresh began, less this margin: a worker stamps
# created_at just before its batch commits, so a row can become visible a moment after its stamp. Only
# ids and stamps are read for that window; vectors cross the wire only for rows new or changed since.
MARGIN = timedelta(seconds=10)
NO_USER = -1
# Up to this many rows searched, every one is scored exactly (10,000 x 384 float32: about 1 ms here, on
# one BLAS thread: `_one_blas_thread`).
EXACT_ROWS = 10_000
# Past EXACT_ROWS, how many rows the sign-bit prefilter keeps for the exact re-score: this many, or
# SHORTLIST_PER_K x k when more neighbours are asked for. Chosen by bench.vector_recall on the development
# conversational sets' text at fusion.DENSE_K's 25 neighbours: the smallest size within 0.002 of 2,000's
# recall@10 and 0.005 of its recall@25 (docs/benchmarks.md, "Dense search past 10,000 rows").
SHORTLIST = 1_000
SHORTLIST_PER_K = 10
# Rows to score scattered through the matrix (one user's, a shortlist), up to this many times fewer than
# all rows: every row is scored and theirs taken out (`AgentMatrix.nearest`).
SCAN_SHARE = 3
# The shortlist's cut is guessed from every CUT_SAMPLE-th distance and confirmed in at most CUT_STEPS
# steps of exact counts (`nearest_distance`).
CUT_SAMPLE = 16
CUT_STEPS = 4
# Rows scattered through the matrix (a shortlist) are copied out and scored this many at a time
# (`gathered_scores`).
GATHER_ROWS = 128


def sign_bits(vectors: np.ndarray) -> np.ndarray:
    """Each row's signs packed one bit a dimension into 64-bit words (the last one zero-padded): a
    vector's sketch for the Hamming prefilter. One row for a 1-D vector."""
    packed = np.packbits(np.atleast_2d(vectors) > 0, axis=1)
    pad = -packed.shape[1] % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def shortlist_size(searched: int, k: int) -> int | None:
    """How many of `searched` rows the sign-bit prefilter keeps for k neighbours, or None when every row
    is scored: up to EXACT_ROWS, or while the shortlist would be half the rows or more."""
    size = max(SHORTLIST, SHORTLIST_PER_K * k)
    return size if searched > max(EXACT_ROWS, 2 * size) else None


def shortlist(bits: np.ndarray, query: np.ndarray, size: int) -> np.ndarray:
    """The columns of `bits` (sign_bits transposed: one row a 64-bit word, one column a vector) nearest to
    `query`'s signs by Hamming distance: every column within the distance of the size-th nearest, so at
    least `size` (ties included), at most twice that."""
    # Word by word over contiguous rows: six passes over 100,000 words each are about 5x faster here than
    # counting row by row over the (n, 6) layout.
    distance = np.bitwise_count(bits[0] ^ query[0]).astype(np.uint16)
    for word, mine in zip(bits[1:], query[1:], strict=True):
        distance += np.bitwise_count(word ^ mine)
    cut = nearest_distance(distance, size)
    picked = np.flatnonzero(distance <= cut)
    if len(picked) > 2 * size:  # many ties at the cut (identical vectors, say): bound the re-score
        picked = picked[np.argpartition(distance[picked], size - 1)[:size]]
    return picked


def gathered_scores(matrix: np.ndarray, rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """`matrix[rows] @ vector`, the same scores, GATHER_ROWS rows at a time: each block's copy (0.5 MB at
    1,024 dimensions) is scored while it is still in the CPU's cache, instead of a copy of them all (4.5 MB
    for a shortlist of 1,100 such rows) going out to memory and being read back. The last block takes the
    remainder, so no block is a single row, which NumPy scores by a dot product, not the matrix-vector
    product every other block (and the whole copy) is scored by."""
    if len(rows) <= 2 * GATHER_ROWS:
        return matrix[rows] @ vector
    scores = np.empty(len(rows), dtype=np.result_type(matrix, vector))
    starts = list(range(0, len(rows) - GATHER_ROWS, GATHER_ROWS))
    for start, end in zip(starts, [*starts[1:], len(rows)], strict=True):
        scores[start:end] = matrix[rows[start:end]] @ vector
    return scores


def nearest_distance(distance: np.ndarray, size: int) -> int:
    """The least d with at least `size` of `distance` (small non-negative integers) at d or below: the
    size-th smallest distance. Guessed from a histogram of every CUT_SAMPLE-th distance, then confirmed by
    exact counts either side (moved a step while they disagree). A histogram of them all converts every
    distance to a 64-bit integer first: at 100,000 rows 0.13 ms, against 0.03 for the guess and counts."""
    sample = distance[::CUT_SAMPLE]
    guess = int(np.searchsorted(np.cumsum(np.bincount(sample)), size * len(sample) / len(distance)))
    for _ in range(CUT_STEPS):
        if np.count_nonzero(distance <= guess) < size:
            guess += 1
        elif guess and np.count_nonzero(distance < guess) >= size:
            guess -= 1
        else:
            return guess
    # The sample misled (a few distances far from the rest): every distance counted.
    return int(np.searchsorted(np.cumsum(np.bincount(distance)), size))


@once
def _recent_statement() -> Select[int, datetime]:
    """A refresh's look at what changed: (memory_id, created_at) of the agent's rows of `model` stamped
    `since` or later. Built once and bound at each run: a refresh runs before nearly every search, and
    building and keying the statement cost about as much as running it."""
    e, m = MemoryEmbedding, AgentMemory
    return (
        select(e.memory_id, e.created_at)
        .join(m, m.id == e.memory_id)
        .where(
            e.agent_id == bindparam("agent"),
            m.agent_id == bindparam("agent"),
            e.model == bindparam("model"),
            e.created_at >= bindparam("since"),
        )
    )


class AgentMatrix:
    """One agent's vectors of one model: rows in arrival order, grown geometrically, rewritten in place."""

    def __init__(self, agent_id: int, model: str) -> None:
        self.agent_id, self.model = agent_id, model
        self.dims = 0
        self.count = 0
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.bits = np.zeros((0, 0), dtype=np.uint64)  # sign_bits of each row, one column a row
        self.users = np.zeros(0, dtype=np.int32)
        self.position: dict[int, int] = {}
        self.user_codes: dict[str, int] = {}
        self.refreshed_at = datetime.min  # when the last refresh began (UTC, the clock of the stamps)
        self.stamps: dict[int, datetime] = {}  # created_at of the rows stamped within the margin
        self.loaded_at = 0.0
        self.checked_at = 0.0
        self.lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        return self.matrix.nbytes + self.bits.nbytes + self.ids.nbytes + self.users.nbytes

    def _rows(self, *where: Any) -> list:
        """(memory_id, float32 vector bytes, created_at, user_id) of the agent's rows of the model `where`."""
        e, m = MemoryEmbedding, AgentMemory
        columns = (e.memory_id, e.vector, e.created_at, m.user_id)
        agent = (e.agent_id == self.agent_id, m.agent_id == self.agent_id, e.model == self.model)
        return binary_rows(select(*columns).join(m, m.id == e.memory_id).where(*agent, *where))

    def refresh(self, now: float) -> None:
        """Bring the matrix up to date (see the module docstring): a full load the first time, then only
        what was embedded since. Caller holds `lock`."""
        if self.loaded_at and now - self.checked_at < REFRESH_SECONDS:
            return
        started = utcnow()
        if not self.loaded_at:  # only what can be found at all: no deleted memory's row, no stale vector
            e, m = MemoryEmbedding, AgentMemory
            rows = self._rows(m.deleted_at.is_(None), e.content_hash == m.content_hash)
            self.count, self.position, self.user_codes, self.stamps = 0, {}, {}, {}
            self.loaded_at = now
        else:
            params = {"agent": self.agent_id, "model": self.model, "since": self.refreshed_at - MARGIN}
            recent = db.session.execute(_recent_statement(), params).all()
            wanted = [memory_id for memory_id, stamp in recent if self.stamps.get(memory_id) != stamp]
            rows = []
            for start in range(0, len(wanted), 1000):
                chunk = wanted[start : start + 1000]
                rows += self._rows(MemoryEmbedding.memory_id.in_(chunk))
        self._upsert(rows)
        # Remember only the stamps the next refresh's window can still show: bounded.
        self.stamps = {k: v for k, v in self.stamps.items() if v >= started - MARGIN}
        self.refreshed_at, self.checked_at = started, now

    def _grow(self, needed: int) -> None:
        capacity = self.matrix.shape[0]
        if needed <= capacity and self.matrix.shape[1] == self.dims:
            return
        capacity = max(needed, int(capacity * 1.5), 64)
        matrix = np.zeros((capacity, self.dims), dtype=np.float32)
        bits = np.zeros((-(-self.dims // 64), capacity), dtype=np.uint64)
        ids = np.zeros(capacity, dtype=np.int64)
        users = np.full(capacity, NO_USER, dtype=np.int32)
        if self.matrix.shape[1] == self.dims:
            kept = self.count
            matrix[:kept], bits[:, :kept] = self.matrix[:kept], self.bits[:, :kept]
            ids[:kept], users[:kept] = self.ids[:kept], self.users[:kept]
        # Readers hold their own references: swapping whole arrays never shows them a half-copied one.
        self.matrix, self.bits, self.ids, self.users = matrix, bits, ids, users

    def _upsert(self, rows: Sequence) -> None:
        if not rows:
            return
        dims = len(rows[0][1]) // 4
        if dims != self.dims:  # a different width: the model changed its output; start over
            self.dims, self.count, self.position = dims, 0, {}
        rows = [r for r in rows if len(r[1]) == dims * 4]
        vectors = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=np.float32).reshape(
            len(rows), dims
        )
        self._grow(self.count + len(rows))
        if not self.count:  # a full load: whole arrays at once, not row by row
            n, codes = len(rows), self.user_codes
            self.matrix[:n], self.bits[:, :n] = vectors, sign_bits(vectors).T
            self.ids[:n] = [r[0] for r in rows]
            self.users[:n] = [NO_USER if r[3] is None else codes.setdefault(r[3], len(codes)) for r in rows]
            self.position = {int(r[0]): i for i, r in enumerate(rows)}
            self.stamps = {int(r[0]): r[2] for r in rows}
            self.count = n
            return
        for row, vector, bits in zip(rows, vectors, sign_bits(vectors), strict=True):
            memory_id, created_at, user_id = int(row[0]), row[2], row[3]
            at = self.position.get(memory_id)
            if at is None:
                at = self.position[memory_id] = self.count
                self.count += 1
            self.matrix[at], self.bits[:, at], self.ids[at] = vector, bits, memory_id
            self.users[at] = (
                NO_USER if user_id is None else self.user_codes.setdefault(user_id, len(self.user_codes))
            )
            self.stamps[memory_id] = created_at

    def put(self, rows: Sequence) -> None:
        """Write these rows (memory_id, float32 vector bytes, created_at, user_id) over their old ones or
        append them: vectors this process has just stored (jobs/neighbours.py), so its next search finds
        them without waiting for a refresh. A loaded matrix only: an unloaded one reads them when it loads."""
        with self.lock:
            if self.loaded_at:
                self._upsert(rows)

    def stored(self, memory_id: int, created_at: datetime) -> np.ndarray | None:
        """The memory's row if it is the vector stored at `created_at` (memory_embeddings.created_at), else
        None: a row stamped before this matrix's last refresh window began is the one it read, and one
        stamped since only if it read that very stamp (`stamps`)."""
        at = self.position.get(memory_id)
        if not self.loaded_at or at is None or at >= self.count:
            return None
        if created_at < self.refreshed_at - MARGIN or self.stamps.get(memory_id) == created_at:
            return self.matrix[at]
        return None

    def nearest(
        self, vector: np.ndarray, k: int, user_id: str | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ids and cosine scores of the k rows nearest to `vector` (of this user only, when given), best
        first: exact, or among the sign-bit prefilter's shortlist past EXACT_ROWS (`shortlist_size`)."""
        count, matrix, bits, ids, users = self.count, self.matrix, self.bits, self.ids, self.users
        none = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if not count or vector.shape[0] != self.dims:
            return none
        rows: np.ndarray | slice = slice(0, count)
        if user_id is not None:
            code = self.user_codes.get(user_id)
            if code is None:
                return none
            mine = np.flatnonzero(users[:count] == code)
            if len(mine) < count:  # else every row is the user's (an agent serving one user)
                rows = mine
        size = shortlist_size(count if isinstance(rows, slice) else len(rows), k)
        if size:
            picked = shortlist(bits[:, rows], sign_bits(vector)[0], size)
            rows = picked if isinstance(rows, slice) else rows[picked]
        if isinstance(rows, np.ndarray) and count <= SCAN_SHARE * len(rows):
            # The user holds a good share of the rows: one product over all of them, the user's scores then
            # taken out, costs less than copying the user's rows out of the matrix first (about 3.6x the
            # product's cost per row here).
            scores = (matrix[:count] @ vector)[rows]
        elif isinstance(rows, np.ndarray):
            scores = gathered_scores(matrix, rows, vector)
        else:
            scores = matrix[rows] @ vector
        ids = ids[rows]
        if len(scores) > k:
            top = np.argpartition(-scores, k - 1)[:k]
            ids, scores = ids[top], scores[top]
        order = np.lexsort((ids, -scores))  # best first; ties to the older memory, deterministically
        return ids[order], scores[order]


class VectorCache:
    """Per-process matrices of every agent queried recently, least recently used evicted past the budget."""

    def __init__(self, max_bytes: int, app: Flask) -> None:
        self.max_bytes = max_bytes
        self._agents: OrderedDict[tuple[int, str], AgentMatrix] = OrderedDict()
        self._lock = threading.Lock()
        self._app = app  # whose context a rebuild's thread reads in (`rebuild`)
        self._rebuilds: dict[tuple[int, str], threading.Thread] = {}
        # False where the process forks (the RQ worker: console/cli/rq.py): a thread alive at a fork leaves
        # the locks it holds held in the child. There a rebuild runs in the caller's thread.
        self.background = True

    def matrix(self, agent_id: int, model: str) -> AgentMatrix:
        key = (agent_id, model)
        with self._lock:
            entry = self._agents.get(key)
            if entry is None:
                entry = self._agents[key] = AgentMatrix(agent_id, model)
            self._agents.move_to_end(key)
        now = time.monotonic()
        with entry.lock:
            entry.refresh(now)
        if entry.loaded_at and now - entry.loaded_at >= RELOAD_SECONDS:
            self.rebuild(key, entry)
        self._evict(keep=key)
        return self._agents.get(key, entry)  # the new matrix when rebuilt in this thread (one atomic read)

    def rebuild(self, key: tuple[int, str], entry: AgentMatrix) -> None:
        """A full load of the agent's rows anew (dropping deleted memories'), by a thread of its own where
        `background`: it reads every vector (154 MB at 100,000 memories), and a request would wait for it
        holding the agent's lock, its others too. They search `entry` meanwhile; one rebuild at a time."""
        with self._lock:
            if key in self._rebuilds or self._agents.get(key) is not entry:
                return
            thread = threading.Thread(target=self._load_fresh, args=(key, entry), daemon=True,
                                      name=f"vector-matrix-rebuild-{key[0]}")  # fmt: skip
            self._rebuilds[key] = thread
        if self.background:
            thread.start()
        else:
            thread.run()  # the thread's work, in this one

    def _load_fresh(self, key: tuple[int, str], entry: AgentMatrix) -> None:
        try:
            with self._app.app_context():
                (fresh := AgentMatrix(*key)).refresh(time.monotonic())  # no other thread sees it yet
            with self._lock:
                if self._agents.get(key) is entry:  # neither evicted nor replaced meanwhile
                    self._agents[key] = fresh  # in entry's place in the least-recently-used order
        except Exception as error:  # the old matrix serves on, and is rebuilt RELOAD_SECONDS later
            entry.loaded_at = time.monotonic()
            log.warning("vectors: agent %s's matrix was not rebuilt (%s)", key[0], type(error).__name__)
        finally:
            self._rebuilds.pop(key, None)  # atomic: the lock orders only `rebuild`'s look and insert

    def join_rebuilds(self, timeout: float | None = None) -> None:
        """Wait for the rebuilds under way (tests)."""
        for thread in list(self._rebuilds.values()):
            thread.join(timeout)

    def cached(self, agent_id: int, model: str) -> AgentMatrix | None:
        """The agent's matrix if this process holds it, neither loaded nor refreshed here."""
        with self._lock:
            return self._agents.get((agent_id, model))

    def _evict(self, keep: tuple[int, str]) -> None:
        with self._lock:
            total = sum(m.nbytes for m in self._agents.values())
            for key in list(self._agents):
                if total <= self.max_bytes:
                    break
                if key != keep:
                    total -= self._agents.pop(key).nbytes

    def clear(self) -> None:
        with self._lock:
            self._agents.clear()

    @property
    def nbytes(self) -> int:
        return sum(m.nbytes for m in self._agents.values())


@once
def _one_blas_thread() -> None:
    """NumPy's BLAS on one thread, for the whole process, from its first dense query on. The products here
    are small (a shortlist) or bound by memory, not arithmetic; requests already run side by side on the
    server's threads; and BLAS's own pool, waiting for work beside torch's (the local embedder, which
    embeds the same request's question), left one query embedding in ten waiting ~100 ms on two cores
    (bench.peers: memory.query's p95 120 ms, 20 ms on one BLAS thread)."""
    threadpool_limits(limits=1, user_api="blas")


def cache() -> VectorCache:
    """This app's vector cache (one per app and process, in `app.extensions`)."""
    extensions = current_app.extensions
    found = extensions.get("vector_cache")
    if found is None:
        _one_blas_thread()
        megabytes = float(current_app.config["VECTOR_CACHE_MB"])
        app = current_app._get_current_object()  # type: ignore[attr-defined]  # the proxy's app: threads use it
        found = extensions.setdefault("vector_cache", VectorCache(int(megabytes * 1024 * 1024), app))
    return found


def nearest(
    agent_id: int, model: str, vector: np.ndarray, k: int, user_id: str | None = None
) -> tuple[list[int], list[float]]:
    """The agent's k memories nearest to `vector` by its stored vectors of `model`: (ids, cosine scores),
    best first. Candidates only: the caller's SQL decides which of them may be returned. By pgvector's
    HNSW index where the database has one for this model and VECTOR_SEARCH has it serve this agent
    (models/retrieval/pgvector.py, `serves`), else, or when it finds fewer than k, by the agent's matrix in
    this process."""
    found = pgvector.nearest(agent_id, model, vector, k, user_id)
    if found is not None:
        return found
    ids, scores = cache().matrix(agent_id, model).nearest(np.asarray(vector, dtype=np.float32), k, user_id)
    return ids.tolist(), scores.tolist()
