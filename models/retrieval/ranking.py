"""memory.query's ranking (docs/spec/003-memory-system.md §6): what a candidate is scored by, and the
stages after the candidate pool — scoring, per-category caps, the leaders and their relations boost.

- lexical relevance: PostgreSQL full-text search (`ts_rank` over the stored, GIN-indexed
  `fts_vector` = to_tsvector('english', content)), or SQLite FTS5 (`bm25` over
  `agent_memories_fts`); either score is squashed to [0, 1) and divided by the best score among
  the candidates, so the best lexical match has relevance 1.0 and `threshold` drops weaker ones
  (with an embedder, relevance is fused with the dense one first: models/retrieval/fusion.py);
- recency: 1 / (1 + age in units of 30 days), by `updated_at`;
- importance: (importance - 1) / 4, unrated memories counting as 2;
- the relations boost (docs/spec/003-memory-system.md §2), when the relations layer is installed: + 0.1 x
  the strength of the memory's strongest edge, applied when re-ranking the leaders.

score = 0.6 relevance + 0.25 recency + 0.15 importance (without query words: 0.6 recency + 0.4
importance).

Every function here builds SQL expressions only; models/retrieval/query.py assembles them into one
statement per shape of request.
"""

from __future__ import annotations

from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    DateTime,
    Float,
    ScalarSelect,
    Subquery,
    bindparam,
    case,
    cast,
    false,
    func,
    literal_column,
    or_,
    select,
)
from sqlalchemy.sql.base import ReadOnlyColumnCollection
from sqlalchemy.sql.elements import KeyedColumnElement

from models.memories.memory import AgentMemory

W_RELEVANCE, W_RECENCY, W_IMPORTANCE = 0.6, 0.25, 0.15
W_RELATED = (
    0.1  # docs/spec/003-memory-system.md §2: a small boost by the strongest relation edge of the memory
)
RECENCY_DAYS = 30.0
DEFAULT_IMPORTANCE = 2

_T = AgentMemory.__table__
IMPORTANCE: ColumnElement[Any] = func.coalesce(_T.c.importance, DEFAULT_IMPORTANCE)
"""A memory's importance as ranked, unrated counting as DEFAULT_IMPORTANCE. Public because the request's
importance filters (models/retrieval/filters.py) compare against the same value the ranking scores."""

FTS_VECTOR: ColumnElement[Any] = literal_column("agent_memories.fts_vector")
"""PostgreSQL's stored to_tsvector('english', content). Public because it is both what `ts_rank` scores
here and what the candidate pool matches the words against (models/retrieval/matching.py)."""

Scored = Literal["fused", "lexical", "recent"]


def recency(dialect: str, updated_at: ColumnElement[Any] = _T.c.updated_at) -> ColumnElement[Any]:
    """1 / (1 + age in units of RECENCY_DAYS), the age counted up to the bound parameter `now`."""
    now = bindparam("now", type_=DateTime)
    age_days: ColumnElement[Any]
    if dialect == "postgresql":
        age_days = func.greatest(0.0, func.extract("epoch", now - updated_at) / 86400.0)
    else:
        age_days = func.max(0.0, func.julianday(now) - func.julianday(updated_at))
    return 1.0 / (1.0 + age_days / RECENCY_DAYS)


def lexical_score(
    dialect: str, tsquery: ColumnElement[Any] | None, vector: ColumnElement[Any] = FTS_VECTOR
) -> ColumnElement[Any]:
    """The raw lexical score in [0, 1) of a matched row (`tsquery`: PostgreSQL's parsed words)."""
    if dialect == "postgresql":
        # ts_rank is a float4; in double precision the best match divides to exactly 1.0.
        return cast(func.ts_rank(vector, tsquery, 32), Float)
    # bm25() is negative, better matches more so; x / (1 + x) squashes its magnitude into [0, 1).
    bm25 = -func.bm25(literal_column("agent_memories_fts"))
    return bm25 / (1.0 + bm25)


def candidate_columns(
    dialect: str,
    tsquery: ColumnElement[Any] | None = None,
    *,
    lexical: bool = True,
    source: ReadOnlyColumnCollection[str, KeyedColumnElement[Any]] | None = None,
) -> list[ColumnElement[Any]]:
    """What the ranking needs of a candidate: id, category, recency, importance, and lexical score.

    `source`: the columns to score (default agent_memories itself), e.g. those of the matches CTE."""
    c: ReadOnlyColumnCollection[str, KeyedColumnElement[Any]] = source if source is not None else _T.c
    importance = IMPORTANCE if source is None else func.coalesce(c.importance, DEFAULT_IMPORTANCE)
    columns: list[ColumnElement[Any]] = [
        c.id,
        c.category,
        recency(dialect, c.updated_at).label("recency"),
        ((importance - 1) / 4.0).label("imp"),
    ]
    if lexical:
        vector = FTS_VECTOR if source is None else c.fts_vector
        columns.append(lexical_score(dialect, tsquery, vector).label("lexical"))
    return columns


