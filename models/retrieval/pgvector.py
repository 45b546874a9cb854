"""pgvector, where the database has it: memory.query's nearest memories found by an HNSW index inside
PostgreSQL instead of the web process's matrix (models/retrieval/vectors.py).

Nothing here is needed: without the `vector` extension (SQLite; PostgreSQL without pgvector, as on this
project's own machines) memory.query uses the matrix, and every function below says "not here".

- Storage. `memory_embeddings.vector` (float32 bytes) stays the record on every database. Where the
  extension is installed, `enable` (migration 0020; `flask --app wsgi embeddings pgvector` when pgvector
  is installed later) adds `embedding vector` and a trigger that recomputes it from the bytes whenever a
  row is inserted or either column is updated — by the embedding jobs, a bulk load or raw SQL alike — so
  the two never disagree (`memconsole_float32_vector`, in SQL: exact, every float32 is a double).
- Index. One HNSW index (cosine distance) per embedding model and width, partial on the model, over
  `embedding` cast to that width (pgvector indexes one width per index; models differ): `ensure_index`,
  called by the embedding job (the backfill command's too) after it stores a real embedder's vectors
  (built CONCURRENTLY: writes go on meanwhile), and by `enable` for every model already stored.
- Search (`nearest`). The agent's k current vectors nearest to the query, by that index, with the
  memory's own checks (the agent's, not deleted, the vector of its current content, the user's when the
  request names one). An HNSW index spans every agent, and pgvector 0.6 filters what the index scan
  yields (`hnsw.ef_search` candidates, set to EF_PER_K x k here): an agent holding a small share of the
  table can get fewer than k back. `nearest` then answers None and memory.query uses the matrix, which is
  exact about whom it searches.
- Which agents (`serves`, VECTOR_SEARCH): measured here (`python -m bench.pgvector`), the matrix was
  faster and found more at 100,000 vectors; pgvector's gain is memory, none in the web process. So by
  default ("auto") pgvector searches the agents whose matrix alone would outgrow VECTOR_CACHE_MB, and
  the matrix every other; "pgvector" asks it for every agent, "matrix" never.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
from flask import current_app
from sqlalchemy import Connection, text
from sqlalchemy.exc import OperationalError

from models.db import DEPTH, db

log = logging.getLogger(__name__)

EF_PER_K = 2  # hnsw.ef_search = this x k (at most EF_MAX): room for the candidates the checks drop
EF_MAX = 1000  # pgvector's own limit
STATE_SECONDS = 60.0  # how long a process trusts what it found out about the database (column, indexes)
# An index build's working memory: pgvector builds the graph in memory while it fits (at 100,000 vectors of
# 384 dimensions, about 200 MB), several times faster than once it spills.
BUILD_MEMORY = "512MB"
LOCK_WAIT = "5s"  # an index build's longest wait for the transactions writing memory_embeddings
SIZE_SECONDS = 600.0  # how long a process trusts an agent's vector count ("auto": `serves`)
MAX_SHORT = 10_000  # (agent, user) pairs remembered as too few for pgvector, per process

# The bytes of a float32 vector (little-endian, as numpy writes them: jobs/embeddings.to_bytes) as a
# pgvector value, in SQL: each 4-byte word's sign, exponent and mantissa, computed in double precision.
FLOAT32_VECTOR = """
CREATE OR REPLACE FUNCTION memconsole_float32_vector(b bytea) RETURNS vector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CAST(CAST(array_agg(
      CASE WHEN e = 0 THEN m * 2.0::float8 ^ -149
           ELSE (1.0::float8 + m / 8388608.0::float8) * 2.0::float8 ^ (e - 127) END
      * CASE WHEN u >= 2147483648 THEN -1.0::float8 ELSE 1.0::float8 END
      ORDER BY i) AS real[]) AS vector)
  FROM (SELECT i, u, (u >> 23) & 255 AS e, u & 8388607 AS m FROM (
      SELECT i, get_byte(b, 4 * i)::bigint | (get_byte(b, 4 * i + 1)::bigint << 8)
             | (get_byte(b, 4 * i + 2)::bigint << 16) | (get_byte(b, 4 * i + 3)::bigint << 24) AS u
      FROM generate_series(0, length(b) / 4 - 1) AS i) AS words) AS parts
