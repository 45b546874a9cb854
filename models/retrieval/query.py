"""memory.query (docs/spec/003-memory-system.md §6): ranked retrieval over one agent's active memories, filtered in SQL.

Every filter — the agent, the allowed categories, soft-deletion, the request's filters — is a
WHERE clause of the one statement; nothing is filtered in Python afterwards. The statement is built
from its stages, each in a module of its own:

- the candidates: the memories the query's words match, a bounded pool of them
  (models/retrieval/matching.py), joined with an embedder by the nearest memories by vector and their
  relevance fused (models/retrieval/fusion.py);
- the request's filters (models/retrieval/filters.py);
- the ranking: relevance, recency, importance, per-category caps and the relations boost
  (models/retrieval/ranking.py).

After it, a second hop for the questions one ranking cannot answer: the memories of the span of days a
question asks about, around the event's and its best hits' days (models/retrieval/timeline.py); else the
memories holding a code the question names, first (models/retrieval/identifiers.py), and those the names
its best hit carries lead to (models/retrieval/bridging.py); last, with the local model, the leading
hit's user's memory nearest to what the question asks once that hit is found (its rest:
models/retrieval/rest.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    CompoundSelect,
    Select,
    bindparam,
    literal,
    null,
    or_,
    select,
    true,
    union_all,
)

from models.db import db, utcnow
from models.memories.memory import AgentMemory
from models.retrieval import bridging, identifiers, ranking, rest, term_stats, timeline
from models.retrieval.filters import FILTERS, categories_param, filter_params, in_categories, known_filters
from models.retrieval.fusion import DENSE_K, DENSE_K_FILTERED, FUSION, FUSIONS, dense_params, fused_pool
from models.retrieval.matching import (
    Plan,
    Route,
    lexical_pool,
    match_text,
    plan,
    question_words,
    recent_pool,
    scoring_text,
    search_terms,
)

RERANK_FACTOR = 4  # leaders re-ranked with the relations boost: top_k x this
SPAN_ROWS = 200  # a span's memories read at most (models/retrieval/timeline.py)

_T = AgentMemory.__table__


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
# Hit's columns ranked by no score: a span's place in the results is its order (`_spanned`), a rest's
# memory's its place after REST_KEEP (models/retrieval/rest.py); `linked` unknown, so true (the
# related-bullets lookup then asks).
_UNRANKED = (*(_T.c[name] for name in RESULT_COLUMNS), null().label("relevance"), null().label("match"), literal(0.0).label("score"), true().label("linked"))  # fmt: skip


def _where(dialect: str, filters: tuple[str, ...], uncategorized: bool) -> list[ColumnElement[bool]]:
    """The memories a request may see: the agent's, active, in the allowed categories, past its filters."""
    in_named = in_categories(dialect)
    return [
        _T.c.agent_id == bindparam("agent_id"),
        _T.c.deleted_at.is_(None),
        or_(in_named, _T.c.category.is_(None)) if uncategorized else in_named,
        *(FILTERS[name][0] for name in filters),
    ]


@lru_cache(maxsize=64)
def rows_statement(dialect: str, filters: tuple[str, ...], uncategorized: bool) -> Select[Any]:
    """The memories of `ids` a request may see (`_where`), unranked: a rest's, read by id."""
    return select(*_UNRANKED).where(
        *_where(dialect, filters, uncategorized), _T.c.id.in_(bindparam("ids", expanding=True))
    )


@lru_cache(maxsize=64)
def span_statement(
    dialect: str, filters: tuple[str, ...], uncategorized: bool, anchors: int
) -> Select[Any] | CompoundSelect[Any]:
    """Where a span's memories are looked for (models/retrieval/timeline.py), for `anchors` anchors in one
    statement (a statement per anchor made a span's question the one that ran the most): of each anchor i,
    the memories a request may see of one user (`span_user_i`, null for none) written between `span_from_i`
    and `span_to_i`, at most SPAN_ROWS, the row's last column i."""
    parts = [
        select(*_UNRANKED, literal(i).label("part"))
        .where(
            *_where(dialect, filters, uncategorized),
            _T.c.user_id.is_not_distinct_from(bindparam(f"span_user_{i}")),
            _T.c.created_at >= bindparam(f"span_from_{i}"),
            _T.c.created_at < bindparam(f"span_to_{i}"),
        )
        .order_by(_T.c.created_at, _T.c.id)
        .limit(SPAN_ROWS)
        for i in range(anchors)
    ]
    # Each part a subquery of its own, so its ORDER BY and LIMIT stay its own (SQLite allows neither on a
    # compound's part).
    return parts[0] if anchors == 1 else union_all(*(select(part.subquery()) for part in parts))


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


