"""memory.query's candidates (docs/spec/003-memory-system.md §6): which memories a query's words match,
and the bounded pool of them the ranking scores (models/retrieval/ranking.py).

Every word of the question weighs in the score (BM25: the rarer a word, the more it counts, so stop
words count little); the memories are found by its content words — the words that are not stop words
(`search_terms`) — OR-ed, so a memory sharing only "is" or "the" with a question is never a
candidate. The engines: PostgreSQL full-text search over the stored, GIN-indexed `fts_vector`
(configuration `memconsole_english`: 'english' keeping its stop words, migration 0017); SQLite FTS5
over `agent_memories_fts`.

Bounded work, whatever the words (see `plan` and `lexical_pool`): on PostgreSQL the words' figures
(term_stats: how many memories hold each) choose the route before the statement runs. Rare words have all
their matches ranked; of common words ("user"), the newest POOL_ANY matches are ranked, plus up to POOL_ALL
memories containing every word — recency weighs in the score anyway — instead of scoring a large part of
the agent's memory on every call. The newest are sorted out of the matches when there are few enough,
else found by walking the agent's newest memories (the recency index). Agent-led and words-only GIN
indexes without a pending list keep the fetches short (migration 0018).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from sqlalchemy import (
    CTE,
    ColumnElement,
    CompoundSelect,
    Index,
    Select,
    String,
    Subquery,
    bindparam,
    column,
    false,
    func,
    literal_column,
    select,
    table,
    true,
    union,
)

from models.memories.memory import AgentMemory
from models.retrieval.ranking import (
    FTS_CONFIG,
    FTS_VECTOR,
    RECENT_DAYS,
    WORD_SLOTS,
    bm25_length,
    bm25_words,
    candidate_columns,
    fts5_match,
    lexical_score,
)

MAX_TERMS = 16  # content words searched
MAX_WORDS = 32  # words scored
MAX_TERM_CHARS = 64
EXACT_LIMIT = 1500  # PostgreSQL: up to this many matches, every match is ranked (see lexical_pool)
RARE_LIMIT = 1000  # PostgreSQL: past EXACT_LIMIT, the rarest words' matches all ranked, up to this many
# PostgreSQL, common words (see lexical_pool): the most matches fetched to sort the newest out of; the
# newest memories walked for them, and how many matches the walk must find there to stand.
SORT_LIMIT = 2000
WINDOW = 5000
WALK_ENOUGH = 10  # <= POOL_ANY
POOL_ALL = 500  # candidates containing every query word
POOL_ANY = 50  # candidates containing any query word, newest first (>= the largest top_k)
POOL_RECENT = 500  # without query words: the newest memories, ranked by recency and importance
POOL_SQLITE = 1000  # SQLite: candidates containing any query word, newest first
Route = Literal["exact", "sorted", "walk"]
_CONFIG: ColumnElement[Any] = literal_column(f"'{FTS_CONFIG}'::regconfig")

# PostgreSQL's 'english' text-search stop words, plus the modal verbs questions are made of: words that
# find no memory (most memories hold some), but weigh in the score of those the other words found.
STOP_WORDS = frozenset(
    """
would could might shall also
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
herself they them their theirs themselves
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


def question_words(text: str | None) -> list[str]:
    """The words the ranking scores: every word of the query (letters and digits only), lower-cased,
    de-duplicated, at most MAX_WORDS, stop words included ("is", "her", the "s" of "Maya's")."""
    words = re.findall(r"[^\W_]+", (text or "").lower())
    return list(dict.fromkeys(w[:MAX_TERM_CHARS] for w in words if w not in ("or", "and", "not")))[:MAX_WORDS]


def search_terms(words: list[str]) -> list[str]:
    """The words that find the candidates: `words` without the stop words, at most MAX_TERMS ("what would
    she like to study" searches "like study"). A whole question ORs together a dozen words, and the stop
    words among them match most of an agent's memories: searching them made questions slow and, since
    a memory sharing only stop words with a question then crowded out one sharing its content, worse
    (bench/retrieval_quality.py). A query of stop words only searches them."""
    content = [w for w in words if w not in STOP_WORDS]
    return (content or words)[:MAX_TERMS]


def query_terms(text: str | None) -> list[str]:
    """The query's search terms (`search_terms` of `question_words`)."""
    return search_terms(question_words(text))


