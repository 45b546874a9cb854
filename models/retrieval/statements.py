"""memory.query's statements (models/retrieval/query.py): the one that ranks, built from its stages —
the candidates (models/retrieval/matching.py, models/retrieval/fusion.py), the request's filters
(models/retrieval/filters.py), the ranking (models/retrieval/ranking.py) — and the one that reads a span
of days (models/retrieval/timeline.py). Built once per shape of request and cached: every value is a bound
parameter.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    CompoundSelect,
    Select,
    Text,
    bindparam,
    cast,
    column,
    func,
    literal,
    null,
    or_,
    select,
    true,
)
from sqlalchemy.dialects.postgresql import ARRAY

from models.memories.memory import AgentMemory
from models.retrieval import ranking, term_stats
from models.retrieval.filters import FILTERS
from models.retrieval.fusion import FUSION, fused_pool
from models.retrieval.matching import Route, lexical_pool, recent_pool

SPAN_ROWS = 200  # a span's memories read at most (models/retrieval/timeline.py)

_T = AgentMemory.__table__


def _in_categories(dialect: str) -> ColumnElement[bool]:
    """The category is one of the bound `categories` (`categories_param`). PostgreSQL: = ANY of one array
    parameter, not IN of an expanding one, which SQLAlchemy writes into the statement's text afresh on
    every run (a pass over the whole statement: a tenth of the CPU of a memory.query request over
    gunicorn on PostgreSQL, sampled with py-spy); PostgreSQL plans both alike (it reads IN (...) as
    = ANY). SQLite: IN the values of one JSON array parameter (`json_each`), for the same reason."""
    if dialect == "postgresql":
        # Parsed into an array once a run (a subquery PostgreSQL computes first), not once a row read: a
        # prepared statement's generic plan, and even a custom one, casts the text anew for every row.
        listed = select(cast(bindparam("categories", type_=Text), ARRAY(Text))).scalar_subquery()
        return _T.c.category == func.any(cast(listed, ARRAY(Text)))
    values = select(column("value", Text)).select_from(func.json_each(bindparam("categories", type_=Text)))
    return _T.c.category.in_(values)


def categories_param(dialect: str, names: list[str]) -> Any:
    """The bound value of `_in_categories`: PostgreSQL, one text[] literal (term_stats.array_literal);
    SQLite, one JSON array."""
    return term_stats.array_literal(names) if dialect == "postgresql" else json.dumps(names)


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
    # The absolute match `threshold` compares (ranking.coverage; null without query words).
    match: float | None
    score: float
    # Whether the memory has any relation edge at all (of any agent): when no result has one, memory.query
    # knows there are no related bullets to look up without asking.
    linked: bool = True


# The memory's own columns of a Hit, which the statement selects first and in this order (rows become Hits
# by position: no mapping built per row).
RESULT_COLUMNS = tuple(f.name for f in fields(Hit) if f.name not in ("relevance", "match", "score", "linked"))


def _where(dialect: str, filters: tuple[str, ...], uncategorized: bool) -> list[ColumnElement[bool]]:
    """The memories a request may see: the agent's, active, in the allowed categories, past its filters."""
    in_named = _in_categories(dialect)
    return [
        _T.c.agent_id == bindparam("agent_id"),
        _T.c.deleted_at.is_(None),
        or_(in_named, _T.c.category.is_(None)) if uncategorized else in_named,
        *(FILTERS[name][0] for name in filters),
    ]


@lru_cache(maxsize=64)
def span_statement(dialect: str, filters: tuple[str, ...], uncategorized: bool) -> Select[Any]:
    """The memories a request may see of one user (`span_user`, null for none) written between `span_from`
    and `span_to`: where a span's memories are looked for (models/retrieval/timeline.py)."""
    # Hit's own columns, ranked by no score: the span's place in the results is its order (models/retrieval/query.py, `_spanned`);
    # `linked` unknown, so true (the related-bullets lookup then asks).
    unranked = (
        null().label("relevance"),
        null().label("match"),
        literal(0.0).label("score"),
        true().label("linked"),
    )
    return (
        select(*(_T.c[name] for name in RESULT_COLUMNS), *unranked)
        .where(
            *_where(dialect, filters, uncategorized),
            _T.c.user_id.is_not_distinct_from(bindparam("span_user")),
            _T.c.created_at >= bindparam("span_from"),
            _T.c.created_at < bindparam("span_to"),
        )
        .order_by(_T.c.created_at, _T.c.id)
        .limit(SPAN_ROWS)
    )


@lru_cache(maxsize=256)
def statement(
    dialect: str,
    words: int,
    filters: tuple[str, ...],
    capped: tuple[str, ...],
    threshold: bool,
    uncategorized: bool = False,
    dense: str | None = None,
    fusion: str = FUSION,
    others: bool = False,
    slots: int = 0,
    route: Route = "exact",
    rare: bool = True,
    relative: bool = False,
) -> Select[Any]:
    """The query for one shape of request. Every value is a bound parameter, so the statement (and its
    compiled form) is built once per shape and reused across requests and threads. `words`: how many
    search terms there are (0, 1, or 2 standing for more); `others`: whether the question has words
    other than its search terms, which weigh in the score only (SQLite); `slots`: how many word slots
    score (PostgreSQL); `route`, `rare`: how the matches are found (PostgreSQL: matching.plan);
    `uncategorized`: whether memories without a category are wanted too (an agent's own core memories,
    docs/reference/api.md, "Allowlists"); `dense`: None (lexical only), "hybrid" (the nearest memories by
    vector join the candidates and relevance fuses both, by `fusion`) or "dense" (vector similarity alone).

    Public, with its cache, for measurement: bench/retrieval_quality.py clears it (`cache_clear`) after
    changing fusion.MIX_LEXICAL."""
    where = _where(dialect, filters, uncategorized)
    pool: Select[Any] | CompoundSelect[Any]
    if dense:
        pool = fused_pool(
            dialect, where, words if dense == "hybrid" else 0, fusion, others, slots, route, rare
        )
    elif not words:
        pool = recent_pool(dialect, where)
    else:
        pool = lexical_pool(dialect, where, words, others, slots, route, rare)
    candidates = pool.subquery("candidates")

    ranked = ranking.scored(candidates, "fused" if dense else "lexical" if words else "recent")
    ranks = bool(words or dense)
    top = ranking.leaders(ranked, threshold=threshold and ranks, relative=relative and ranks, capped=capped)
    top, final_score, linked = ranking.with_relations_boost(dialect, top)
    return (
        select(
            *(_T.c[name] for name in RESULT_COLUMNS),
            top.c.relevance,
            top.c.match,
            final_score.label("score"),
            linked.label("linked"),
        )
        .join_from(top, _T, _T.c.id == top.c.id)
        .order_by(final_score.desc(), top.c.id.desc())
        .limit(bindparam("top_k"))
    )