$$"""
MIRROR_FUNCTION = """
CREATE OR REPLACE FUNCTION memory_embeddings_mirror() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.embedding := memconsole_float32_vector(NEW.vector);
  RETURN NEW;
END $$"""
MIRROR_TRIGGER = """
CREATE TRIGGER memory_embeddings_mirror BEFORE INSERT OR UPDATE OF vector, embedding ON memory_embeddings
FOR EACH ROW EXECUTE FUNCTION memory_embeddings_mirror()"""
# The trigger recomputes `embedding` of the rows it is fired for.
FILL = "UPDATE memory_embeddings SET vector = vector WHERE embedding IS NULL"

_COLUMN = text(
    "SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('memory_embeddings') AND attname = 'embedding'"
    " AND NOT attisdropped"
)
_TRIGGER = text(
    "SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass('memory_embeddings') AND tgname = 'memory_embeddings_mirror'"
)
# The valid HNSW indexes on memory_embeddings, by name (ours say which model and width: `index_name`).
_INDEXES = text(
    "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
    "JOIN pg_am a ON a.oid = c.relam "
    "WHERE i.indrelid = to_regclass('memory_embeddings') AND a.amname = 'hnsw' AND i.indisvalid"
)


def index_name(model: str, dims: int) -> str:
    """The HNSW index of one model and width: named by a digest of the model (a name may hold anything)."""
    return f"ix_memory_embeddings_hnsw_{int(dims)}_{hashlib.sha1(model.encode()).hexdigest()[:12]}"


def _literal(value: str) -> str:
    """A model name as an SQL string literal: the index's predicate and the search's WHERE must be the same
    constant for PostgreSQL to use a partial index (a bound parameter would not prove it)."""
    return "'" + value.replace("'", "''") + "'"


def installed(conn: Connection) -> bool:
    """Whether the `vector` extension is created in this database."""
    found = conn.execute(text("SELECT 1 FROM pg_extension WHERE extname = 'vector'")).first()
    return found is not None


def enable(conn: Connection, unranked: Collection[str] = ()) -> str:
    """Set pgvector up on this PostgreSQL database, as far as it can be: the extension (created when
    available and the role may), the `embedding` column, its trigger, the column filled for the rows
    already stored, and an index per model stored but those in `unranked` (the hashed fallback's, which
    memory.query never ranks by), built in the caller's transaction. Idempotent. Returns what was done or
    why not, for the migration's and the command's output."""
    if conn.dialect.name != "postgresql":
        return "not PostgreSQL: memory.query searches vectors in the web process"
    if not installed(conn):
        available = conn.execute(text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).first()
        if available is None:
            return (
                "pgvector is not installed on this server: memory.query searches vectors in the web process"
            )
        savepoint = conn.begin_nested()
        try:
            conn.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
        except Exception as error:  # noqa: BLE001 - a refusal (no right to create it) leaves the matrix
            savepoint.rollback()
            return f"pgvector could not be created ({type(error).__name__}): ask a superuser to CREATE EXTENSION vector"
        savepoint.commit()
    # Table-locking steps only where something is missing: run again on a live server, it waits for nobody.
    if conn.execute(_COLUMN).first() is None:
        conn.execute(text("ALTER TABLE memory_embeddings ADD COLUMN embedding vector"))
    conn.execute(text(FLOAT32_VECTOR))
    conn.execute(text(MIRROR_FUNCTION))
    if conn.execute(_TRIGGER).first() is None:
        conn.execute(text(MIRROR_TRIGGER))
    filled = conn.execute(text(FILL)).rowcount
    present = set(conn.scalars(_INDEXES))
    conn.execute(text(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'"))
    built = [
        _create_index(conn, model, dims, concurrently=False)
        for model, dims in conn.execute(text("SELECT DISTINCT model, dims FROM memory_embeddings")).all()
        if index_name(model, dims) not in present and model not in unranked
    ]
    forget()
    return f"pgvector enabled: {filled} stored vectors copied, {len(built)} HNSW index(es) built"


def _create_index(conn: Connection, model: str, dims: int, *, concurrently: bool) -> str:
    """Build the index afresh: one of that name that is there is invalid (a build that failed half-way),
    or the caller would not be building it."""
    name = index_name(model, dims)
    how = "CONCURRENTLY " if concurrently else ""
    conn.execute(text(f"DROP INDEX {how}IF EXISTS {name}"))
    conn.execute(
        text(
            f"CREATE INDEX {how}{name} ON memory_embeddings "
            f"USING hnsw ((CAST(embedding AS vector({int(dims)}))) vector_cosine_ops) "
            f"WHERE model = {_literal(model)} AND dims = {int(dims)}"
        )
    )
    return name


class _State:
    """What one process knows of a database's pgvector set-up, re-read every STATE_SECONDS."""

    def __init__(self) -> None:
        self.checked = -STATE_SECONDS
        self.column = False
        self.indexes: frozenset[str] = frozenset()
        self.retry_at = 0.0  # after a failed index build: not before this