def match_text(dialect: str, terms: list[str], *, every: bool, agent_id: int | None = None) -> str:
    """The query words as the engine's query: any of them, or every one of them. SQLite: within
    `agent_id`'s memories, when given (ranking.fts5_match); PostgreSQL's statements name the agent in
    their WHERE clause, which its agent-led index serves."""
    if dialect == "postgresql":  # websearch_to_tsquery syntax: never a syntax error
        return (" " if every else " or ").join(terms)
    return fts5_match(terms, every=every, agent_id=agent_id)


def scoring_text(terms: list[str], others: list[str], agent_id: int | None) -> str:
    """SQLite: the FTS5 query that scores a candidate by every word of the question, the search terms and
    the other words. It is matched against the candidates only (`_sqlite_pool`), all of which hold a
    search term, so it finds no more of them. FTS5's bm25() is a sum over the phrases of its query, each
    counted with its own whole-index idf and nothing for a phrase the memory lacks (the agent's phrase
    weighs nothing: ranking.fts5_match): a candidate's score by this query is its score by the search
    terms plus what the other words it holds add."""
    return fts5_match([*terms, *others], every=False, agent_id=agent_id)


def _match(dialect: str, param: str) -> ColumnElement[Any]:
    """The full-text match of the bound query `param`. On SQLite the clause needs agent_memories joined
    to its FTS5 index (`_FTS_JOIN`)."""
    if dialect == "postgresql":
        # The tsquery built once a run (a subquery PostgreSQL computes first): in a prepared statement's
        # generic plan the call was made for every row the walk route read (its walk 2.5x slower).
        query = select(func.websearch_to_tsquery(_CONFIG, bindparam(param, type_=String))).scalar_subquery()
        return FTS_VECTOR.op("@@")(query)
    return literal_column("agent_memories_fts").op("MATCH")(bindparam(param, type_=String))


def recent_pool(dialect: str, where: list[ColumnElement[bool]]) -> Select[Any]:
    """Without query words: the POOL_RECENT newest memories (id, category, recency, imp, weight)."""
    return (
        select(*candidate_columns(dialect, lexical=False, recency_days=RECENT_DAYS))
        .where(*where)
        .order_by(_T.c.updated_at.desc())
        .limit(POOL_RECENT)
    )


def _sqlite_pool(dialect: str, where: list[ColumnElement[bool]], words: int, others: bool) -> Select[Any]:
    def newest(param: str, limit: int) -> Select[Any]:
        # The matches as a list SQLite builds once (IN a subquery), not a join: joined, the planner may walk
        # the agent's (or the user's) memories along their recency index and probe FTS5 for each one, a
        # whole full-text query per memory (140 ms for 2,500 memories on a database never ANALYZEd).
        matches = select(_fts.c.rowid).where(_match(dialect, param))
        newest_first = select(_T.c.id).where(*where, _T.c.id.in_(matches)).order_by(_T.c.updated_at.desc())
        return select(newest_first.limit(limit).subquery())

    found: Select[Any] | CompoundSelect[Any] = newest("q_any", POOL_SQLITE)
    if words > 1:
        found = union(newest("q_all", POOL_ALL), found)
    ids = found.cte("candidate_ids")

    def scored(param: str) -> Select[Any]:
        # The full-text match reads every agent's memories; each match is checked against the pool before
        # its memory is looked up, not after (`rowid + 0`: a clause on the full-text row that no index
        # serves — asked of FTS5 as `rowid IN`, it would run the whole query once per candidate).
        in_pool = (_fts.c.rowid + 0).in_(select(ids.c.id))
        return (
            select(*candidate_columns(dialect)).select_from(_FTS_JOIN).where(in_pool, _match(dialect, param))
        )

    # One full-text pass scores the candidates: by every word (q_scored, see `scoring_text`) when the
    # question has words other than its search terms. Each pass reads the words' whole posting lists,
    # which is most of the statement's time when they are common.
    return scored("q_scored" if others else "q_any")


class Plan(NamedTuple):
    """How the candidates are found (PostgreSQL; `plan`)."""

    route: Route
    rare: list[str]  # the words all of whose matches are candidates
    common: list[str]  # the words of which the newest matches are


