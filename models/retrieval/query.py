"""memory.query (docs/spec/003-memory-system.md §6): ranked retrieval over one agent's active memories, filtered in SQL.

Every filter — the agent, the allowed categories, soft-deletion, the request's filters — is a
WHERE clause of the one statement; nothing is filtered in Python afterwards. Ranking combines:

- lexical relevance: PostgreSQL full-text search (`ts_rank` over the stored, GIN-indexed
  `fts_vector` = to_tsvector('english', content)), or SQLite FTS5 (`bm25` over
  `agent_memories_fts`); either score is squashed to [0, 1) and divided by the best score among
  the candidates, so the best lexical match has relevance 1.0 and `threshold` drops weaker ones;
- recency: 1 / (1 + age in units of 30 days), by `updated_at`;
- importance: (importance - 1) / 4, unrated memories counting as 2;
- the relations boost (docs/spec/003-memory-system.md §2), when the relations layer is installed: + 0.1 x the strength of
  the memory's strongest edge, applied when re-ranking the leaders.

score = 0.6 relevance + 0.25 recency + 0.15 importance (without query words: 0.6 recency + 0.4
importance). Words are OR-ed: a memory matching more of them ranks higher.

Bounded work, whatever the words (see `_pool`): a query whose words match at most EXACT_LIMIT memories
ranks every match; one of common words ("user") ranks the newest POOL_ANY matches plus up to POOL_ALL
memories containing every word — recency weighs in the score anyway — instead of scoring a large part
of the agent's memory on every call. The recency index and a GIN index without a pending list keep
both paths short; the worst case is words matching just over EXACT_LIMIT memories.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    DateTime,
    Float,
    Index,
    Integer,
    String,
    bindparam,
    case,
    cast,
    column,
    false,
    func,
    literal_column,
    or_,
    select,
    table,
    text,
    union,
    union_all,
)

from models.db import db, utcnow
from models.memories.memory import AgentMemory
from models.parsing import parse_utc
from models.retrieval import term_stats

MAX_TERMS = 16
MAX_TERM_CHARS = 64
W_RELEVANCE, W_RECENCY, W_IMPORTANCE = 0.6, 0.25, 0.15
W_RELATED = (
    0.1  # docs/spec/003-memory-system.md §2: a small boost by the strongest relation edge of the memory
)
EXACT_LIMIT = 1500  # PostgreSQL: up to this many matches, every match is ranked (see _pool)
POOL_ALL = 500  # candidates containing every query word
POOL_ANY = 50  # candidates containing any query word, newest first (>= the largest top_k)
POOL_RECENT = 500  # without query words: the newest memories, ranked by recency and importance
POOL_SQLITE = 1000  # SQLite: candidates containing any query word, newest first
RERANK_FACTOR = 4  # leaders re-ranked with the relations boost: top_k x this
RECENCY_DAYS = 30.0
DEFAULT_IMPORTANCE = 2
EQUALITY_FILTERS = ("user_id", "run_id", "actor_id", "role", "thread_id")
FTS_CONFIG: ColumnElement[Any] = literal_column("'english'::regconfig")

# PostgreSQL's 'english' text-search stop words (the list its full-text search drops anyway), plus the
# modal verbs questions are made of, less the third-person pronouns: "she" and "his" say whose memory is
# meant (on SQLite; PostgreSQL's own list drops them). On the labelled set (bench/retrieval_quality.py)
# keeping them lifts SQLite's recall@5 from 30.8 to 32.7 %.
STOP_WORDS = frozenset(
    """