_lock = threading.Lock()
_states: dict[str, _State] = {}


def _state() -> _State:
    key = str(db.engine.url)
    now = time.monotonic()
    with _lock:
        state = _states.setdefault(key, _State())
    if now - state.checked >= STATE_SECONDS:
        if db.engine.dialect.name == "postgresql":
            state.column = db.session.execute(_COLUMN).first() is not None
            state.indexes = frozenset(db.session.scalars(_INDEXES)) if state.column else frozenset()
        state.checked = now
    return state


def forget() -> None:
    """Drop what this process knows, so the next search looks again (after `enable` or a new index)."""
    with _lock:
        _states.clear()
        _sizes.clear()
        _short.clear()


def usable(model: str, dims: int) -> bool:
    """Whether pgvector can search this model's vectors of this width here: VECTOR_SEARCH is not "matrix",
    and the column and the model's index are there."""
    if current_app.config["VECTOR_SEARCH"] == "matrix":
        return False
    state = _state()
    return state.column and index_name(model, dims) in state.indexes


_COUNT = text("SELECT count(*) FROM memory_embeddings WHERE agent_id = :agent_id AND model = :model")
_sizes: dict[tuple[str, int, str], tuple[float, int]] = {}  # (database, agent, model) -> (expires, vectors)
_short: dict[tuple[str, int, str, str | None], float] = {}  # ... and user -> until: fewer than k found


def serves(agent_id: int, model: str, dims: int, user_id: str | None = None) -> bool:
    """Whether memory.query asks pgvector for this agent's nearest vectors (VECTOR_SEARCH,
    docs/explanation/retrieval.md, "pgvector, where the database has it"):

    - "pgvector": wherever it can (`usable`);
    - "auto" (the default): where it can and the agent's matrix alone would outgrow the process's
      VECTOR_CACHE_MB — its vectors counted once every SIZE_SECONDS. Below that the matrix is faster and
      finds more (docs/benchmarks.md, "pgvector"), and pgvector's advantage, no memory in
      the web process, is the one that matters only there;
    - never for an agent (and user) it recently found fewer than k of (`nearest`), for STATE_SECONDS: the
      attempt costs a whole index scan before the matrix answers anyway."""
    mode = current_app.config["VECTOR_SEARCH"]
    if mode == "matrix" or not usable(model, dims):
        return False
    key, now = str(db.engine.url), time.monotonic()
    if _short.get((key, agent_id, model, user_id), 0.0) > now:
        return False
    if mode == "pgvector":
        return True
    expires, count = _sizes.get((key, agent_id, model), (0.0, 0))
    if expires <= now:
        count = int(db.session.scalar(_COUNT, {"agent_id": agent_id, "model": model}) or 0)
        with _lock:
            _sizes[(key, agent_id, model)] = (now + SIZE_SECONDS, count)
    # What the agent's matrix and its sign bits would take (models/retrieval/vectors.py).
    return count * dims * (4 + 1 / 8) > float(current_app.config["VECTOR_CACHE_MB"]) * 1024 * 1024


