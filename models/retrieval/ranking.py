"""memory.query's ranking (docs/spec/003-memory-system.md §6): what a candidate is scored by, and the
stages after the candidate pool — scoring, per-category caps, the leaders and their relations boost.

- lexical relevance: Okapi BM25 of the candidate for every word of the question, stop words included
  (the candidates themselves are found by its other words: models/retrieval/matching.py; in tables of
  5,000 memories or more, the words held by 5% of them are left out of both: term_stats.search_and_score)
  — for each word the memory holds, idf x (K1 + 1) x tf / (tf + K1 x (1 - B + B x length / average
  length)), with idf = ln((N - n + 0.5) / (n + 0.5)) and at least 1e-6, n the memories holding the word
  and N all of them. One rule, two engines (`lexical_score`): SQLite's FTS5 computes exactly this in
  `bm25()` over its index (porter stems; tf and length in tokens, the length one more for the memory's
  agent, which the index holds beside its words: `fts5_match`; N, n and the average over the whole
  index); PostgreSQL computes it in SQL over the stored `fts_vector` (snowball stems; tf from the
  positions; length in distinct words) with N, n and the average length from
  models/retrieval/term_stats.py (`bm25_params`). Relevance is the score divided by the best
  candidate's (LEXICAL_SCALE), so the best lexical match has relevance 1.0 and `relative_threshold` drops weaker ones (with an
  embedder, relevance is fused with the dense one first: models/retrieval/fusion.py); the absolute `match`
  (`coverage`) is what `threshold` compares;
- recency: 1 / (1 + age in units of RECENCY_DAYS, a year), by `updated_at` (without query words, of
  RECENT_DAYS, 30 days);
- importance: (importance - 1) / 4, unrated memories counting as 2;
- the kind of memory: an insight (memory_type `insight`, the ToM job's inference about a person,
  docs/spec/003-memory-system.md §3) is the agent's guess, not a stated fact, so its score is multiplied by
  INSIGHT_WEIGHT (0.8): below a fact of equal relevance, recency and importance, still returned;
- the relations boost (docs/spec/003-memory-system.md §2), when the relations layer is installed: + 0.1 x
  the strength of the memory's strongest edge, applied when re-ranking the leaders.

score = (0.75 relevance + 0.1 recency + 0.15 importance) x weight (without query words: (0.6 recency +
0.4 importance) x weight), the weight INSIGHT_WEIGHT for an insight and 1 for every other memory.

Every function here builds SQL expressions only; models/retrieval/query.py assembles them into one
statement per shape of request.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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
    text,
)
from sqlalchemy.sql.base import ReadOnlyColumnCollection
from sqlalchemy.sql.elements import KeyedColumnElement

from models.memories.memory import AgentMemory

# Recency's weight and scale, chosen on the development conversational sets with memories dated as written
# (`python -m bench.conversational --sweep-recency`; docs/explanation/retrieval.md): the largest weight
# within 0.002 of the best recall@10, which was no recency at all. Of two memories equally relevant the
# newer still ranks first, and a memory a year old gives up 0.05 of the score to a new one; 0.25 at 30 days
# put 0.17 between a memory a week old and one six months old, and pushed the older answers out.
W_RELEVANCE, W_RECENCY, W_IMPORTANCE = 0.75, 0.1, 0.15
W_RELATED = (
    0.1  # docs/spec/003-memory-system.md §2: a small boost by the strongest relation edge of the memory
)
RECENCY_DAYS = 365.0
# Without query words the newest memories are ranked by recency and importance alone, on the scale they had
# before RECENCY_DAYS was chosen: the sweep asked with words, so it says nothing of this ordering.
RECENT_DAYS = 30.0
# How lexical relevance reads a candidate's BM25 score s against the best candidate's (`scored`): "linear",
# s / best s, chosen on the development conversational sets dated (`python -m bench.conversational
# --sweep-scale`; docs/explanation/retrieval.md): the lexical ranking alone, recall@10 averaged over the
# four 0.7919 to 0.8179, recall@5 0.7062 to 0.7503, memory.query with an embedder unchanged (0.8990 to
# 0.8997; the names hop ranks lexically). "squashed", (s / (1 + s)) over the best's, as it was before:
# above a score of a few, every candidate came within a sliver of the best, and recency and importance
# ranked long memories; "coverage", the capped `coverage` over the best's, tied every memory holding the
# whole question (0.2128 averaged).
LEXICAL_SCALES = ("linear", "squashed", "coverage")
LEXICAL_SCALE = "linear"
# docs/spec/003-memory-system.md §3: insights surface with low weight. A multiplier on the whole score, so an
# insight ranks below a fact it ties with and above one it clearly out-scores (a fact the question barely
# touches); docs/explanation/retrieval.md.
INSIGHT_WEIGHT = 0.8
DEFAULT_IMPORTANCE = 2
# BM25's term-frequency saturation and length normalisation: FTS5's bm25() fixes these two, so the
# PostgreSQL expression uses them too.
K1, B = 1.2, 0.75
MIN_IDF = 1e-6  # FTS5's idf for a word held by half the memories or more: it still counts, a little
WORD_SLOTS = 16  # PostgreSQL: the most words a question is scored by (term_stats.bm25_params picks them)
# PostgreSQL: how many word slots a statement has, the question's scoring words rounded up to the first of
# these (`slot_count`). Each count is a statement of its own, which every connection prepares and plans
# apart: bench/api_load.py's 3,000 questions, of 1 to 11 scoring words, made 92 statements with a slot
# per word and make 23 with these (counted ad hoc). A slot past the question's words is NULL, and
# `lexical_score` skips it for a NULL test: 8 slots for 4 words cost nothing measurable in-process at
# 100,000 memories (ad hoc; 16 slots always, +4 % at p50: retrieval notes).
SLOT_STEPS = (8, WORD_SLOTS)

FTS_CONFIG = "memconsole_english"
"""PostgreSQL's text-search configuration of `fts_vector` (migration 0017): 'english' keeping stop words."""