def search(
    agent_id: int,
    *,
    text: str | None,
    categories: Sequence[str | None],
    filters: Mapping[str, Any] | None = None,
    top_k: int = 5,
    threshold: float | None = None,
    relative_threshold: float | None = None,
    with_match: bool = False,
    rag_caps: Mapping[str, int] | None = None,
    now: datetime | None = None,
    dense: tuple[str, Any] | None = None,
    mode: str = "hybrid",
    fusion: str = FUSION,
    bridge: bool = True,
    rest_vector: rest.Embed | None = None,
) -> list[Hit]:
    """The top_k best active memories of this agent in these categories (None: those without one), best first.

    One statement in stages: the candidate pool (every filter and the full-text match, bounded: see
    `matching.lexical_pool`), scoring (relevance relative to the pool's best), per-category caps, then a
    re-rank of the leaders with the relations boost, joined to the rows they name.

    `dense`: (embedding model, query vector) when a real embedder is configured. The agent's DENSE_K
    memories nearest to the vector (models/retrieval/vectors.py; of the filtered user only, when `user_id` is a
    filter) then join the candidates — through the same WHERE clauses, so the vector path can return
    nothing the lexical one could not — and relevance fuses both rankings (`fusion.fused_pool`). `mode`:
    "hybrid" (the default), "lexical" (ignore `dense`) or "dense" (vector similarity alone; for
    measurement). `bridge`: the second hops, never with a threshold: for a question about a span of days
    around an event, the memories of that span around the event's and the leading hits' days
    (models/retrieval/timeline.py); else, hybrid, the memories holding a code the question names first
    (models/retrieval/identifiers.py), then a lexical hop through the names the leading hit carries and
    the question does not, save those too common to tell memories apart (bridging.telling); last, where
    `rest_vector` embeds what the question asks once its leading hit is found, that hit's user's memory
    nearest to it (models/retrieval/rest.py). `threshold` compares each hit's absolute `match`
    (ranking.coverage), `relative_threshold` its relevance; `with_match`: fill in `match` even without a threshold (SQLite then counts the words'
    memories, a statement more; PostgreSQL always has it). Without `dense`, or when the agent has no vectors of that model, the ranking is the
    lexical one, statement for statement.
    """
    if mode not in ("hybrid", "lexical", "dense") or fusion not in FUSIONS:
        raise ValueError("mode must be hybrid, lexical or dense; fusion rrf or mix")
    if not categories:
        return []
    filters = known_filters(filters)
    now = now or utcnow()  # one clock for every ranking of the question
    hops = bool(bridge and threshold is None and relative_threshold is None and mode != "dense")
    span = timeline.window(text) if hops else None
    lexical: dict[str, Any] = dict(categories=categories, filters=filters, top_k=top_k, with_match=with_match,
                                   rag_caps=rag_caps, now=now, mode="lexical", bridge=False)  # fmt: skip
    # A span's question ranks deeper: the memories of the span it asks about are looked for among them too;
    # so does a hybrid one over several users: its leader's user's memories (bridging.same_subject). The
    # latter re-ranks only the leaders top_k would: its first top_k stay what they would have been.
    subject = hops and mode == "hybrid" and dense is not None and "user_id" not in filters
    ranked = max(top_k, timeline.RANKED if span is not None else bridging.SUBJECT_DEPTH if subject else 0)
    hits = _first_ranking(agent_id, text, categories, filters, ranked, threshold, relative_threshold, with_match,
                          rag_caps, now, dense, mode, fusion, ranked if span is not None else top_k)  # fmt: skip
    if not (hops and hits):
        return hits[:top_k]
    if span is not None:
        events = (
            bridging.let_in(search(agent_id, text=span.event, **(lexical | {"top_k": 1})))
            if span.event
            else []
        )
        spanned = _spanned(agent_id, timeline.anchored(events, hits), span, categories, filters, top_k)
        return _with_rest(
            agent_id, bridging.own_figures(spanned, hits), hits, text, rest_vector, lexical, dense, top_k
        )
    first, hits = hits, hits[:top_k]
    codes = identifiers.codes(text) if mode == "hybrid" and dense is not None else []
    if codes:
        # The memories holding a code the question names, first (models/retrieval/identifiers.py).
        held = bridging.let_in(identifiers.holding(search(agent_id, text=" ".join(codes), **lexical), codes))
        hits = bridging.merged(held, hits, top_k, keep=len(held), hop=top_k)
    named = bridging.leading(hits, text or "")  # the hops follow the leader holding the question's names
    bridged = bridging.telling(agent_id, bridging.bridge_names(text or "", named[: bridging.BRIDGE_LEADERS]))
    keep = bridging.SUBJECT_KEEP
    if bridged:
        # A second hop, lexical, through the names the leaders carry (models/retrieval/bridging.py).
        second = _hop(agent_id, bridged, lexical)
        keep = max(keep, bridging.hop_end(hits, second))  # the user's memories come in after the hop's hits
        hits = bridging.merged(hits, second, top_k)
    if subject:
        hits = bridging.same_subject(hits, first, top_k, keep, named[0])
    hits = bridging.own_figures(hits, first)
    return _with_rest(agent_id, hits, first, text, rest_vector, lexical, dense, top_k, named[0])