would could might shall also
i me my myself we our ours ourselves you your yours yourself yourselves
it its itself what which who whom this that these those am is are was were be
been being have has had having do does did doing a an the and but if or because as until while of at by for with
about against between into through during before after above below to from up down in out on off over under again
further then once here there when where why how all any both each few more most other some such no nor not only
own same so than too very s t can will just don should now
""".split()
)
# Dense ranking (with a real embedder, see `search`): how many nearest memories join the candidates, more
# when filters other than user_id will drop some of them; how lexical and dense relevance are fused.
DENSE_K = 100
DENSE_K_FILTERED = 400
RRF_K = 60  # reciprocal rank fusion: 1 / (RRF_K + rank) per ranking (the constant of Cormack et al.)
# The calibrated mix: this x lexical + (1 - this) x dense, each relative to its best. On the labelled set
# with all-MiniLM-L6-v2, shares of 0.1-0.3 give the same recall@10 and MRR within 0.03 (0.1 best); 0.2
# keeps an exact word match counting for more (a name, a number) at a cost of at most 0.011 MRR.
MIX_LEXICAL = 0.2
FUSIONS = ("rrf", "mix")
FUSION = "mix"  # chosen on the labelled set (bench/retrieval_quality.py, docs/benchmarks.md)

_fts = table("agent_memories_fts", column("rowid"))
_CUSTOM_PLANS = text("SET LOCAL plan_cache_mode = force_custom_plan")
_PG_VECTOR: ColumnElement[Any] = literal_column(
    "agent_memories.fts_vector"
)  # stored to_tsvector('english', content)

# Declared on agent_memories here, next to the query that needs them (created by migration 0003): the
# candidate pool walks an agent's active memories newest first, overall or for one user (user_id is the
# scoping filter of docs/spec/003-memory-system.md §6.1 that nearly every call carries).
for _name, _columns in (
    ("ix_agent_memories_agent_recent", (AgentMemory.agent_id, AgentMemory.updated_at)),
    ("ix_agent_memories_agent_user", (AgentMemory.agent_id, AgentMemory.user_id, AgentMemory.updated_at)),
):
    Index(
        _name,
        *_columns,
        postgresql_where=AgentMemory.deleted_at.is_(None),
        sqlite_where=AgentMemory.deleted_at.is_(None),
    )


@dataclass
class Hit:
    id: int
    category: str | None
    memory_type: str
    content: str
    tags: list
    importance: int | None
    pinned: bool
    user_id: str | None
    thread_id: str | None
    run_id: str | None
    actor_id: str | None
    role: str | None
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime | None
    token_estimate: int
    relevance: float | None
    score: float
    # Whether the memory has any relation edge at all (of any agent): when no result has one, memory.query
    # knows there are no related bullets to look up without asking.
    linked: bool = True


def query_terms(text: str | None) -> list[str]:
    """Words of the query (letters and digits only), lower-cased, de-duplicated, at most 16, English stop
    words left out ("what would she like to study" searches "like study"): a whole question ORs
    together a dozen words, and the stop words among them match most of an agent's memories, which made
    natural-language questions slow without making them better. A query of stop words only keeps them."""
    words = re.findall(r"[^\W_]+", (text or "").lower())
    words = list(dict.fromkeys(w[:MAX_TERM_CHARS] for w in words if w not in ("or", "and", "not")))
    content = [w for w in words if w not in STOP_WORDS]
    return (content or words)[:MAX_TERMS]


def _as_datetime(value: date | datetime) -> datetime:
    # models/parsing.py: an aware time is clamped to years 1-9999 in UTC, a date is its 00:00 UTC.
    return parse_utc(value)


_T = AgentMemory.__table__
_IMPORTANCE = func.coalesce(_T.c.importance, DEFAULT_IMPORTANCE)
# Filter name -> (its WHERE clause, with a bound parameter f_<name>; how the value is converted).
FILTERS = {
    **{name: (_T.c[name] == bindparam(f"f_{name}"), None) for name in EQUALITY_FILTERS},
    "pinned": (_T.c.pinned == bindparam("f_pinned"), bool),
    "importance_min": (bindparam("f_importance_min") <= _IMPORTANCE, None),
    "importance_max": (bindparam("f_importance_max") >= _IMPORTANCE, None),
    "updated_after": (_T.c.updated_at >= bindparam("f_updated_after", type_=DateTime), _as_datetime),
    "updated_before": (_T.c.updated_at < bindparam("f_updated_before", type_=DateTime), _as_datetime),
}
RESULT_COLUMNS = (
    "id", "category", "memory_type", "content", "tags", "importance", "pinned", "user_id", "thread_id",
    "run_id", "actor_id", "role", "created_at", "updated_at", "last_accessed_at", "token_estimate",
)  # fmt: skip


def filter_clauses(filters: Mapping[str, Any] | None) -> tuple[list, dict[str, Any]]:
    """The request's filters as WHERE clauses on agent_memories and the parameters they bind (for
    statements other than `search`'s)."""
    clauses, params = [], {}
    for name, value in (filters or {}).items():
        if value is None or name not in FILTERS:
            continue
        clause, convert = FILTERS[name]
        clauses.append(clause)
        params[f"f_{name}"] = convert(value) if convert else value
    return clauses, params