_T = AgentMemory.__table__


def fts5_match(words: Sequence[str], *, every: bool, agent_id: int | None = None) -> str:
    """SQLite: the FTS5 query for `words` (each a quoted string) in the memories' words — any of them, or
    every one — and, given `agent_id`, in that agent's memories only.

    FTS5's index `agent_memories_fts` (migration 0027) holds each memory's words (`content`) and its
    agent's id (`agent_id`), so that a question matches within its agent's memories instead of reading
    every agent's (save an agent holding most of the index: term_stats.names_agent). The words' column is
    always named: a number in a question ("room 4") must not match agent 4's id. bm25() weighs the
    agent's column 0 (`lexical_score`), but FTS5 counts its one token in a memory's length and in the
    average length, so SQLite's lengths are one more than the memory's words: scores a little apart from
    PostgreSQL's, most for the shortest memories."""
    quoted = (" " if every else " OR ").join('"' + word.replace('"', '""') + '"' for word in words)
    found = f"content : ({quoted})"
    return found if agent_id is None else f'agent_id : "{int(agent_id)}" AND {found}'


IMPORTANCE: ColumnElement[Any] = func.coalesce(_T.c.importance, DEFAULT_IMPORTANCE)
"""A memory's importance as ranked, unrated counting as DEFAULT_IMPORTANCE. Public because the request's
importance filters (models/retrieval/filters.py) compare against the same value the ranking scores."""

FTS_VECTOR: ColumnElement[Any] = literal_column("agent_memories.fts_vector")
"""PostgreSQL's stored to_tsvector(FTS_CONFIG, content). Public because it is both what BM25 scores here
and what the candidate pool matches the words against (models/retrieval/matching.py)."""

Scored = Literal["fused", "lexical", "recent"]


def recency(
    dialect: str, updated_at: ColumnElement[Any] = _T.c.updated_at, days: float | None = None
) -> ColumnElement[Any]:
    """1 / (1 + age in units of `days`, RECENCY_DAYS unless given), the age counted up to the bound
    parameter `now`."""
    now = bindparam("now", type_=DateTime)
    age_days: ColumnElement[Any]
    if dialect == "postgresql":
        age_days = func.greatest(0.0, func.extract("epoch", now - updated_at) / 86400.0)
    else:
        age_days = func.max(0.0, func.julianday(now) - func.julianday(updated_at))
    return 1.0 / (1.0 + age_days / (RECENCY_DAYS if days is None else days))


def idf(matches: float, rows: float) -> float:
    """A word's weight: FTS5's idf of a word held by `matches` of `rows` memories."""
    ratio = (rows - matches + 0.5) / (matches + 0.5)
    return max(math.log(ratio), MIN_IDF) if ratio > 0 else MIN_IDF


BM25_WORDS = "bm25_words"


def bm25_words() -> Subquery:
    """PostgreSQL: the question's words as one row, `bm25_words` (q: each word's one-lexeme tsquery; w: its
    idf; at most WORD_SLOTS), from the bound s_terms and s_idf (term_stats.bm25_params). A statement
    scoring candidates joins it once; it reads `slot_count` slots, those past the question's words NULL
    (an array read past its end)."""
    return (
        text("SELECT CAST(:s_terms AS tsquery[]) AS q, CAST(:s_idf AS double precision[]) AS w")
        .columns(q=Float, w=Float)  # arrays, read by `lexical_score` only
        .subquery(BM25_WORDS)
    )


