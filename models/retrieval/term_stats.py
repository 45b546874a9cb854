"""Word figures for memory.query: which query words are too common to search by, and, on PostgreSQL, what
BM25 weighs the words by.

Too common to search by — the defence against long questions. A natural-language question ORs together
half a dozen words after its stop words are gone, and one of them is often a word most memories contain
("user" in "What did the user decide about the budget?"). Matching that word alone makes every memory a
candidate: the full-text engine reads its whole posting list and scores every row, which is what made such
questions slow (bench/results/retrieval_notes.section.md). Its weight in the score is small anyway — the rarer
a word, the more it counts in BM25 — so a word found in at least COMMON_SHARE of all memories is left out of
the search, as long as a rarer one remains (a question made only of common words keeps them all).

How common a word is, per database (both cached per process for CACHE_SECONDS, so a question costs no
extra statement once its words have been seen):

- PostgreSQL: the full-text column's statistics (`pg_stats.most_common_elems` of
  agent_memories.fts_vector, kept by ANALYZE / autovacuum), matched against the word's stems;
- SQLite: the word's matches in the FTS5 index (porter-stemmed like the search), counted up to the
  threshold.

What BM25 weighs the words by (PostgreSQL; FTS5 keeps its own figures for `bm25()`): `bm25_params` —
N, the memories; n, each word's memories, from the same statistics for the words they list (the
commonest) and counted through the full-text index for the others; the average length of a memory.
Tables under MIN_ROWS memories are counted afresh for every question (cheap there, and exact); larger
ones are cached like the rest: N from the table's statistics, the average length from a sample of its
pages, the same pages in every process (REPEATABLE), so one question gets one answer whichever process asks.

All are whole-table figures, not per agent, save the two an agent's own memories give (`names_agent`,
`crowded_words`). Tables under MIN_ROWS memories are never pruned: there a word most memories hold is
often the one a question shares with its answer (a person's name), and leaving it out cost the labelled
set much of its lexical recall. The price is speed: on SQLite a question whose words most memories hold
scores up to matching.POOL_SQLITE of them (`python -m bench.nl_latency --database sqlite --memories
2500`; bench/results/retrieval_notes.section.md).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from sqlalchemy import text

from models.db import db
from models.retrieval.ranking import FTS_CONFIG, MIN_IDF, WORD_SLOTS, fts5_match, idf, slot_count

COMMON_SHARE = 0.05
MIN_ROWS = 5000
# SQLite: an agent holding this share of the full-text index's memories or more is not named in its
# questions' matches (`names_agent`). Not swept: it lies between the two cases measured, one agent holding
# every memory (slower named) and ten agents holding a tenth each (quicker named).
AGENT_SHARE = 0.5
# A name held by this many of its agent's own memories or more is asked for by no second hop (bridging.telling),
# chosen on the development sets (`python -m bench.conversational --sweep-crowded`). None: no such rule.
CROWDED = 6
CACHE_SECONDS = 600.0
MAX_WORDS = 50_000  # cached word figures per process; the oldest half is dropped past it
LENGTH_SAMPLE = 2000  # PostgreSQL: memories sampled for the average length


class _Table(NamedTuple):
    rows: int
    freqs: Mapping[str, float]  # PostgreSQL: the most common stems, each with its share of the memories
    avgdl: float  # PostgreSQL: the average length of a memory, in distinct words
    common: frozenset[str] = frozenset()  # PostgreSQL: the stems held by COMMON_SHARE of them or more
    listed: str = "{}"  # PostgreSQL: the stems the statistics list (a text[] literal)
    cap: int = 1  # PostgreSQL: how far an unlisted word's memories are counted (rarer than any listed one)
    # PostgreSQL, for `user_share`: the commonest users' shares of the memories, and that of any other user;
    # empty (every share 1.0) without the user-led full-text index (migration 0019) or statistics.
    users: Mapping[str, float] = {}
    other_user: float = 1.0


class Figures(NamedTuple):
    """What `bm25_params` reads for a question (PostgreSQL)."""

    params: dict[str, Any]  # the bound values of ranking.bm25_words
    slots: int  # how many word slots the statement scores (ranking.slot_count)
    # Each word's memories in the whole table (all agents): counted for the rarer words, estimated from the
    # column's statistics for the commonest (so an agent holds at most that many, up to that estimate).
    matches: dict[str, int]
    # The question's weight: the sum of its words' idfs, each word counted (a word no memory holds too, at
    # its highest idf), what ranking.scored divides a BM25 score by for the absolute `match`.
    weight: float = 1.0


class _Word(NamedTuple):  # PostgreSQL
    stems: tuple[str, ...]
    query: str  # its tsquery, as text
    matches: int | None  # the memories holding it (counted up to the table's cap); None: listed


_lock = threading.Lock()
_tables: dict[str, tuple[float, _Table]] = {}  # database -> (expires, figures)
_words: dict[tuple[str, str], tuple[float, Any]] = {}  # (database, word) -> (expires, _Word or count)


def _key() -> str:
    return str(db.engine.url)


def _cached_words(key: str, words: Sequence[str], now: float) -> tuple[dict[str, Any], list[str]]:
    known: dict[str, Any] = {}
    missing: list[str] = []
    for word in words:
        hit = _words.get((key, word))
        if hit is not None and hit[0] > now:
            known[word] = hit[1]
        else:
            missing.append(word)
    return known, missing


def _remember(key: str, found: Mapping[str, Any], now: float) -> None:
    with _lock:
        if len(_words) > MAX_WORDS:
            for old in list(_words)[: MAX_WORDS // 2]:
                _words.pop(old, None)
        for word, value in found.items():
            _words[(key, word)] = (now + CACHE_SECONDS, value)


def array_literal(items: Iterable[str]) -> str:
    """An array literal, bound as text of no type: PostgreSQL reads it once, as the type the statement
    casts it to, and the driver does not adapt it element by element."""
    quoted = (item.replace("\\", "\\\\").replace('"', '\\"') for item in items)
    return "{" + ",".join(f'"{item}"' for item in quoted) + "}"


def _postgresql_table(key: str, now: float) -> _Table:
    cached = _tables.get(key)
    if cached is not None and cached[0] > now:
        return cached[1]
    rows = db.session.execute(
        text("SELECT reltuples::bigint FROM pg_class WHERE oid = 'agent_memories'::regclass")
    ).scalar_one()
    stats = db.session.execute(
        text(
            "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
            "WHERE schemaname = current_schema() AND tablename = 'agent_memories' AND attname = 'fts_vector'"
        )
    ).first()
    freqs: dict[str, float] = {}
    if stats is not None and stats[0]:
        freqs = dict(zip(stats[0], stats[1], strict=False))
    users, other_user = _user_shares(rows)
    avgdl = 0.0
    if rows >= MIN_ROWS:  # smaller tables are counted afresh (bm25_params)
        avgdl = db.session.execute(
            text(
                "SELECT avg(length(fts_vector)) FROM agent_memories TABLESAMPLE SYSTEM (:pct) REPEATABLE (0) "
                "WHERE deleted_at IS NULL"
            ),
            {"pct": min(100.0, 100.0 * LENGTH_SAMPLE / rows)},
        ).scalar_one()
    common = frozenset(stem for stem, share in freqs.items() if share >= COMMON_SHARE)
    # A stem the statistics do not list is rarer than the rarest they do, give or take the sample's error.
    cap = max(1, int(2 * min(freqs.values(), default=COMMON_SHARE) * rows))
    table = _Table(
        int(rows), freqs, float(avgdl or 1.0), common, array_literal(freqs), cap, users, other_user
    )
    _tables[key] = (now + CACHE_SECONDS, table)
    return table


_USER_LED = text(
    "SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'agent_memories' "
    "AND indexname = 'agent_memories_agent_user_fts'"
)
_USER_STATS = text(
    "SELECT most_common_vals::text::text[], most_common_freqs, n_distinct, null_frac FROM pg_stats "
    "WHERE schemaname = current_schema() AND tablename = 'agent_memories' AND attname = 'user_id'"
)


def _user_shares(rows: float) -> tuple[dict[str, float], float]:
    """PostgreSQL: each of the commonest users' share of the memories, and any other user's (the rest,
    split evenly among the other users: the planner's own estimate), from the column's statistics. ({},
    1.0) where they, or the user-led full-text index, are missing (without it memory.query could not
    fetch one user's matches alone: `user_share`)."""
    if db.session.execute(_USER_LED).first() is None:
        return {}, 1.0
    stats = db.session.execute(_USER_STATS).first()
    if stats is None:
        return {}, 1.0
    names, shares, distinct, nulls = stats
    listed = dict(zip(names or [], shares or [], strict=False))
    # n_distinct: the number of users, or minus their share of the rows when it grows with the table.
    users = distinct if distinct >= 0 else -distinct * rows
    others = max(1.0, users - len(listed))
    return listed, max(0.0, 1.0 - (nulls or 0.0) - sum(listed.values())) / others


def user_share(user_id: str) -> float:
    """PostgreSQL: about what share of all memories `user_id` holds (the column's statistics, cached with
    the table's figures); 1.0 without the user-led full-text index (migration 0019) or statistics, so
    memory.query then plans as for the whole agent. An estimate, not a bound: matching.plan uses it only
    where a low one costs time, never results."""
    table = _postgresql_table(_key(), time.monotonic())
    return table.users.get(user_id, table.other_user)


# Each word as a one-lexeme tsquery (its stem: a word of letters and digits is one lexeme to the parser;
# were it several, the first), its stems, and the memories holding it.
_STEMMED = f"""SELECT w, stems, CAST(quote_literal(stems[1]) AS tsquery) AS q FROM (
    SELECT w, array(SELECT lexeme FROM unnest(to_tsvector('{FTS_CONFIG}', w))) AS stems
    FROM unnest(CAST(:words AS text[])) AS w) AS words"""
_ACTIVE = "SELECT fts_vector FROM agent_memories WHERE deleted_at IS NULL"
# Reading no column, the count is answered from the index and the visibility map where it can be.
_MATCHES = "(SELECT count(*) FROM (SELECT 1 FROM agent_memories WHERE deleted_at IS NULL AND fts_vector @@ q LIMIT :cap) AS found)"
# Counted up to :cap unless the statistics list its stems (then their share is used).
_WORDS = text(
    f"SELECT w, stems, q::text, CASE WHEN stems <@ CAST(:listed AS text[]) THEN NULL ELSE {_MATCHES} END "
    f"FROM ({_STEMMED}) AS s"
)
_AGENT_MATCHES = _MATCHES.replace("WHERE", "WHERE agent_id = :agent_id AND", 1)
_AGENT_WORDS = text(f"SELECT w, {_AGENT_MATCHES} FROM ({_STEMMED}) AS s")  # `crowded_words`
# Under MIN_ROWS memories: every figure counted (each scan stops at :cap = MIN_ROWS rows, so a large table
# not yet analyzed, whose pg_class row still says 0, costs no more).
_AFRESH = text(
    f"""SELECT w, q::text, {_MATCHES},
    (SELECT count(*) FROM ({_ACTIVE} LIMIT :cap) AS active),
    (SELECT avg(length(fts_vector)) FROM ({_ACTIVE} LIMIT :cap) AS active)
    FROM ({_STEMMED}) AS s"""
)


def _postgresql_words(key: str, words: Sequence[str], table: _Table, now: float) -> dict[str, _Word]:
    """The figures of `words`, cached; the missing ones read in one statement, their memories counted
    unless the statistics list their stems (the rarest they list is held by about 0.1% of 100,000
    memories: a count is a short walk)."""
    known, missing = _cached_words(key, words, now)
    if missing:
        found = {
            word: _Word(tuple(stems), query, matches)
            for word, stems, query, matches in db.session.execute(
                _WORDS, {"words": list(missing), "listed": table.listed, "cap": table.cap}
            )
        }
        _remember(key, found, now)
        known.update(found)
    return known


def _slots(weights: dict[str, float], queries: Mapping[str, str], avgdl: float) -> tuple[dict[str, Any], int]:
    """The bound values of ranking.bm25_words: the WORD_SLOTS weightiest words; and the slots of the
    statement that scores them (ranking.slot_count). The arrays go as literals (`array_literal`), so
    PostgreSQL reads each once, as its own type, instead of casting a text[] wherever the statement
    reads an element."""
    chosen = sorted(weights, key=lambda w: -weights[w])[:WORD_SLOTS]
    params = {
        "s_terms": array_literal(queries[w] for w in chosen),
        "s_idf": "{" + ",".join(repr(weights[w]) for w in chosen) + "}",
        "s_avgdl": avgdl or 1.0,
    }
    return params, slot_count(len(chosen))


def bm25_params(words: Sequence[str], searched: Sequence[str]) -> Figures:
    """PostgreSQL: what models/retrieval/ranking.py's BM25 expression binds for the question's `words`,
    of which `searched` find the candidates (ranking.bm25_words): the weightiest words' tsqueries and
    idfs, and the average length of a memory; how many words there are; and the figures they come from
    (each word's memories, the table's), which also choose how the candidates are found
    (matching.plan).

    A word no memory holds scores nothing, and one held by half of them or more 1e-6 a match (FTS5's floor,
    which only breaks ties): neither takes a slot, except a searched word no memory held when its count
    was cached (its matches must be scored), and the searched words when all of them are that common
    (the candidates' scores must not all be 0)."""
    key, now = _key(), time.monotonic()
    table = _postgresql_table(key, now)
    counted: list[tuple[str, str | None, int]] = []  # (word, tsquery, memories holding it)
    if table.rows < MIN_ROWS:
        figures = db.session.execute(_AFRESH, {"words": list(words), "cap": MIN_ROWS}).all()
        counted = [(word, query, matches) for word, query, matches, _, _ in figures]
        rows, avgdl = (figures[0][3], float(figures[0][4] or 1.0)) if figures else (0, 1.0)
    else:
        rows, avgdl = table.rows, table.avgdl
        for word, figure in _postgresql_words(key, words, table, now).items():
            matches = figure.matches
            if matches is None and figure.stems:  # the statistics show it common: their share
                matches = round(min(table.freqs.get(s, 0.0) for s in figure.stems) * rows)
            counted.append((word, figure.query if figure.stems else None, matches or 0))
    weights: dict[str, float] = {}
    queries: dict[str, str] = {}
    for word, query, matches in counted:
        weight = idf(max(matches, 1), rows)
        if query and (weight > MIN_IDF and (matches or word in searched)):
            weights[word], queries[word] = weight, query
    if not set(weights) & set(searched):  # every searched word is held by half the memories or more
        for word, query, _ in counted:
            if query and word in searched:
                weights[word], queries[word] = MIN_IDF, query
    params, slots = _slots(weights, queries, avgdl)
    weight = question_weight((matches for _, _, matches in counted), rows)
    return Figures(params, slots, {word: matches for word, _, matches in counted}, weight)


def question_weight(matches: Iterable[int], rows: int) -> float:
    """The sum of the idfs of words held by `matches` memories each, of `rows`: a memory holding each word
    once, at the average length, scores this in BM25 (ranking.K1's factor cancels at tf 1), so a score
    divided by it is the share of the question a memory matches (ranking.scored's `match`)."""
    return max(sum(idf(n, rows) for n in matches), MIN_IDF)


# SQLite: where each word's whole count of memories is cached (`sqlite_weight`; `common_words` keeps there
# the counts that stopped short of its cap).
_WHOLE = "{key}#memories"


def sqlite_weight(words: Sequence[str]) -> float:
    """SQLite: `question_weight` of `words`, each word's memories counted in the FTS5 index (porter-stemmed
    like the search, over the whole index as bm25() counts them), cached like the other word figures: a
    word `common_words` has counted short of its cap costs no statement more."""
    if not words:
        return 1.0
    key, now = _WHOLE.format(key=_key()), time.monotonic()
    rows = _sqlite_table(_key(), now)
    known, missing = _cached_words(key, words, now)
    if missing:
        counts = _word_counts(missing)
        _remember(key, counts, now)
        known.update(counts)
    return question_weight((known[w] for w in words), rows)


def _sqlite_table(key: str, now: float) -> int:
    cached = _tables.get(key)
    if cached is not None and cached[0] > now:
        return cached[1].rows
    rows = db.session.execute(text("SELECT count(*) FROM agent_memories_fts_docsize")).scalar_one()
    _tables[key] = (now + CACHE_SECONDS, _Table(int(rows), {}, 1.0))
    return int(rows)


# SQLite: the memories an FTS5 query (bound as :{match}) matches, counted up to :cap only, so that a common
# word or a large agent costs a short walk of its posting list.
_CAPPED_COUNT = "SELECT count(*) FROM (SELECT 1 FROM agent_memories_fts WHERE agent_memories_fts MATCH :{match} LIMIT :cap)"
_WHOLE_COUNT = "SELECT count(*) FROM agent_memories_fts WHERE agent_memories_fts MATCH :{match}"


def _word_counts(words: Sequence[str], cap: int | None = None, agent_id: int | None = None) -> dict[str, int]:
    """SQLite: each word's memories in the FTS5 index (porter-stemmed like the search, over the whole index
    as bm25() counts them, or `agent_id`'s memories only), every word in one statement; up to `cap` only,
    when given. One match for both kinds of count, so a capped count that stops short of its cap is the
    whole count (`common_words`)."""
    count = _WHOLE_COUNT if cap is None else _CAPPED_COUNT
    counting = text(
        " UNION ALL ".join(f"SELECT {i}, ({count.format(match=f'w{i}')})" for i in range(len(words)))
    )
    values: dict[str, Any] = {
        f"w{i}": fts5_match([w], every=False, agent_id=agent_id) for i, w in enumerate(words)
    }
    if cap is not None:
        values["cap"] = cap
    return {words[i]: int(n) for i, n in db.session.execute(counting, values)}


def names_agent(agent_id: int) -> bool:
    """SQLite: whether a question's full-text match names its agent (ranking.fts5_match): unless the agent
    holds AGENT_SHARE of the index's memories or more. Named, the match skips every other agent's memories
    (migration 0027); but the agent's term is in each of its memories, so where it holds most of the index
    the match walks that term's long list for little to skip: one agent holding all of 10,000 memories
    paid 0.55 ms a question for it (docs/benchmarks.md, "Natural-language questions"). Either way the
    statement's WHERE clause keeps the agent's memories only, and the ranking is the same. The agent's
    memories are counted up to that share, and cached like the word figures."""
    key, now = _key(), time.monotonic()
    enough = max(1, math.ceil(AGENT_SHARE * _sqlite_table(key, now)))
    agent, cached = str(int(agent_id)), key + "#agents"
    known, missing = _cached_words(cached, [agent], now)
    if missing:
        counting = text(_CAPPED_COUNT.format(match="q"))
        held = db.session.execute(counting, {"q": f'agent_id : "{agent}"', "cap": enough}).scalar_one()
        _remember(cached, {agent: int(held)}, now)
        known[agent] = int(held)
    return known[agent] < enough


def forget() -> None:
    """Drop every cached figure of this process, so the next question reads them afresh: for tests that
    change MIN_ROWS, COMMON_SHARE, AGENT_SHARE or CROWDED, which the cached figures were judged by."""
    with _lock:
        _tables.clear()
        _words.clear()


def crowded_words(dialect: str, agent_id: int, words: Sequence[str]) -> set[str]:
    """The words among `words` held by CROWDED of the agent's own memories or more (None: none), counted up
    to CROWDED in the full-text index (SQLite's, soft-deleted memories too, as its other counts), cached per
    agent. A count, not a share: the names hop lets in a few hits, and cannot choose among more."""
    if CROWDED is None or not words:
        return set()
    key, now = f"{_key()}#crowded{int(agent_id)}", time.monotonic()
    known, missing = _cached_words(key, words, now)
    if missing:
        if dialect == "postgresql":
            values = {"agent_id": agent_id, "words": array_literal(missing), "cap": CROWDED}
            counts = {word: int(n) for word, n in db.session.execute(_AGENT_WORDS, values)}
        else:
            counts = _word_counts(missing, cap=CROWDED, agent_id=agent_id)
        _remember(key, counts, now)
        known.update(counts)
    return {w for w in words if known[w] >= CROWDED}


def common_words(dialect: str, words: Sequence[str]) -> set[str]:
    """The words among `words` held by at least COMMON_SHARE of all memories."""
    key, now = _key(), time.monotonic()
    if dialect == "postgresql":
        table = _postgresql_table(key, now)
        common = table.common
        if table.rows < MIN_ROWS or not common:
            return set()
        figures = _postgresql_words(key, words, table, now)
        return {w for w, f in figures.items() if f.stems and all(s in common for s in f.stems)}
    rows = _sqlite_table(key, now)
    if rows < MIN_ROWS:
        return set()
    # The memories a common word is held by at least, a whole number: the count stops there, so a
    # fractional threshold (5 % of 5,882 is 294.1) would be one no capped count could reach.
    enough = math.ceil(COMMON_SHARE * rows)
    known, missing = _cached_words(key, words, now)
    if missing:
        # Counted up to the threshold only: a common word costs a short walk of its posting list.
        counts = _word_counts(missing, cap=enough)
        _remember(key, counts, now)
        # A count that stopped short of the cap is the word's whole count, the figure `sqlite_weight`
        # counts (`_word_counts`): kept for it too, a statement less per new word.
        _remember(_WHOLE.format(key=key), {w: n for w, n in counts.items() if n < enough}, now)
        known.update(counts)
    return {w for w, n in known.items() if n >= enough}


def search_and_score(
    dialect: str, words: Sequence[str], content: Sequence[str]
) -> tuple[list[str], list[str]]:
    """(the words that find the candidates, the words that score them) of a question's `words`, whose
    `content` words would find them: a word held by COMMON_SHARE of the memories or more (tables of
    MIN_ROWS or more) does neither, unless every content word is that common (then they are kept).
    Leaving common words out of the score too keeps SQLite's bm25() from reading their whole posting
    lists for their idf on every question; the same rule holds on PostgreSQL, so both rank alike."""
    common = common_words(dialect, words) if len(words) > 1 else set()
    terms = [t for t in content if t not in common] or list(content)
    return terms, [w for w in words if w not in common or w in terms]


def searchable(dialect: str, terms: list[str]) -> list[str]:
    """`terms` without the common ones, unless that would leave none."""
    return search_and_score(dialect, terms, terms)[0]