def _with_rest(agent_id: int, hits: list[Hit], first: list[Hit], text: str | None, rest_vector: rest.Embed | None,
               lexical: dict[str, Any], dense: tuple[str, Any] | None, top_k: int, leader: Hit | None = None) -> list[Hit]:  # fmt: skip
    """`hits` with the question's rest let in (models/retrieval/rest.py); a memory outside the question's
    own ranking `first` read by id through the request's WHERE clauses (`rows_statement`), without the
    question's figures."""
    if rest_vector is None or dense is None:
        return hits

    def read(ids: list[int]) -> list[Hit]:
        dialect, filters = db.session.get_bind().dialect.name, lexical["filters"]
        names = [c for c in lexical["categories"] if c is not None]
        stmt = rows_statement(dialect, tuple(sorted(filters)), len(names) != len(lexical["categories"]))
        params = {"agent_id": agent_id, "categories": categories_param(dialect, names), "ids": ids}
        return [Hit(*row) for row in db.session.execute(stmt, params | filter_params(filters))]

    return rest.with_nearest(agent_id, hits, first, text or "", rest_vector, dense[0], top_k, read, leader)


def _hop(agent_id: int, names: list[str], lexical: dict[str, Any]) -> list[Hit]:
    """The second hop's ranking: lexical, the names alone (the first ranking has ranked the question's
    words)."""
    return bridging.let_in(search(agent_id, text=" ".join(names), **lexical))


def _spanned(
    agent_id: int,
    anchored: tuple[list[Hit], list[Hit]],
    span: timeline.Window,
    categories: Sequence[str | None],
    filters: dict[str, Any],
    top_k: int,
) -> list[Hit]:
    """The anchors (timeline.anchored: the events the span is measured from), then the memories whose day
    falls in the span around an anchor's — the anchor's user's, then the first ranking's own, whoever they
    are of (models/retrieval/timeline.py) — then the rest of the first ranking."""
    anchors, hits = anchored
    dialect = db.session.get_bind().dialect.name
    names = [c for c in categories if c is not None]
    stmt = span_statement(dialect, tuple(sorted(filters)), len(names) != len(categories), len(anchors))
    params = {"agent_id": agent_id, "categories": categories_param(dialect, names), **filter_params(filters)}
    for i, anchor in enumerate(anchors):
        start, end = timeline.reach(anchor, span)
        params |= {f"span_user_{i}": anchor.user_id, f"span_from_{i}": start, f"span_to_{i}": end}
    read: list[list[Hit]] = [[] for _ in anchors]
    for *row, part in db.session.execute(stmt, params):
        read[part].append(Hit(*row))
    spans = [timeline.in_window(anchor, span, rows) for anchor, rows in zip(anchors, read, strict=True)]
    # The anchors' users' own memories of the span first, then those of the question's own ranking.
    inside = timeline.interleaved([*spans, timeline.ranked_in_window(anchors, span, hits[len(anchors) :])])
    return bridging.merged(hits, inside, top_k, keep=len(anchors), hop=len(inside))