def plan(terms: list[str], matches: Mapping[str, int], share: float = 1.0) -> Plan:
    """Which of the search `terms` are rare enough for all their matches to be candidates, and how the
    newest matches of the others are found, from each word's memories in the whole table (term_stats:
    counted for the rarer words, estimated from the column's statistics for the commonest). One agent
    holds no more than the table, so a route chosen for the table is not too small for the agent, up to
    those estimates; where an estimate is low, each fetch's LIMIT still bounds the work, and the
    candidates are then some of the matches rather than all.

    When all the words' matches add up to EXACT_LIMIT at most: "exact", every match scored. Otherwise the
    rarest words are rare while their matches add up to RARE_LIMIT at most, and the rest are common:
    "sorted" when their matches, times `share`, add up to SORT_LIMIT at most (fetched, and sorted, for
    the newest); "walk" beyond (see `lexical_pool`). `share`: the filtered user's estimated share of the
    table (term_stats.user_share; 1.0 without a user filter), so a user's question sorts its user's few
    matches rather than walking the user's newest memories. Being an estimate, it costs time when low,
    not results: the sorted route walks after all when the matches turn out more than SORT_LIMIT."""
    if sum(matches.get(t, 0) for t in terms) <= EXACT_LIMIT:
        return Plan("exact", list(terms), [])
    rare: list[str] = []
    total = 0
    for term in sorted(terms, key=lambda t: matches.get(t, 0)):
        if total + matches.get(term, 0) > RARE_LIMIT:
            break
        rare.append(term)
        total += matches.get(term, 0)
    common = [t for t in terms if t not in rare]
    many = sum(matches.get(t, 0) for t in common) * share > SORT_LIMIT
    return Plan("walk" if many else "sorted", rare, common)


def lexical_pool(
    dialect: str,
    where: list[ColumnElement[bool]],
    words: int,
    others: bool = False,
    slots: int = WORD_SLOTS,
    route: Route = "exact",
    rare: bool = True,
) -> Select[Any] | CompoundSelect[Any]:
    """The candidates to rank (id, category, recency, imp, lexical), at bounded cost whatever the words.

    PostgreSQL, by the route `plan` chose from the words' figures (no statement spent finding out):

    - "exact": every match of the words (bound as q_any), fetched once with what scoring needs (a GIN
      bitmap: agent-led, or words-only when the agent holds most of the table; migration 0018);
    - otherwise every match of the rare words (q_rare; `rare`: whether there are any), so a rare word's
      hits are never crowded out, the POOL_ANY newest matches of the common ones (q_common), and, when
      no word is rare, up to POOL_ALL memories holding every word (q_all). The newest matches:
      "sorted", the common words' matches (at most SORT_LIMIT, by `plan`'s estimate) fetched with their
      recency and sorted — the walk's instead when the fetch finds more than SORT_LIMIT; "walk", the
      agent's WINDOW newest memories walked along the recency index, each tested, stopping at POOL_ANY
      matches — kept when there are WALK_ENOUGH, which are then the newest (older matches lose on
      recency) — else the words are sparse among the newest and the newest of up to SORT_LIMIT matches
      are sorted out.

    Each costs about a row read per memory it reads: at most EXACT_LIMIT; RARE_LIMIT + SORT_LIMIT; or
    RARE_LIMIT + WINDOW + SORT_LIMIT (plus POOL_ALL; a sorted route that walks after all, SORT_LIMIT
    more). Two approximations, both bounding that work: a walk keeping between WALK_ENOUGH and POOL_ANY
    matches ranks fewer than POOL_ANY; and a walk's fallback, when the agent holds more than SORT_LIMIT
    matches, sorts the SORT_LIMIT it fetched first (in the order of the table on disk), not all of them.
    How often the top 5 differs from ranking every match at a million memories: `bench.nl_latency
    --agreement` (bench/results/nl.section.md).

    SQLite (the embedded default, no latency target): the POOL_ALL newest memories containing every word
    and the POOL_SQLITE newest containing any.

    Every candidate is scored by every word of the question (models/retrieval/ranking.py,
    `lexical_score`): on PostgreSQL through `slots` words bound as arrays (term_stats.bm25_params); on
    SQLite through q_scored (`scoring_text`) when `others`, that is when the question has words other
    than its search terms (bound as q_any and q_all there).
    """
    if dialect != "postgresql":
        return _sqlite_pool(dialect, where, words, others)

    def matching(param: str, limit: int) -> Select[Any]:
        return select(*_matched()).where(*where, _match(dialect, param)).limit(limit)

    found: Select[Any] | CompoundSelect[Any]
    if route == "exact":
        found = matching("q_any", EXACT_LIMIT)
    else:
        parts = _walked(where) if route == "walk" else _sorted(where)
        if rare:
            parts.append(matching("q_rare", EXACT_LIMIT))
        elif words > 1:
            # A memory holding every word holds the rare ones, so it is among their matches already;
            # without rare words, up to POOL_ALL of them join (a GIN intersection of common words).
            parts.append(matching("q_all", POOL_ALL))
        # Each memory once: the parts may overlap.
        found = union(*(select(part.subquery()) for part in parts))
    matches = found.subquery("matched")
    # Scored once: OFFSET 0 keeps the candidates a subquery of their own (pulled up into the ranking, the
    # score's expression would be copied, and run, wherever the ranking reads it).
    score = lexical_score(dialect, matches.c.fts_vector, matches.c.length, slots)
    once = (
        select(*candidate_columns(dialect, lexical=False, source=matches.c), score.label("lexical"))
        .select_from(matches.join(bm25_words(), true()))
        .offset(0)
        .subquery("scored_once")
    )
    return select(
        once.c.id,
        once.c.category,
        once.c.recency,
        once.c.imp,
        once.c.weight,
        once.c.lexical,
    )