def ensure_index(model: str, dims: int) -> bool:
    """Build the HNSW index of this model and width if the column exists and the index does not; True when
    it is there afterwards. CONCURRENTLY, on a connection of its own (outside any transaction), so the
    table stays writable while it is built; called by the embedding job after it stores vectors.

    Never inside an atomic() block: the build waits for every transaction writing memory_embeddings to end,
    the caller's own included, which would wait for the build. As a second guard the build gives up after
    LOCK_WAIT of waiting for others (a long write elsewhere); either way the next call, at most every
    STATE_SECONDS, tries again."""
    state = _state()
    if not state.column or db.session.info.get(DEPTH):
        return False
    name = index_name(model, dims)
    if name in state.indexes:
        return True
    if time.monotonic() < state.retry_at:
        return False
    try:
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text(f"SET lock_timeout = '{LOCK_WAIT}'"))
            conn.execute(text(f"SET maintenance_work_mem = '{BUILD_MEMORY}'"))
            _create_index(conn, model, dims, concurrently=True)
    except OperationalError as error:
        state.retry_at = time.monotonic() + STATE_SECONDS
        log.warning("pgvector: index %s not built (%s); retrying later", name, type(error).__name__)
        return False
    forget()
    return name in _state().indexes


def _search(model: str, dims: int, user: bool) -> Any:
    """The nearest vectors of the agent's, by the index (an inner query over memory_embeddings alone, so the
    planner sees the ordered index scan its LIMIT stops; joined to the memories, the join's estimate of
    one row made it sort every vector instead: 160 ms against 7 at 30,000), then the memory's checks,
    then the k best."""
    as_vector = f"CAST(e.embedding AS vector({int(dims)}))"
    query = f"CAST(:q AS vector({int(dims)}))"
    mine = " AND m.user_id = :user_id" if user else ""
    return text(
        f"SELECT n.memory_id, 1 - n.distance AS score FROM ("
        f"SELECT e.memory_id, e.content_hash, {as_vector} <=> {query} AS distance FROM memory_embeddings AS e "
        f"WHERE e.model = {_literal(model)} AND e.dims = {int(dims)} AND e.agent_id = :agent_id "
        f"ORDER BY {as_vector} <=> {query} LIMIT :ef) AS n "
        "JOIN agent_memories AS m ON m.id = n.memory_id "
        f"WHERE m.agent_id = :agent_id AND m.deleted_at IS NULL AND m.content_hash = n.content_hash{mine} "
        "ORDER BY n.distance, n.memory_id LIMIT :k"
    )


def search(
    agent_id: int, model: str, vector: Sequence[float] | np.ndarray, k: int, user_id: str | None = None
) -> list[tuple[int, float]]:
    """Up to k of the agent's (that user's) memories nearest to `vector` by the HNSW index, best first:
    (id, cosine score) pairs. Fewer than k when the index's candidates were mostly another agent's (the
    module docstring). The index must be there (`usable`)."""
    dims = len(vector)
    ef = min(EF_MAX, max(40, EF_PER_K * k))
    db.session.execute(text("SELECT set_config('hnsw.ef_search', :ef, true)"), {"ef": str(ef)})
    params: dict[str, Any] = {
        "ef": ef,
        "q": "[" + ",".join(map(repr, map(float, vector))) + "]",
        "agent_id": agent_id,
        "k": k,
    }
    if user_id is not None:
        params["user_id"] = user_id
    rows = db.session.execute(_search(model, dims, user_id is not None), params).all()
    return [(int(r[0]), float(r[1])) for r in rows]


def nearest(
    agent_id: int, model: str, vector: Sequence[float] | np.ndarray, k: int, user_id: str | None = None
) -> tuple[list[int], list[float]] | None:
    """The agent's (that user's) k memories nearest to `vector`, by the HNSW index: (ids, cosine scores),
    best first. None when pgvector does not serve this agent here (`serves`), or found fewer than k (then
    not asked again for this agent and user for STATE_SECONDS); the caller then searches the matrix."""
    if not serves(agent_id, model, len(vector), user_id):
        return None
    found = search(agent_id, model, vector, k, user_id)
    if len(found) < k:
        with _lock:
            _short[(str(db.engine.url), agent_id, model, user_id)] = time.monotonic() + STATE_SECONDS
            if len(_short) > MAX_SHORT:  # bounded: the oldest half goes
                for stale in list(_short)[: MAX_SHORT // 2]:
                    _short.pop(stale, None)
        return None
    return [i for i, _ in found], [score for _, score in found]