def scored(pool: Subquery, kind: Scored) -> Subquery:
    """Each candidate's relevance and score ("scored": id, category, relevance, score). `kind`: "fused"
    (relevance fused in the pool, relative to its best), "lexical" (the lexical score relative to the
    pool's best) or "recent" (no words: recency and importance alone, relevance NULL)."""
    relevance: ColumnElement[Any]
    if kind == "fused":
        relevance = pool.c.relevance
        score = W_RELEVANCE * relevance + W_RECENCY * pool.c.recency + W_IMPORTANCE * pool.c.imp
    elif kind == "lexical":
        best = func.max(pool.c.lexical).over()
        relevance = case((best > 0, pool.c.lexical / best), else_=0.0)
        score = W_RELEVANCE * relevance + W_RECENCY * pool.c.recency + W_IMPORTANCE * pool.c.imp
    else:
        relevance = cast(literal_column("NULL"), Float)
        score = 0.6 * pool.c.recency + 0.4 * pool.c.imp
    return select(pool.c.id, pool.c.category, relevance.label("relevance"), score.label("score")).subquery(
        "scored"
    )


def leaders(ranked: Subquery, *, threshold: bool, capped: tuple[str, ...]) -> Subquery:
    """The best candidates to re-rank (bound parameter `leaders`: how many): those at least as relevant as
    the bound `threshold` (when `threshold`), at most `cap_<i>` of the i-th `capped` category (context
    mode: at most rag_length results of a category in one answer)."""
    conditions: list[ColumnElement[bool]] = []
    if threshold:
        conditions.append(ranked.c.relevance >= bindparam("threshold"))
    if capped:
        cap = case({name: bindparam(f"cap_{i}") for i, name in enumerate(capped)}, value=ranked.c.category)
        in_category = func.row_number().over(partition_by=ranked.c.category, order_by=ranked.c.score.desc())
        ranked = select(ranked, in_category.label("rank_in_category"), cap.label("cap")).subquery("capped")
        conditions.append(or_(ranked.c.cap.is_(None), ranked.c.rank_in_category <= ranked.c.cap))
    return (
        select(ranked.c.id, ranked.c.relevance, ranked.c.score)
        .where(*conditions)
        .order_by(ranked.c.score.desc(), ranked.c.id.desc())
        .limit(bindparam("leaders"))
        .subquery("leaders")
    )


def _strongest_edges(
    candidate_id: KeyedColumnElement[Any],
) -> tuple[ScalarSelect[Any], ScalarSelect[Any]] | None:
    """The strongest edge from and to a memory (each NULL when it has none), for max_related_strength of
    docs/spec/003-memory-system.md §2, when the relations layer is installed."""
    try:
        from models.retrieval.relations import MemoryRelation
    except ImportError:  # the relations layer is not installed
        return None
    relations = MemoryRelation.__table__
    strongest = [
        select(func.max(relations.c.strength)).where(relations.c[end] == candidate_id).scalar_subquery()
        for end in ("from_id", "to_id")
    ]
    return strongest[0], strongest[1]


def with_relations_boost(
    dialect: str, top: Subquery
) -> tuple[Subquery, ColumnElement[Any], ColumnElement[bool]]:
    """The leaders re-ranked: (the leaders, with their edges when there are relations; the final score,
    W_RELATED x the strongest edge at either end added; whether the memory has any edge at all)."""
    final_score: ColumnElement[Any] = top.c.score
    linked: ColumnElement[bool] = false()
    edges = _strongest_edges(top.c.id)
    if edges is not None:
        # The strongest edge at either end (NULL: none), computed once per leader in a layer of its own.
        top = select(top, edges[0].label("edge_from"), edges[1].label("edge_to")).subquery("linked")
        boost = [func.coalesce(top.c.edge_from, 0.0), func.coalesce(top.c.edge_to, 0.0)]
        strongest = func.greatest(*boost) if dialect == "postgresql" else func.max(*boost)
        final_score = top.c.score + W_RELATED * strongest
        linked = or_(top.c.edge_from.is_not(None), top.c.edge_to.is_not(None))
    return top, final_score, linked