def _matched() -> tuple[ColumnElement[Any], ...]:
    """What scoring needs of a match (PostgreSQL)."""
    return (
        *(_T.c[name] for name in ("id", "category", "updated_at", "importance", "memory_type")),
        FTS_VECTOR.label("fts_vector"),
        bm25_length(FTS_VECTOR).label("length"),
    )


def _sorted(where: list[ColumnElement[bool]]) -> list[Select[Any]]:
    """The "sorted" route's newest matches of q_common: the POOL_ANY newest sorted out of all of them when
    there are SORT_LIMIT at most — fetched with their recency only, one more than that to tell — else the
    walk's (`plan` estimated too few: the fetch would have sorted some of the matches, not all)."""
    some = (
        _common_matches(where, SORT_LIMIT + 1)
        .cte("common_matches")
        .prefix_with("MATERIALIZED", dialect="postgresql")
    )
    fits = select(func.count()).select_from(some).scalar_subquery() <= SORT_LIMIT
    # Each part runs only when its condition holds (PostgreSQL tests a condition on no row's columns once,
    # before running the part): the walk only after the fetch found too many.
    return [_newest_of(some, where, fits), *_walked(where, ~fits)]


def _walked(where: list[ColumnElement[bool]], *when: ColumnElement[bool]) -> list[Select[Any]]:
    """The "walk" route's newest matches of q_common: those among the agent's WINDOW newest memories
    (up to POOL_ANY) when there are WALK_ENOUGH of them, else the newest sorted out of the matches.
    `when`: conditions on the whole walk (`_sorted`'s fallback)."""
    common = _match("postgresql", "q_common")
    # The walk reads only what tells a match (coalesce: so the planner cannot switch to fetching every
    # match through the GIN index); the matches' other columns are read by id, for them alone.
    window = (
        select(_T.c.id, _T.c.updated_at, func.coalesce(common, false()).label("hit"))
        .where(*where)
        .order_by(_T.c.updated_at.desc())
        .limit(WINDOW)
        .subquery("newest_memories")
    )
    walked = (
        select(window.c.id)
        .where(window.c.hit)
        .order_by(window.c.updated_at.desc())
        .limit(POOL_ANY)
        .cte("walked_matches")
        .prefix_with("MATERIALIZED", dialect="postgresql")
    )
    enough = select(func.count()).select_from(walked).scalar_subquery() >= WALK_ENOUGH
    return [
        select(*_matched()).where(*where, _T.c.id.in_(select(walked.c.id)), *when, enough),
        _newest(where, "sparse_matches", *when, ~enough),
    ]


def _newest(where: list[ColumnElement[bool]], name: str, *when: ColumnElement[bool]) -> Select[Any]:
    """The POOL_ANY newest matches of q_common, sorted out of up to SORT_LIMIT of them."""
    return _newest_of(_common_matches(where, SORT_LIMIT, *when).subquery(name), where)


def _common_matches(where: list[ColumnElement[bool]], limit: int, *when: ColumnElement[bool]) -> Select[Any]:
    """Up to `limit` matches of q_common, with their recency only (what scoring needs is read for the
    newest alone: `_newest_of`)."""
    return (
        select(_T.c.id, _T.c.updated_at).where(*where, _match("postgresql", "q_common"), *when).limit(limit)
    )


def _newest_of(
    fetched: Subquery | CTE, where: list[ColumnElement[bool]], *when: ColumnElement[bool]
) -> Select[Any]:
    """What scoring needs of the POOL_ANY newest of the `fetched` matches (`_common_matches`)."""
    newest = select(fetched.c.id).order_by(fetched.c.updated_at.desc()).limit(POOL_ANY)
    return select(*_matched()).where(*where, _T.c.id.in_(newest), *when)