def slot_count(words: int) -> int:
    """PostgreSQL: the word slots of the statement that scores `words` words (SLOT_STEPS)."""
    return next(step for step in SLOT_STEPS if step >= words)


def bm25_length(vector: ColumnElement[Any]) -> ColumnElement[Any]:
    """PostgreSQL: K1 x (1 - B + B x length / average length) of a memory, its length in distinct words
    and the average from the bound s_avgdl (term_stats.bm25_params)."""
    per_word = literal_column(repr(K1 * B)) / bindparam("s_avgdl", type_=Float)
    return literal_column(repr(K1 * (1.0 - B))) + per_word * func.length(vector)


def lexical_score(
    dialect: str,
    vector: ColumnElement[Any] = FTS_VECTOR,
    length: ColumnElement[Any] | None = None,
    slots: int = WORD_SLOTS,
) -> ColumnElement[Any]:
    """A candidate's BM25 score for the question's words (module docstring), as the candidate pool
    carries it on both databases.

    PostgreSQL: `length` is the candidate's `bm25_length`, computed a layer below; the statement joins
    `bm25_words`, of which `slots` words are read (`slot_count`: the question's, rounded up; a slot past
    them is NULL, and its CASE is decided by the NULL test alone). A sum over the slots of
    idf x tf x (K1 + 1) / (tf + length), written
    idf x (K1 + 1) x (1 - length / (tf + length)) so tf is read once, and only for a word the memory
    holds. tf comes from ts_rank of the one word with every weight 1 (tsvector keeps up to 256 positions
    a word): that is (1 + 1/4 + ... + 1/tf^2) / (pi^2 / 6), and pi^2 / 6 minus the sum is 1 / (tf + 1/2)
    give or take 1 / (12 tf^3), so 1 / (pi^2 / 6 - sum) - 1/2, rounded, is tf. Written as SQL text, short:
    PostgreSQL parses and plans it whenever a connection prepares the statement. SQLite: FTS5 scores the
    words of the query the candidate was matched by (models/retrieval/matching.py)."""
    if dialect == "postgresql":
        if length is None:
            raise ValueError("PostgreSQL's BM25 needs the candidate's bm25_length")
        v, n = (str(c.compile(compile_kwargs={"literal_binds": True})) for c in (vector, length))
        terms = []
        for i in range(1, max(slots, 1) + 1):
            word = f"{BM25_WORDS}.q[{i}]"
            tf = f"round({6.0 / math.pi**2!r} / (1.0 - ts_rank('{{1,1,1,1}}'::real[], {v}, {word})) - 0.5)"
            terms.append(
                f"CASE WHEN {v} @@ {word} THEN {BM25_WORDS}.w[{i}] * (1.0 - {n} / ({tf} + {n})) ELSE 0.0 END"
            )
        return cast(literal_column(f"({K1 + 1.0!r} * ({' + '.join(terms)}))"), Float)
    # bm25() is negative, better matches more so; the agent's column weighs nothing (`fts5_match`).
    return -func.bm25(literal_column("agent_memories_fts"), 1.0, 0.0)


def squashed(score: ColumnElement[Any]) -> ColumnElement[Any]:
    """A BM25 score squashed into [0, 1), score / (1 + score): how lexical relevance read it before
    LEXICAL_SCALE was chosen ("squashed"), kept for the sweep that chose it."""
    return score / (1.0 + score)


def candidate_columns(
    dialect: str,
    *,
    lexical: bool = True,
    source: ReadOnlyColumnCollection[str, KeyedColumnElement[Any]] | None = None,
    recency_days: float | None = None,
) -> list[ColumnElement[Any]]:
    """What the ranking needs of a candidate: id, category, recency, importance, weight (`kind_weight`) and
    lexical score.

    `source`: the columns to score (default agent_memories itself), e.g. those of the matches CTE;
    `recency_days`: recency's scale (`recency`'s default RECENCY_DAYS; RECENT_DAYS without query words)."""
    c: ReadOnlyColumnCollection[str, KeyedColumnElement[Any]] = source if source is not None else _T.c
    importance = IMPORTANCE if source is None else func.coalesce(c.importance, DEFAULT_IMPORTANCE)
    columns: list[ColumnElement[Any]] = [
        c.id,
        c.category,
        recency(dialect, c.updated_at, recency_days).label("recency"),
        ((importance - 1) / 4.0).label("imp"),
        kind_weight(c.memory_type).label("weight"),
    ]
    if lexical:  # SQLite's; PostgreSQL's pool calls lexical_score itself
        vector = FTS_VECTOR if source is None else c.fts_vector
        columns.append(lexical_score(dialect, vector).label("lexical"))
    return columns


