"""memory.query's candidates (docs/spec/003-memory-system.md §6): which memories a query's words match,
and the bounded pool of them the ranking scores (models/retrieval/ranking.py).

Words are OR-ed: a memory matching more of them ranks higher. The engines: PostgreSQL full-text search
over the stored, GIN-indexed `fts_vector`; SQLite FTS5 over `agent_memories_fts`.

Bounded work, whatever the words (see `lexical_pool`): a query whose words match at most EXACT_LIMIT
memories ranks every match; one of common words ("user") ranks the newest POOL_ANY matches plus up to
POOL_ALL memories containing every word — recency weighs in the score anyway — instead of scoring a
large part of the agent's memory on every call. The recency index and a GIN index without a pending
list keep both paths short; the worst case is words matching just over EXACT_LIMIT memories.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import (
    ColumnElement,
    CompoundSelect,
    Index,
    Select,
    String,
    bindparam,
    column,
    false,
    func,
    literal_column,
    select,
    table,
    union,
)

from models.memories.memory import AgentMemory
from models.retrieval.ranking import FTS_VECTOR, candidate_columns

MAX_TERMS = 16
MAX_TERM_CHARS = 64
EXACT_LIMIT = 1500  # PostgreSQL: up to this many matches, every match is ranked (see lexical_pool)
POOL_ALL = 500  # candidates containing every query word
POOL_ANY = 50  # candidates containing any query word, newest first (>= the largest top_k)
POOL_RECENT = 500  # without query words: the newest memories, ranked by recency and importance
POOL_SQLITE = 1000  # SQLite: candidates containing any query word, newest first
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

_T = AgentMemory.__table__
_fts = table("agent_memories_fts", column("rowid"))
_FTS_JOIN = _fts.join(_T, _T.c.id == _fts.c.rowid)  # SQLite: agent_memories and its FTS5 index

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


def query_terms(text: str | None) -> list[str]:
    """Words of the query (letters and digits only), lower-cased, de-duplicated, at most 16, English stop
    words left out ("what would she like to study" searches "like study"): a whole question ORs
    together a dozen words, and the stop words among them match most of an agent's memories, which made
    natural-language questions slow without making them better. A query of stop words only keeps them."""
    words = re.findall(r"[^\W_]+", (text or "").lower())
    words = list(dict.fromkeys(w[:MAX_TERM_CHARS] for w in words if w not in ("or", "and", "not")))
    content = [w for w in words if w not in STOP_WORDS]
    return (content or words)[:MAX_TERMS]


def match_text(dialect: str, terms: list[str], *, every: bool) -> str:
    """The query words as the engine's query: any of them, or every one of them."""
    if dialect == "postgresql":  # websearch_to_tsquery syntax: never a syntax error
        return (" " if every else " or ").join(terms)
    return (" " if every else " OR ").join(f'"{t}"' for t in terms)  # FTS5: each word a quoted string


def _match(dialect: str, param: str) -> tuple[ColumnElement[Any], ColumnElement[Any] | None]:
    """The full-text match of the bound query `param`: (WHERE clause, PostgreSQL's tsquery or None). On
    SQLite the clause needs agent_memories joined to its FTS5 index (`_FTS_JOIN`)."""
    if dialect == "postgresql":
        tsquery = func.websearch_to_tsquery(FTS_CONFIG, bindparam(param, type_=String))
        return FTS_VECTOR.op("@@")(tsquery), tsquery
    return literal_column("agent_memories_fts").op("MATCH")(bindparam(param, type_=String)), None


def recent_pool(dialect: str, where: list[ColumnElement[bool]]) -> Select[Any]:
    """Without query words: the POOL_RECENT newest memories (id, category, recency, imp)."""
    return (
        select(*candidate_columns(dialect, lexical=False))
        .where(*where)
        .order_by(_T.c.updated_at.desc())
        .limit(POOL_RECENT)
    )


def _sqlite_pool(dialect: str, where: list[ColumnElement[bool]], words: int) -> Select[Any]:
    def newest(param: str, limit: int) -> Select[Any]:
        match, _ = _match(dialect, param)
        ids = select(_T.c.id).select_from(_FTS_JOIN)
        return select(ids.where(*where, match).order_by(_T.c.updated_at.desc()).limit(limit).subquery())

    ids: Select[Any] | CompoundSelect[Any] = newest("q_any", POOL_SQLITE)
    if words > 1:
        ids = union(newest("q_all", POOL_ALL), ids)
    match, _ = _match(dialect, "q_any")
    return select(*candidate_columns(dialect)).select_from(_FTS_JOIN).where(_T.c.id.in_(ids), match)


def lexical_pool(
    dialect: str, where: list[ColumnElement[bool]], words: int
) -> Select[Any] | CompoundSelect[Any]:
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
        return _sqlite_pool(dialect, where, words)
    any_word, tsquery = _match(dialect, "q_any")
    columns = candidate_columns(dialect, tsquery)
    # The matches are fetched once, with what scoring needs: when there are at most EXACT_LIMIT they are
    # the candidates themselves, so the exact path reads the heap once, not twice.
    some = (
        select(_T.c.id, _T.c.category, _T.c.updated_at, _T.c.importance, FTS_VECTOR.label("fts_vector"))
        .where(*where, any_word)
        .limit(EXACT_LIMIT + 1)
        .cte("some_matches")
        .prefix_with("MATERIALIZED", dialect="postgresql")
    )
    found = select(func.count()).select_from(some).scalar_subquery()
    parts = [select(*candidate_columns(dialect, tsquery, source=some.c)).where(found <= EXACT_LIMIT)]
    recent_any = (
        select(*columns)
        .where(*where, func.coalesce(any_word, false()), found > EXACT_LIMIT)
        .order_by(_T.c.updated_at.desc())
        .limit(POOL_ANY)
        .subquery()
    )
    parts.append(select(recent_any))
    if words > 1:
        every_word, _ = _match(dialect, "q_all")
        every = select(*columns).where(*where, every_word, found > EXACT_LIMIT).limit(POOL_ALL).subquery()
        parts.append(select(every))
    return union(*parts)
