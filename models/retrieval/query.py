"""memory.query (docs/spec/003-memory-system.md §6): ranked retrieval over one agent's active memories, filtered in SQL.

Every filter — the agent, the allowed categories, soft-deletion, the request's filters — is a
WHERE clause of the one statement; nothing is filtered in Python afterwards. The statement
(models/retrieval/statements.py) is built from its stages, each in a module of its own:

- the candidates: the memories the query's words match, a bounded pool of them
  (models/retrieval/matching.py), joined with an embedder by the nearest memories by vector and their
  relevance fused (models/retrieval/fusion.py);
- the request's filters (models/retrieval/filters.py);
- the ranking: relevance, recency, importance, per-category caps and the relations boost
  (models/retrieval/ranking.py).

After it, a second hop for the questions one ranking cannot answer: the memories of the span of days a
question asks about, around the event's and its best hits' days (models/retrieval/timeline.py); else the
memories holding a code the question names, first (models/retrieval/identifiers.py), and those the names
its best hit carries lead to (models/retrieval/bridging.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from copy import copy
from datetime import datetime
from typing import Any

from models.db import db, utcnow
from models.retrieval import bridging, identifiers, term_stats, timeline
from models.retrieval.filters import filter_params, known_filters
from models.retrieval.fusion import DENSE_K, DENSE_K_FILTERED, FUSION, FUSIONS, dense_params
from models.retrieval.matching import (
    Plan,
    match_text,
    plan,
    question_words,
    scoring_text,
    search_terms,
)
from models.retrieval.statements import Hit, categories_param, span_statement, statement

RERANK_FACTOR = 4  # leaders re-ranked with the relations boost: top_k x this

# The question's vector: (embedding model, vector), or a call that waits for one still being computed
# (jobs.embeddings.question_vector_soon) and answers None when there is none after all; the ranking waits
# only when it needs it, after the question's words are looked up. The call must answer the same each time.
Dense = tuple[str, Any] | Callable[[], tuple[str, Any] | None] | None


def _vector(dense: Dense) -> tuple[str, Any] | None:
    return dense() if callable(dense) else dense


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
    dense: Dense = None,
    mode: str = "hybrid",
    fusion: str = FUSION,
    bridge: bool = True,
) -> list[Hit]:
    """The top_k best active memories of this agent in these categories (None: those without one), best first.

    One statement in stages: the candidate pool (every filter and the full-text match, bounded: see
    `matching.lexical_pool`), scoring (relevance relative to the pool's best), per-category caps, then a
    re-rank of the leaders with the relations boost, joined to the rows they name.

    `dense`: (embedding model, query vector) when a real embedder is configured, or a call that waits for
    it (`Dense`). The agent's DENSE_K memories nearest to the vector (models/retrieval/vectors.py; of the
    filtered user only, when `user_id` is a filter) then join the candidates — through the same WHERE clauses, so the vector path can return
    nothing the lexical one could not — and relevance fuses both rankings (`fusion.fused_pool`). `mode`:
    "hybrid" (the default), "lexical" (ignore `dense`) or "dense" (vector similarity alone; for
    measurement). `bridge`: the second hops, never with a threshold: for a question about a span of days
    around an event, the memories of that span around the event's and the leading hits' days
    (models/retrieval/timeline.py); else, hybrid, the memories holding a code the question names first
    (models/retrieval/identifiers.py), then a lexical hop through the names the leading hit carries and
    the question does not (models/retrieval/bridging.py). `threshold` compares each hit's absolute `match` (ranking.coverage), `relative_threshold`
    its relevance; `with_match`: fill in `match` even without a threshold (SQLite then counts the words'
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
    if callable(dense) and _vector(dense) is None:
        subject, dense = False, None  # no vector came after all: the lexical ranking's hops only
    if span is not None:
        events = _let_in(search(agent_id, text=span.event, **(lexical | {"top_k": 1}))) if span.event else []
        spanned = _spanned(agent_id, timeline.anchored(events, hits), span, categories, filters, top_k)
        return _own_figures(spanned, hits)
    first, hits = hits, hits[:top_k]
    codes = identifiers.codes(text) if mode == "hybrid" and dense is not None else []
    if codes:
        # The memories holding a code the question names, first (models/retrieval/identifiers.py).
        held = _let_in(identifiers.holding(search(agent_id, text=" ".join(codes), **lexical), codes))
        hits = bridging.merged(held, hits, top_k, keep=len(held), hop=top_k)
    bridged = bridging.bridge_names(text or "", hits[: bridging.BRIDGE_LEADERS])
    keep = bridging.SUBJECT_KEEP
    if bridged:
        # A second hop, lexical, through the names the leaders carry (models/retrieval/bridging.py).
        second = _hop(agent_id, bridged, lexical)
        keep = max(keep, bridging.hop_end(hits, second))  # the user's memories come in after the hop's hits
        hits = bridging.merged(hits, second, top_k)
    if subject:
        hits = bridging.same_subject(hits, first, top_k, keep)
    return _own_figures(hits, first)


def _hop(agent_id: int, names: list[str], lexical: dict[str, Any]) -> list[Hit]:
    """The second hop's ranking: lexical, the names alone (the first ranking has ranked the question's
    words)."""
    return _let_in(search(agent_id, text=" ".join(names), **lexical))


def _let_in(hits: list[Hit]) -> list[Hit]:
    """Hits a second statement found — by names, codes or an event's words, not by the question — carry no
    relevance or match: those figures would measure those words, not the question (a span's rows carry
    none either). A memory the first ranking holds too keeps its own (`_own_figures`)."""
    fresh = [copy(hit) for hit in hits]  # shallow copies: dataclasses.replace rebuilds each through __init__
    for hit in fresh:
        hit.relevance = hit.match = None
    return fresh


def _own_figures(hits: list[Hit], first: list[Hit]) -> list[Hit]:
    """`hits`, each memory the first ranking holds as the first ranking has it (its relevance and match
    measured against the question)."""
    own = {hit.id: hit for hit in first}
    return [own.get(hit.id, hit) for hit in hits]


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
    stmt = span_statement(dialect, tuple(sorted(filters)), len(names) != len(categories))
    seen = {"agent_id": agent_id, "categories": categories_param(dialect, names), **filter_params(filters)}
    spans = []
    for anchor in anchors:
        start, end = timeline.reach(anchor, span)
        params = seen | {"span_user": anchor.user_id, "span_from": start, "span_to": end}
        rows = [Hit(*row) for row in db.session.execute(stmt, params)]
        spans.append(timeline.in_window(anchor, span, rows))
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
    dense: Dense,
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
    if terms:
        params["q_any"] = match_text(dialect, terms, every=False)
    if found.common:
        params["q_common"] = match_text(dialect, found.common, every=False)
    if found.common and found.rare:
        params["q_rare"] = match_text(dialect, found.rare, every=False)
    if len(terms) > 1:
        params["q_all"] = match_text(dialect, terms, every=True)
    if others:
        params["q_scored"] = scoring_text(terms, others)
    if threshold is not None:
        params["threshold"] = threshold
    if relative_threshold is not None:
        params["relative_threshold"] = relative_threshold
    # The question's weight, which the absolute match divides by (ranking.coverage; the hybrid fusion's
    # lexical part is that match too). PostgreSQL has it from the word figures; FTS5 keeps its own, so SQLite
    # counts the words' memories when the match is wanted or fused — counted before the vector is waited
    # for, while it is still being computed.
    fusing = dense is not None and mode == "hybrid"
    weight = term_stats.sqlite_weight(scored) if "q_weight" not in params and scored and fusing else None
    # The question's vector, last: everything above ran while it was computed (`Dense`).
    vector = _vector(dense) if mode != "lexical" else None
    dense_mode = None
    if vector is not None:
        from models.retrieval import vectors

        # Filters other than user_id (which the matrix applies itself) may drop some nearest memories.
        k = DENSE_K_FILTERED if set(filters) - {"user_id"} else DENSE_K
        ids, scores = vectors.nearest(agent_id, vector[0], vector[1], k, user_id=filters.get("user_id"))
        if ids:
            dense_mode = mode
            params |= dense_params(dialect, ids, scores)
        elif mode == "dense":
            return []
    elif mode == "dense":
        return []
    weighed = (
        "q_weight" in params or not scored or threshold is not None or with_match or dense_mode == "hybrid"
    )
    if "q_weight" not in params:
        if weighed and scored and weight is None:
            weight = term_stats.sqlite_weight(scored)
        params["q_weight"] = weight if weighed and scored else 1.0
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