def _recency(dialect: str, updated_at=_T.c.updated_at):
    now = bindparam("now", type_=DateTime)
    if dialect == "postgresql":
        age_days = func.greatest(0.0, func.extract("epoch", now - updated_at) / 86400.0)
    else:
        age_days = func.max(0.0, func.julianday(now) - func.julianday(updated_at))
    return 1.0 / (1.0 + age_days / RECENCY_DAYS)


def _match(dialect: str, param: str):
    """The full-text match of the bound query `param`: (extra FROM or None, WHERE clause, tsquery or None)."""
    if dialect == "postgresql":
        tsquery = func.websearch_to_tsquery(FTS_CONFIG, bindparam(param, type_=String))
        return None, _PG_VECTOR.op("@@")(tsquery), tsquery
    return _fts, literal_column("agent_memories_fts").op("MATCH")(bindparam(param, type_=String)), None


def _lexical(dialect: str, tsquery, vector=_PG_VECTOR):
    """The raw lexical score in [0, 1) of a matched row."""
    if dialect == "postgresql":
        # ts_rank is a float4; in double precision the best match divides to exactly 1.0.
        return cast(func.ts_rank(vector, tsquery, 32), Float)
    # bm25() is negative, better matches more so; x / (1 + x) squashes its magnitude into [0, 1).
    bm25 = -func.bm25(literal_column("agent_memories_fts"))
    return bm25 / (1.0 + bm25)


def _match_text(dialect: str, terms: list[str], *, every: bool) -> str:
    """The query words as the engine's query: any of them, or every one of them."""
    if dialect == "postgresql":  # websearch_to_tsquery syntax: never a syntax error
        return (" " if every else " or ").join(terms)
    return (" " if every else " OR ").join(f'"{t}"' for t in terms)  # FTS5: each word a quoted string


def _relations_boost(candidate_id):
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


def _scored_columns(dialect: str, tsquery=None, *, lexical: bool = True, source=None) -> list:
    """What the ranking needs of a candidate: id, category, recency, importance, and lexical score.

    `source`: the columns to score (default agent_memories itself), e.g. those of the matches CTE."""
    c = source if source is not None else _T.c
    importance = _IMPORTANCE if source is None else func.coalesce(c.importance, DEFAULT_IMPORTANCE)
    columns = [
        c.id,
        c.category,
        _recency(dialect, c.updated_at).label("recency"),
        ((importance - 1) / 4.0).label("imp"),
    ]
    if lexical:
        vector = _PG_VECTOR if source is None else c.fts_vector
        columns.append(_lexical(dialect, tsquery, vector).label("lexical"))
    return columns


def _pool(dialect: str, where: list, words: int):
    """The candidates to rank (id, category, recency, imp, lexical), at bounded cost whatever the words.

    PostgreSQL, adaptively: fetch up to EXACT_LIMIT + 1 matches of any word (a GIN bitmap, or a short
    sequential run; unordered, so bounded either way). When there are at most EXACT_LIMIT, every match
    is a candidate, scored from that one fetch, and the ranking is exact. When there are more, the words
    are common: the candidates are the POOL_ANY newest matches — walked along the recency index with the
    match tested per row
    (wrapped in coalesce so the planner cannot switch to fetching every match through the GIN index) —
    plus up to POOL_ALL memories containing every word, so a rare word's hits are never crowded out.
    EXACT_LIMIT and POOL_ANY balance the two: the walk costs about POOL_ANY x memories / EXACT_LIMIT rows.

    SQLite (the embedded default, no latency target): the POOL_ALL newest memories containing every word
    and the POOL_SQLITE newest containing any.
    """
    if dialect != "postgresql":

        def newest(param: str, limit: int):
            fts_table, match, _ = _match(dialect, param)
            ids = select(_T.c.id).select_from(fts_table.join(_T, _T.c.id == fts_table.c.rowid))
            return select(ids.where(*where, match).order_by(_T.c.updated_at.desc()).limit(limit).subquery())

        ids = newest("q_any", POOL_SQLITE)
        if words > 1:
            ids = union(newest("q_all", POOL_ALL), ids)
        fts_table, match, _ = _match(dialect, "q_any")
        return (
            select(*_scored_columns(dialect))
            .select_from(fts_table.join(_T, _T.c.id == fts_table.c.rowid))
            .where(_T.c.id.in_(ids), match)
        )
    _, any_word, tsquery = _match(dialect, "q_any")
    columns = _scored_columns(dialect, tsquery)
    # The matches are fetched once, with what scoring needs: when there are at most EXACT_LIMIT they are
    # the candidates themselves, so the exact path reads the heap once, not twice.
    some = (
        select(_T.c.id, _T.c.category, _T.c.updated_at, _T.c.importance, _PG_VECTOR.label("fts_vector"))
        .where(*where, any_word)
        .limit(EXACT_LIMIT + 1)
        .cte("some_matches")
        .prefix_with("MATERIALIZED", dialect="postgresql")
    )
    found = select(func.count()).select_from(some).scalar_subquery()
    parts = [select(*_scored_columns(dialect, tsquery, source=some.c)).where(found <= EXACT_LIMIT)]
    recent_any = (
        select(*columns)
        .where(*where, func.coalesce(any_word, false()), found > EXACT_LIMIT)
        .order_by(_T.c.updated_at.desc())
        .limit(POOL_ANY)
        .subquery()
    )
    parts.append(select(recent_any))
    if words > 1:
        _, every_word, _ = _match(dialect, "q_all")
        every = select(*columns).where(*where, every_word, found > EXACT_LIMIT).limit(POOL_ALL).subquery()
        parts.append(select(every))
    return union(*parts)