def kind_weight(memory_type: ColumnElement[Any]) -> ColumnElement[Any]:
    """What a candidate's score is multiplied by for its kind: INSIGHT_WEIGHT for an insight, else 1."""
    # Literals in the statement's text, not parameters: a prepared statement's generic plan types an
    # untyped parameter as text, which cannot multiply a score.
    return case(
        (memory_type == literal_column("'insight'"), literal_column(repr(INSIGHT_WEIGHT), Float)),
        else_=literal_column("1.0", Float),
    )


def coverage(lexical: ColumnElement[Any]) -> ColumnElement[Any]:
    """The absolute lexical match of a candidate, from its BM25 score: the score divided by the question's weight (bound `q_weight`, term_stats.question_weight: what a memory holding
    every word of the question once, at the average length, scores), at most 1. It depends on the memory,
    the question and the whole table's word figures, never on the other candidates: 1.0, the whole
    question matched; 0.3, words carrying 30% of the question's weight (docs/reference/api.md, "`threshold` is
    absolute")."""
    share = lexical / bindparam("q_weight", type_=Float)
    return case((share > 1.0, 1.0), else_=share)


def scored(pool: Subquery, kind: Scored) -> Subquery:
    """Each candidate's relevance, match and score ("scored": id, category, relevance, match, score).
    `kind`: "fused" (relevance fused in the pool, relative to its best; match the larger of the word
    `coverage` and the cosine similarity), "lexical" (the BM25 score divided by the pool's best; match its
    `coverage`) or "recent" (no words: recency and importance alone, relevance and match NULL).

    `relevance` ranks (relative: the best candidate has 1.0, whatever it matched); `match` is what the
    absolute `threshold` compares, so a question nothing answers well returns nothing."""
    relevance: ColumnElement[Any]
    match: ColumnElement[Any]
    if kind == "fused":
        relevance = pool.c.relevance
        words = coverage(pool.c.lexical)
        match = case((words > pool.c.cosine, words), else_=pool.c.cosine)
        score = W_RELEVANCE * relevance + W_RECENCY * pool.c.recency + W_IMPORTANCE * pool.c.imp
    elif kind == "lexical":
        value = {"linear": lambda lexical: lexical, "squashed": squashed, "coverage": coverage}[
            LEXICAL_SCALE
        ](pool.c.lexical)
        best = func.max(value).over()
        relevance = case((best > 0, value / best), else_=0.0)
        match = coverage(pool.c.lexical)
        score = W_RELEVANCE * relevance + W_RECENCY * pool.c.recency + W_IMPORTANCE * pool.c.imp
    else:
        relevance = match = cast(literal_column("NULL"), Float)
        score = 0.6 * pool.c.recency + 0.4 * pool.c.imp
    score = score * pool.c.weight
    return select(
        pool.c.id, pool.c.category, relevance.label("relevance"), match.label("match"), score.label("score")
    ).subquery("scored")


def leaders(ranked: Subquery, *, threshold: bool, relative: bool, capped: tuple[str, ...]) -> Subquery:
    """The best candidates to re-rank (bound parameter `leaders`: how many): those whose match reaches the
    bound `threshold` (when `threshold`) and whose relevance reaches the bound `relative_threshold` (when
    `relative`), at most `cap_<i>` of the i-th `capped` category (context mode: at most rag_length
    results of a category in one answer)."""
    conditions: list[ColumnElement[bool]] = []
    if threshold:
        conditions.append(ranked.c.match >= bindparam("threshold"))
    if relative:
        conditions.append(ranked.c.relevance >= bindparam("relative_threshold"))
    if capped:
        cap = case({name: bindparam(f"cap_{i}") for i, name in enumerate(capped)}, value=ranked.c.category)
        in_category = func.row_number().over(partition_by=ranked.c.category, order_by=ranked.c.score.desc())
        ranked = select(ranked, in_category.label("rank_in_category"), cap.label("cap")).subquery("capped")
        conditions.append(or_(ranked.c.cap.is_(None), ranked.c.rank_in_category <= ranked.c.cap))
    return (
        select(ranked.c.id, ranked.c.relevance, ranked.c.match, ranked.c.score)
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