def _first_ranking(
    agent_id: int,
    text: str | None,
    categories: Sequence[str | None],
    filters: dict[str, Any],
    top_k: int,
    threshold: float | None,
    relative_threshold: float | None,
    with_match: bool,
    rag_caps: Mapping[str, int] | None,
    now: datetime | None,
    dense: tuple[str, Any] | None,
    mode: str,
    fusion: str,
    leaders: int | None = None,
) -> list[Hit]:
    """The one statement's ranking (`statement`), without the second hops: its first top_k of the first
    `leaders` x RERANK_FACTOR re-ranked with the relations boost (`leaders`: top_k unless given)."""
    words = question_words(text)  # every word weighs in the score (models/retrieval/ranking.py)
    if text and text.strip() and not words:
        return []  # a query with no searchable words matches nothing
    dialect = db.session.get_bind().dialect.name
    # The words that find the candidates (not the stop words) and those that score them (every word);
    # neither the question's most common words (term_stats).
    terms, scored = term_stats.search_and_score(dialect, words, search_terms(words))
    params: dict[str, Any] = {}
    slots = 0
    found = Plan("exact", terms, [])
    if scored and dialect == "postgresql":  # FTS5 keeps its own figures
        figures = term_stats.bm25_params(scored, terms)
        params, slots = figures.params | {"q_weight": figures.weight}, figures.slots
        if terms:
            share = term_stats.user_share(filters["user_id"]) if "user_id" in filters else 1.0
            found = plan(terms, figures.matches, share)
    # SQLite: the other words are scored with the search terms in one FTS5 query (matching.scoring_text).
    others = [w for w in scored if w not in terms] if terms and dialect != "postgresql" else []
    capped = tuple(sorted(rag_caps or {}))
    names = [c for c in categories if c is not None]
    uncategorized = len(names) != len(categories)
    params |= {
        "agent_id": agent_id,
        "categories": categories_param(dialect, names),
        "now": now or utcnow(),
        "top_k": top_k,
        "leaders": (leaders or top_k) * RERANK_FACTOR,
        **filter_params(filters),
    }
    for i, name in enumerate(capped):
        params[f"cap_{i}"] = (rag_caps or {})[name]
    # SQLite: the agent named in its full-text matches, unless it holds most of the index (term_stats).
    in_match = agent_id if dialect != "postgresql" and terms and term_stats.names_agent(agent_id) else None
    if terms:
        params["q_any"] = match_text(dialect, terms, every=False, agent_id=in_match)
    if found.common:
        params["q_common"] = match_text(dialect, found.common, every=False)
    if found.common and found.rare:
        params["q_rare"] = match_text(dialect, found.rare, every=False)
    if len(terms) > 1:
        params["q_all"] = match_text(dialect, terms, every=True, agent_id=in_match)
    if others:
        params["q_scored"] = scoring_text(terms, others, in_match)
    if threshold is not None:
        params["threshold"] = threshold
    if relative_threshold is not None:
        params["relative_threshold"] = relative_threshold
    dense_mode = None
    if dense is not None and mode != "lexical":
        from models.retrieval import vectors

        # Filters other than user_id (which the matrix applies itself) may drop some nearest memories.
        k = DENSE_K_FILTERED if set(filters) - {"user_id"} else DENSE_K
        ids, scores = vectors.nearest(agent_id, dense[0], dense[1], k, user_id=filters.get("user_id"))
        if ids:
            dense_mode = mode
            params |= dense_params(dialect, ids, scores, k)
        elif mode == "dense":
            return []
    elif mode == "dense":
        return []
    # The question's weight, which the absolute match divides by (ranking.coverage; the hybrid fusion's
    # lexical part is that match too). PostgreSQL has it from the word figures; FTS5 keeps its own, so SQLite
    # counts the words' memories when the match is wanted or fused.
    weighed = (
        "q_weight" in params or not scored or threshold is not None or with_match or dense_mode == "hybrid"
    )
    if "q_weight" not in params:
        params["q_weight"] = term_stats.sqlite_weight(scored) if weighed and scored else 1.0
    stmt = statement(
        dialect,
        min(len(terms), 2),
        tuple(sorted(filters)),
        capped,
        threshold is not None,
        uncategorized,
        dense_mode,
        fusion if dense_mode else FUSION,
        bool(others),
        slots,
        found.route,
        bool(found.rare),
        relative_threshold is not None,
    )
    hits = [Hit(*row) for row in db.session.execute(stmt, params)]
    if not weighed:
        for hit in hits:
            hit.match = None  # computed against no weight: not a figure to show
    return hits