def _dense_candidates(dialect: str):
    """The nearest memories by vector, bound as two parameters in rank order: d_ids and d_scores (cosine).
    As a table (id, score, rank), so the statement stays one shape whatever their number."""
    if dialect == "postgresql":
        sql = (
            "SELECT d.id, d.score, d.rank FROM unnest(CAST(:d_ids AS bigint[]), CAST(:d_scores AS double precision[]))"
            " WITH ORDINALITY AS d(id, score, rank)"
        )
    else:  # SQLite: JSON arrays
        sql = (
            "SELECT CAST(j.value AS INTEGER) AS id, json_extract(:d_scores, '$[' || j.key || ']') AS score,"
            " j.key + 1 AS rank FROM json_each(:d_ids) AS j"
        )
    return text(sql).columns(id=Integer, score=Float, rank=Integer).subquery("dense")


def _fused(dialect: str, where: list, words: int, fusion: str):
    """Hybrid candidates (id, category, recency, imp, relevance): the lexical pool (`_pool`, when there are
    words) and the dense candidates that pass every WHERE clause, each once, with relevance fused:

    - "mix": MIX_LEXICAL x lexical / best lexical + (1 - MIX_LEXICAL) x cosine / best cosine;
    - "rrf": reciprocal rank fusion, the sum of 1 / (RRF_K + rank) over the rankings a memory is in;

    then divided by the best candidate's, so the best has relevance 1.0 as on the lexical path. Without
    words (dense alone), relevance is cosine / best cosine.
    """
    dense = _dense_candidates(dialect)
    zero = cast(literal_column("0.0"), Float)
    parts = [
        select(*_scored_columns(dialect, lexical=False), zero.label("lexical")).where(
            *where, _T.c.id.in_(select(dense.c.id))
        )
    ]
    if words:
        parts.append(select(_pool(dialect, where, words).subquery()))
    both = union_all(*parts).subquery("both_rankings")
    # A memory both rankings found appears twice: once, with its lexical score.
    merged = (
        select(
            both.c.id,
            func.max(both.c.category).label("category"),
            func.max(both.c.recency).label("recency"),
            func.max(both.c.imp).label("imp"),
            func.max(both.c.lexical).label("lexical"),
        )
        .group_by(both.c.id)
        .subquery("merged")
    )
    cosine = func.coalesce(dense.c.score, 0.0)
    if fusion == "rrf":
        lexical_rank = func.row_number().over(order_by=(merged.c.lexical.desc(), merged.c.id.desc()))
        raw = case((merged.c.lexical > 0, 1.0 / (RRF_K + lexical_rank)), else_=0.0) + case(
            (dense.c.rank.is_not(None), 1.0 / (RRF_K + dense.c.rank)), else_=0.0
        )
    else:
        best_lexical, best_cosine = func.max(merged.c.lexical).over(), func.max(cosine).over()
        lexical = case((best_lexical > 0, merged.c.lexical / best_lexical), else_=0.0)
        semantic = case((best_cosine > 0, func.coalesce(dense.c.score, 0.0) / best_cosine), else_=0.0)
        share = MIX_LEXICAL if words else 0.0
        raw = share * lexical + (1.0 - share) * case((semantic > 0, semantic), else_=0.0)
    fused = (
        select(merged.c.id, merged.c.category, merged.c.recency, merged.c.imp, raw.label("raw"))
        .select_from(merged.outerjoin(dense, dense.c.id == merged.c.id))
        .subquery("fused")
    )
    best = func.max(fused.c.raw).over()
    return select(
        fused.c.id,
        fused.c.category,
        fused.c.recency,
        fused.c.imp,
        case((best > 0, fused.c.raw / best), else_=0.0).label("relevance"),
    )


