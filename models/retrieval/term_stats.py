"""Which query words are too common to search by: memory.query's defence against long questions.

A natural-language question ORs together half a dozen words after its stop words are gone, and one of
them is often a word most memories contain ("user" in "What did the user decide about the budget?").
Matching that word alone makes every memory a candidate: the full-text engine reads its whole posting
list and scores every row, which is what made such questions slow (docs/benchmarks.md). Its weight in
the score is small anyway — the rarer a word, the more it counts, in ts_rank and BM25 alike — so a word
found in at least COMMON_SHARE of all memories is left out of the search, as long as a rarer one
remains (a question made only of common words keeps them all).

How common a word is, per database (both cached per process for CACHE_SECONDS, so a question costs no
extra statement once its words have been seen):

- PostgreSQL: the full-text column's statistics (`pg_stats.most_common_elems` of
  agent_memories.fts_vector, kept by ANALYZE / autovacuum), matched against the word's stems;
- SQLite: the word's matches in the FTS5 index (porter-stemmed like the search), counted up to the
  threshold.

Both are whole-table figures, not per agent. Tables under MIN_ROWS memories are never pruned: small
memories are fast whatever the words.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import text

from models.db import db

COMMON_SHARE = 0.05
MIN_ROWS = 5000
CACHE_SECONDS = 600.0
MAX_WORDS = 50_000  # cached word figures per process; the oldest half is dropped past it

_lock = threading.Lock()
_tables: dict[str, tuple[float, int, frozenset[str]]] = {}  # database -> (expires, rows, common stems)
_words: dict[tuple[str, str], tuple[float, Any]] = {}  # (database, word) -> (expires, stems or count)


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


def _postgresql_table(key: str, now: float) -> tuple[int, frozenset[str]]:
    cached = _tables.get(key)
    if cached is not None and cached[0] > now:
        return cached[1], cached[2]
    rows = db.session.execute(
        text("SELECT reltuples::bigint FROM pg_class WHERE oid = 'agent_memories'::regclass")
    ).scalar_one()
    stats = db.session.execute(
        text(
            "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
            "WHERE schemaname = current_schema() AND tablename = 'agent_memories' AND attname = 'fts_vector'"
        )
    ).first()
    common: frozenset[str] = frozenset()
    if stats is not None and stats[0]:
        common = frozenset(e for e, f in zip(stats[0], stats[1], strict=False) if f >= COMMON_SHARE)
    _tables[key] = (now + CACHE_SECONDS, int(rows), common)
    return int(rows), common


def _sqlite_table(key: str, now: float) -> int:
    cached = _tables.get(key)
    if cached is not None and cached[0] > now:
        return cached[1]
    rows = db.session.execute(text("SELECT count(*) FROM agent_memories_fts_docsize")).scalar_one()
    _tables[key] = (now + CACHE_SECONDS, int(rows), frozenset())
    return int(rows)


def forget() -> None:
    """Drop every cached figure of this process, so the next question reads them afresh: for tests that
    change MIN_ROWS or COMMON_SHARE, which the cached figures were judged by."""
    with _lock:
        _tables.clear()
        _words.clear()


def common_words(dialect: str, words: Sequence[str]) -> set[str]:
    """The words among `words` held by at least COMMON_SHARE of all memories."""
    key, now = _key(), time.monotonic()
    if dialect == "postgresql":
        rows, common = _postgresql_table(key, now)
        if rows < MIN_ROWS or not common:
            return set()
        known, missing = _cached_words(key, words, now)
        if missing:
            found = {
                word: tuple(stems)
                for word, stems in db.session.execute(
                    text(
                        "SELECT w, array(SELECT lexeme FROM unnest(to_tsvector('english', w))) "
                        "FROM unnest(CAST(:words AS text[])) AS w"
                    ),
                    {"words": list(missing)},
                )
            }
            _remember(key, found, now)
            known.update(found)
        return {w for w, stems in known.items() if stems and all(s in common for s in stems)}
    rows = _sqlite_table(key, now)
    if rows < MIN_ROWS:
        return set()
    known, missing = _cached_words(key, words, now)
    if missing:
        # Counted up to the threshold only: a common word costs a short walk of its posting list.
        cap = int(COMMON_SHARE * rows)
        count = text(
            "SELECT count(*) FROM (SELECT 1 FROM agent_memories_fts WHERE agent_memories_fts MATCH :w LIMIT :cap)"
        )
        counts = {
            w: int(db.session.execute(count, {"w": f'"{w}"', "cap": cap}).scalar_one()) for w in missing
        }
        _remember(key, counts, now)
        known.update(counts)
    return {w for w, n in known.items() if n >= COMMON_SHARE * rows}


def searchable(dialect: str, terms: list[str]) -> list[str]:
    """`terms` without the common ones, unless that would leave none."""
    if len(terms) < 2:
        return terms
    common = common_words(dialect, terms)
    rare = [t for t in terms if t not in common]
    return rare or terms
