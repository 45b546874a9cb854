"""Hybrid relevance for memory.query (docs/spec/003-memory-system.md §6): with a real embedder, the
memories nearest to the query's vector (models/retrieval/vectors.py) join the lexical candidates
(models/retrieval/matching.py), and each candidate's relevance fuses both rankings.

The nearest memories pass every WHERE clause of the lexical path, so the vector path can return nothing
the lexical one could not.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Float,
    FromClause,
    Integer,
    Select,
    Subquery,
    and_,
    bindparam,
    case,
    cast,
    func,
    literal_column,
    select,
    text,
    true,
    union_all,
)

from models.memories.memory import AgentMemory
from models.retrieval.matching import Route, lexical_pool
from models.retrieval.ranking import WORD_SLOTS, candidate_columns, coverage

# How many nearest memories join the candidates, more when filters other than user_id will drop some of
# them; how lexical and dense relevance are fused. DENSE_K chosen dated on the development sets (`python
# -m bench.conversational --sweep-nearest`: recall@10 averaged over the four 0.9097 / 0.9093 / 0.9080 /
# 0.9068 / 0.9066 at 25 / 50 / 75 / 100 / 150, recall@5 0.8510 against 0.8482 at 100; docs/benchmarks.md):
# with MISSING_COSINE's floor, a lexical candidate beyond the nearest counts the last one's cosine, which
# fewer nearest raise. DENSE_K_FILTERED was not swept.
DENSE_K = 25
DENSE_K_FILTERED = 400
RRF_K = 60  # reciprocal rank fusion: 1 / (RRF_K + rank) per ranking (the constant of Cormack et al.)
# The calibrated mix: this x the absolute lexical match + (1 - this) x cosine relative to the best. Chosen
# on the two development sets of conversations (`python -m bench.conversational --set life_log,team_chat
# --sweep`, the second hops on, as memory.query answers; docs/benchmarks.md, "Conversational sets").
# Read when a statement is built: the benches sweep it, clearing query.statement's cache.
MIX_LEXICAL = 0.6
# A lexical candidate outside the DENSE_K nearest has no cosine in the statement: the mix counts it as 0
# ("zero"), half the nearest's last ("half"), or the nearest's last, the most it can be ("floor"; bound as
# d_floor by `dense_params`). "floor", chosen dated on the development sets (`python -m
# bench.conversational --sweep-missing`: recall@10 0.8983 / 0.8985 / 0.9068; docs/benchmarks.md): with 0,
# an agent's memory that holds the question's words but lies past its nearest lost the whole cosine
# share to memories nearer in meaning that hold none of them. Read when a question is asked: the benches
# sweep it.
MISSING_COSINE = "floor"
MISSING_COSINES = ("zero", "half", "floor")
FUSIONS = ("rrf", "mix")
FUSION = "mix"  # chosen on the labelled set (docs/benchmarks.md, "Retrieval quality")

_T = AgentMemory.__table__


def dense_params(dialect: str, ids: list[int], scores: list[float], asked: int) -> dict[str, Any]:
    """The nearest memories bound for `_dense_candidates`: d_ids and d_scores, in rank order, each one text
    parameter — an array literal on PostgreSQL, a JSON array on SQLite. As text, not lists: psycopg
    adapts a list of 100 numbers element by element, about 0.35 ms a query more here. And d_floor, the
    cosine the mix counts for a lexical candidate not among them (MISSING_COSINE): of `asked` nearest,
    fewer came when the agent has no more vectors — a memory not among them has none, so 0."""
    last = scores[-1] if scores and len(ids) >= asked else 0.0
    floor = {"zero": 0.0, "half": last / 2, "floor": last}[MISSING_COSINE]
    if dialect == "postgresql":
        return {
            "d_ids": "{" + ",".join(map(str, ids)) + "}",
            "d_scores": "{" + ",".join(map(repr, scores)) + "}",
            "d_floor": max(floor, 0.0),
        }
    return {"d_ids": json.dumps(ids), "d_scores": json.dumps(scores), "d_floor": max(floor, 0.0)}


def _dense_candidates(dialect: str) -> Subquery:
    """The nearest memories by vector, bound as two parameters in rank order (`dense_params`): d_ids and
    d_scores (cosine). As a table (id, score, rank), so the statement stays one shape whatever their
    number."""
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


def _looked_up_by_id(dialect: str, where: list[ColumnElement[bool]]) -> list[ColumnElement[bool]]:
    """The WHERE clauses for the nearest memories, which are found by their ids. SQLite, on a database
    never ANALYZEd (an embedded one often is), preferred the agent-led indexes to the ids: it walked all
    of the agent's (or the user's) memories and checked each against the ids, 1.5 ms of a hybrid question
    at 2,500 memories. Written `agent_id + 0`, the agent's clause is one no index can serve, and every
    index of agent_memories that fits leads with it: the ids are looked up by rowid, and the clause still
    holds."""
    if dialect != "sqlite":
        return where
    agent = _T.c.agent_id == bindparam("agent_id")
    unindexed = (_T.c.agent_id + 0) == bindparam("agent_id")
    return [unindexed if clause.compare(agent) else clause for clause in where]


def fused_pool(
    dialect: str,
    where: list[ColumnElement[bool]],
    words: int,
    fusion: str,
    others: bool = False,
    slots: int = WORD_SLOTS,
    route: Route = "exact",
    rare: bool = True,
) -> Select[Any]:
    """Hybrid candidates (id, category, recency, imp, weight, relevance, lexical, cosine): the lexical pool (`lexical_pool`, found
    by `route`, when there are words) and the dense candidates that pass every WHERE clause, each once, with relevance fused:

    - "mix": MIX_LEXICAL x the lexical match + (1 - MIX_LEXICAL) x cosine / best cosine, the lexical match
      absolute (`ranking.coverage`: the share of the question's word weight the memory's BM25 score reaches,
      bound `q_weight`), so a pool whose best lexical hit holds one common word of the question does not
      give that word the whole lexical share;
    - "rrf": reciprocal rank fusion, the sum of 1 / (RRF_K + rank) over the rankings a memory is in;

    then divided by the best candidate's, so the best has relevance 1.0 as on the lexical path. Without
    words (dense alone), relevance is cosine / best cosine.
    """
    dense = _dense_candidates(dialect)
    zero = cast(literal_column("0.0"), Float)
    rrf = fusion == "rrf"
    # Each ranking's candidates carry both scores (the other's as 0.0), and for "rrf" the dense rank, so that
    # no layer above looks the dense candidates up again.
    parts: list[Select[Any]] = [
        select(
            *candidate_columns(dialect, lexical=False),
            zero.label("lexical"),
            dense.c.score.label("cosine"),
            *([dense.c.rank.label("dense_rank")] if rrf else []),
        )
        .select_from(dense.join(_T, _T.c.id == dense.c.id))
        .where(*_looked_up_by_id(dialect, where))
    ]
    if words:
        lexical = lexical_pool(dialect, where, words, others, slots, route, rare).subquery()
        none = cast(literal_column("NULL"), Integer)
        parts.append(select(lexical, zero.label("cosine"), *([none.label("dense_rank")] if rrf else [])))
    both = union_all(*parts).subquery("both_rankings")
    # A memory both rankings found appears twice: once, with both its scores.
    merged = (
        select(
            both.c.id,
            func.max(both.c.category).label("category"),
            func.max(both.c.recency).label("recency"),
            func.max(both.c.imp).label("imp"),
            func.max(both.c.weight).label("weight"),
            func.max(both.c.lexical).label("lexical"),
            func.max(both.c.cosine).label("cosine"),
            *([func.max(both.c.dense_rank).label("dense_rank")] if rrf else []),
        )
        .group_by(both.c.id)
        .cte("merged")
    )
    # The best of each ranking, then of the fused score, are aggregates over the candidates (CTEs read
    # twice, which both databases compute once), not window functions: a window keeps every row it
    # passes on, and SQLite computes a copy of one for each place it is written (SQLite: a third fewer
    # VM steps for a hybrid question at 10k memories).
    raw: ColumnElement[Any]
    source: FromClause = merged
    if rrf:
        lexical_rank = func.row_number().over(order_by=(merged.c.lexical.desc(), merged.c.id.desc()))
        raw = case((merged.c.lexical > 0, 1.0 / (RRF_K + lexical_rank)), else_=0.0) + case(
            (merged.c.dense_rank.is_not(None), 1.0 / (RRF_K + merged.c.dense_rank)), else_=0.0
        )
    else:
        bests = select(func.max(merged.c.cosine).label("cosine")).subquery("bests")
        # The lexical match absolute, the cosine relative to the best: a paraphrase, whose words match a
        # little of many memories, is ranked by its meaning; a question in the memory's words by both.
        lexical_part = coverage(merged.c.lexical)
        # A cosine below zero counts as none; a lexical candidate's outside the nearest, as d_floor.
        cosine = case((merged.c.cosine > 0, merged.c.cosine), else_=bindparam("d_floor", type_=Float))
        semantic = case((and_(bests.c.cosine > 0, cosine > 0), cosine / bests.c.cosine), else_=0.0)
        share = MIX_LEXICAL if words else 0.0
        raw = share * lexical_part + (1.0 - share) * semantic
        source = merged.join(bests, true())
    fused = (
        select(
            merged.c.id,
            merged.c.category,
            merged.c.recency,
            merged.c.imp,
            merged.c.weight,
            merged.c.lexical,
            merged.c.cosine,
            raw.label("raw"),
        )
        .select_from(source)
        .cte("fused")
    )
    best = select(func.max(fused.c.raw).label("raw")).subquery("best")
    return select(
        fused.c.id,
        fused.c.category,
        fused.c.recency,
        fused.c.imp,
        fused.c.weight,
        case((best.c.raw > 0, fused.c.raw / best.c.raw), else_=0.0).label("relevance"),
        fused.c.lexical,  # the absolute match reads both scores as they are (ranking.scored)
        fused.c.cosine,
    ).select_from(fused.join(best, true()))