@lru_cache(maxsize=256)
def _statement(
    dialect: str,
    words: int,
    filters: tuple[str, ...],
    capped: tuple[str, ...],
    threshold: bool,
    uncategorized: bool = False,
    dense: str | None = None,
    fusion: str = FUSION,
):
    """The query for one shape of request. Every value is a bound parameter, so the statement (and its
    compiled form) is built once per shape and reused across requests and threads. `words`: how many
    query words there are (0, 1, or 2 standing for more); `uncategorized`: whether memories without a
    category are wanted too (an agent's own core memories, README "The agent API"); `dense`: None (lexical
    only), "hybrid" (the nearest memories by vector join the candidates and relevance fuses both, by
    `fusion`) or "dense" (vector similarity alone)."""
    in_named = _T.c.category.in_(bindparam("categories", expanding=True))
    where = [
        _T.c.agent_id == bindparam("agent_id"),
        _T.c.deleted_at.is_(None),
        or_(in_named, _T.c.category.is_(None)) if uncategorized else in_named,
        *(FILTERS[name][0] for name in filters),
    ]
    if dense:
        pool = _fused(dialect, where, words if dense == "hybrid" else 0, fusion)
    elif not words:
        pool = (
            select(*_scored_columns(dialect, lexical=False))
            .where(*where)
            .order_by(_T.c.updated_at.desc())
            .limit(POOL_RECENT)
        )
    else:
        pool = _pool(dialect, where, words)
    pool = pool.subquery("candidates")

    if dense:  # relevance was fused in the pool, relative to the best candidate
        relevance = pool.c.relevance
        score = W_RELEVANCE * relevance + W_RECENCY * pool.c.recency + W_IMPORTANCE * pool.c.imp
    elif words:
        best = func.max(pool.c.lexical).over()
        relevance = case((best > 0, pool.c.lexical / best), else_=0.0)
        score = W_RELEVANCE * relevance + W_RECENCY * pool.c.recency + W_IMPORTANCE * pool.c.imp
    else:
        relevance = cast(literal_column("NULL"), Float)
        score = 0.6 * pool.c.recency + 0.4 * pool.c.imp
    ranked = select(pool.c.id, pool.c.category, relevance.label("relevance"), score.label("score")).subquery(
        "scored"
    )
    conditions = []
    if threshold and (words or dense):
        conditions.append(ranked.c.relevance >= bindparam("threshold"))
    if capped:  # context mode: at most rag_length results of a category in one answer
        cap = case({name: bindparam(f"cap_{i}") for i, name in enumerate(capped)}, value=ranked.c.category)
        in_category = func.row_number().over(partition_by=ranked.c.category, order_by=ranked.c.score.desc())
        ranked = select(ranked, in_category.label("rank_in_category"), cap.label("cap")).subquery("capped")
        conditions.append(or_(ranked.c.cap.is_(None), ranked.c.rank_in_category <= ranked.c.cap))
    leaders = (
        select(ranked.c.id, ranked.c.relevance, ranked.c.score)
        .where(*conditions)
        .order_by(ranked.c.score.desc(), ranked.c.id.desc())
        .limit(bindparam("leaders"))
        .subquery("leaders")
    )
    final_score: ColumnElement[Any] = leaders.c.score
    linked: ColumnElement[bool] = false()
    edges = _relations_boost(leaders.c.id)
    if edges is not None:
        # The strongest edge at either end (NULL: none), computed once per leader in a layer of its own.
        leaders = select(leaders, edges[0].label("edge_from"), edges[1].label("edge_to")).subquery("linked")
        boost = [func.coalesce(leaders.c.edge_from, 0.0), func.coalesce(leaders.c.edge_to, 0.0)]
        strongest = func.greatest(*boost) if dialect == "postgresql" else func.max(*boost)
        final_score = leaders.c.score + W_RELATED * strongest
        linked = or_(leaders.c.edge_from.is_not(None), leaders.c.edge_to.is_not(None))
    return (
        select(
            *(_T.c[name] for name in RESULT_COLUMNS),
            leaders.c.relevance,
            final_score.label("score"),
            linked.label("linked"),
        )
        .join_from(leaders, _T, _T.c.id == leaders.c.id)
        .order_by(final_score.desc(), leaders.c.id.desc())
        .limit(bindparam("top_k"))
    )


