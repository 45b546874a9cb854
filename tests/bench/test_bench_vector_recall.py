"""bench/vector_recall.py's shortlist sweep: each size is what `vectors.AgentMatrix.nearest` finds with that
SHORTLIST, measured against exact search, and the product's own size is back in place afterwards
(docs/benchmarks.md, "Dense search past 10,000 rows")."""

from __future__ import annotations

import numpy as np

from bench.conversational import load
from bench.vector_recall import conversational, shortlists
from models.retrieval import vectors


def test_the_shortlist_sweep_measures_each_size_against_exact_search_and_puts_the_products_back(monkeypatch):
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((3_000, 384)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    queries = matrix[rng.integers(0, len(matrix), 12)] + 0.1 * rng.standard_normal((12, 384)).astype(
        np.float32
    )
    monkeypatch.setattr(vectors, "EXACT_ROWS", 1_000)  # past it, the sign-bit prefilter picks the shortlist
    chosen = vectors.SHORTLIST

    rows = shortlists(matrix, queries, [300, 1_500], k=25)

    assert chosen == vectors.SHORTLIST
    by_size = {row["shortlist"]: row for row in rows}
    # A shortlist of half the rows or more is no shortlist: every row is scored, exactly as the sweep's
    # reference; 300 of 3,000 random (unclustered) vectors' sign bits miss some of the 25 nearest.
    assert by_size[1_500]["recall@10"] == 1.0 and by_size[1_500]["recall@25"] == 1.0
    assert by_size[300]["recall@25"] < 1.0
    assert all(row["nearest_ms"]["p50"] > 0 for row in rows)


def test_the_conversational_text_is_the_sets_own_memories_seed_after_seed_and_their_questions():
    """`--sets`: the vectors' text is the sets' memories, distinct, the next seed's coming in once the first
    runs out, and questions drawn from theirs, distinct (docs/benchmarks.md, "Dense search past 10,000
    rows": the development sets' text chose the shortlist, the held-out sets' was reported after)."""
    generations = [load("life_log", seed) for seed in (0, 1)]
    held = [{m["content"] for agent in g["agents"] for m in agent["memories"]} for g in generations]
    asked = {q["text"] for g in generations for agent in g["agents"] for q in agent["questions"]}
    wanted = len(held[0]) + 100  # past the first seed's memories

    memories, questions = conversational(["life_log"], wanted, 50)

    assert len(memories) == len(set(memories)) == wanted and set(memories) <= held[0] | held[1]
    assert held[0] <= set(memories)  # the first seed's whole, then the next one's
    assert len(questions) == len(set(questions)) == 50 and set(questions) <= asked