def search(
    agent_id: int,
    *,
    text: str | None,
    categories: Sequence[str],
    filters: Mapping[str, Any] | None = None,
    top_k: int = 5,
    threshold: float | None = None,
    rag_caps: Mapping[str, int] | None = None,
    now: datetime | None = None,
    dense: tuple[str, Any] | None = None,
    mode: str = "hybrid",
    fusion: str = FUSION,
) -> list[Hit]:
    """The top_k best active memories of this agent in these categories (None: those without one), best first.

    One statement in stages: the candidate pool (every filter and the full-text match, bounded: see
    `_pool`), scoring (relevance relative to the pool's best), per-category caps, then a re-rank of the
    leaders with the relations boost, joined to the rows they name.

    `dense`: (embedding model, query vector) when a real embedder is configured. The agent's DENSE_K
    memories nearest to the vector (models/retrieval/vectors.py; of the filtered user only, when `user_id` is a
    filter) then join the candidates — through the same WHERE clauses, so the vector path can return
    nothing the lexical one could not — and relevance fuses both rankings (`_fused`). `mode`: "hybrid"
    (the default), "lexical" (ignore `dense`) or "dense" (vector similarity alone; for measurement).
    Without `dense`, or when the agent has no vectors of that model, the ranking is the lexical one,
    statement for statement.
    """
    if mode not in ("hybrid", "lexical", "dense") or fusion not in FUSIONS:
        raise ValueError("mode must be hybrid, lexical or dense; fusion rrf or mix")
    if not categories:
        return []
    terms = query_terms(text)
    if text and text.strip() and not terms:
        return []  # a query with no searchable words matches nothing
    dialect = db.session.get_bind().dialect.name
    terms = term_stats.searchable(dialect, terms)  # a question's most common words left out: fast
    filters = {k: v for k, v in (filters or {}).items() if v is not None and k in FILTERS}
    capped = tuple(sorted(rag_caps or {}))
    names = [c for c in categories if c is not None]
    params: dict[str, Any] = {
        "agent_id": agent_id,
        "categories": names,
        "now": now or utcnow(),
        "top_k": top_k,
        "leaders": top_k * RERANK_FACTOR,
    }
    for name, value in filters.items():
        convert = FILTERS[name][1]
        params[f"f_{name}"] = convert(value) if convert else value
    for i, name in enumerate(capped):
        params[f"cap_{i}"] = (rag_caps or {})[name]
    if terms:
        params["q_any"] = _match_text(dialect, terms, every=False)
    if len(terms) > 1:
        params["q_all"] = _match_text(dialect, terms, every=True)
    if threshold is not None:
        params["threshold"] = threshold
    dense_mode = None
    if dense is not None and mode != "lexical":
        from models.retrieval import vectors

        # Filters other than user_id (which the matrix applies itself) may drop some nearest memories.
        k = DENSE_K_FILTERED if set(filters) - {"user_id"} else DENSE_K
        ids, scores = vectors.nearest(agent_id, dense[0], dense[1], k, user_id=filters.get("user_id"))
        if ids:
            dense_mode = mode
            if dialect == "postgresql":
                params["d_ids"], params["d_scores"] = ids, scores
            else:
                params["d_ids"], params["d_scores"] = json.dumps(ids), json.dumps(scores)
        elif mode == "dense":
            return []
    elif mode == "dense":
        return []
    stmt = _statement(
        dialect,
        min(len(terms), 2),
        tuple(sorted(filters)),
        capped,
        threshold is not None,
        len(names) != len(categories),
        dense_mode,
        fusion if dense_mode else FUSION,
    )
    if dialect == "postgresql":
        # psycopg prepares a statement after a few runs, and PostgreSQL then tries one generic plan for
        # every value; the right plan depends on how common the words are, so plan each search afresh.
        db.session.execute(_CUSTOM_PLANS)
    return [Hit(**row._mapping) for row in db.session.execute(stmt, params)]
