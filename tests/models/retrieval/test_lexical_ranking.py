"""memory.query's lexical ranking is BM25 over every word of the question (docs/explanation/retrieval.md;
"lexical never below BM25": docs/benchmarks.md, "Retrieval quality"): stop words weigh in the score, by their
idf, but find no memory; the rarer a word, the more it counts; shorter memories count a match for more. Both
databases, one rule (models/retrieval/ranking.py): SQLite's FTS5 bm25() and PostgreSQL's expression over its
stored tsvector give the same scores here, where no memory repeats a word, but for the length: FTS5 counts one
token more in each memory, its agent's id, which its index holds beside the words (ranking.fts5_match).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest

from models.changes.mutations import create_memory
from models.db import db
from models.retrieval import query
from models.retrieval.matching import STOP_WORDS

K1, B = 1.2, 0.75


def reference_bm25(texts: list[str], question: str, extra: int = 0) -> dict[int, float]:
    """FTS5's bm25() written out over plain words: the score of each text sharing a non-stop word with the
    question (the candidates), every word of the question scored; `extra` tokens added to each text's
    length (and so to the average) that match no word."""
    docs = [re.findall(r"[^\W_]+", t.lower()) for t in texts]
    words = list(dict.fromkeys(re.findall(r"[^\W_]+", question.lower())))
    rows, avgdl = len(docs), sum(map(len, docs)) / len(docs) + extra
    held = Counter(w for d in docs for w in set(d))
    scores = {}
    for i, doc in enumerate(docs):
        if not {w for w in words if w not in STOP_WORDS} & set(doc):
            continue
        tf, score = Counter(doc), 0.0
        for w in words:
            if tf[w]:
                idf = max(math.log((rows - held[w] + 0.5) / (held[w] + 0.5)), 1e-6)
                score += idf * tf[w] * (K1 + 1) / (tf[w] + K1 * (1 - B + B * (len(doc) + extra) / avgdl))
        scores[i] = score
    return scores


# No memory repeats a word, and every word is its own stem or stems alike in both engines ("keeps").
MEMORIES = [
    "Maya keeps a red kayak in the garage",
    "Maya keeps her old piano in the hall",
    "Tom keeps a red kayak by the lake",
    "Maya sold the blue kayak",
    "The garage is in town",
    "It is so",  # stop words only: never a candidate
    *(
        f"{name} {verb} {thing}"
        for name, verb, thing in [
            ("Priya", "grows", "tomatoes"), ("Ben", "drives", "taxis"), ("Ana", "paints", "portraits"),
            ("Leo", "walks", "dogs"), ("Zara", "sings", "jazz"), ("Omar", "fixes", "bikes"),
            ("Ivan", "bakes", "bread"), ("Kofi", "teaches", "math"), ("Hana", "writes", "poems"),
            ("Felix", "collects", "stamps"),
        ]
    ),
]  # fmt: skip
QUESTION = "Where is the kayak that Maya keeps in the garage?"


def test_lexical_relevance_orders_memories_as_bm25_does(app, make_agent):
    agent = make_agent(role="supervisor")
    ids = [
        create_memory(
            agent.id, text, actor="agent", memory_type="semantic", category="profile", importance=3
        ).id
        for text in MEMORIES
    ]
    sqlite = db.engine.dialect.name == "sqlite"
    expected = reference_bm25(MEMORIES, QUESTION, extra=1 if sqlite else 0)  # SQLite: the agent's token
    best = max(expected.values())
    order = sorted(expected, key=lambda i: -expected[i])
    assert [MEMORIES[i] for i in order[:2]] == [
        MEMORIES[0],
        "The garage is in town",
    ]  # "is", "in", "the" count

    hits = query.search(agent.id, text=QUESTION, categories=["profile"], top_k=len(MEMORIES))
    assert [h.id for h in hits] == [ids[i] for i in order]  # the stop-word-only memory is not among them
    for hit, i in zip(hits, order, strict=True):  # relevance: the score over the best's
        assert hit.relevance == pytest.approx(expected[i] / best, abs=1e-6)


LABELLED = Path(__file__).resolve().parents[3] / "bench" / "data" / "retrieval_set.jsonl"


def test_a_labelled_question_that_shares_only_stop_words_and_a_name_with_its_fact_finds_it_first(
    app, make_agent
):
    """From the labelled set (bench/retrieval_quality.py): "Was Leo ever in the military?" shares "leo",
    "in" and "the" with its fact and no other word. Ranked by its content words alone, every memory about
    Leo ties on his name; BM25 over every word puts the fact first, as rank-bm25 does on the whole set."""
    facts = [json.loads(line)["fact"] for line in LABELLED.read_text(encoding="utf-8").splitlines() if line]
    about_leo = [f for f in facts if f.startswith("Leo")]
    target = "Leo served in the navy for four years before joining the fire brigade."
    assert len(about_leo) == 20 and target in about_leo
    agent = make_agent(role="supervisor")
    ids = {}
    for text in [target, *(f for f in about_leo if f != target), *facts[:20]]:  # the fact is the oldest
        memory = create_memory(agent.id, text, actor="agent", memory_type="semantic", category="profile")
        ids[text] = memory.id
    hits = query.search(agent.id, text="Was Leo ever in the military?", categories=["profile"], top_k=3)
    assert hits[0].id == ids[target]


# The answer holds most of the question; the other holds three of its words and is rated more important.
ANSWER = "Hugo watched the snooker final with the neighbours and screamed at the telly"
IMPORTANT = "Hugo fixed the telly"
SCREAM_QUESTION = "Did Hugo scream at the telly watching the snooker final with the neighbours?"


def test_relevance_is_the_bm25_score_over_the_best_so_a_memory_holding_the_question_outranks_a_weightier_one(
    app, make_agent
):
    """Relevance is a candidate's BM25 score over the best candidate's. Read as s / (1 + s) over the best's,
    as it once was, every score above a few came within a sliver of the best: here the memory sharing
    "Hugo", "the" and "telly" with the question would have had 86 % of the answer's relevance (45 % read
    linearly), and its importance (5 against 1) would have put it first — as recency and importance ranked long chat turns
    (docs/explanation/retrieval.md, "Lexical relevance is BM25 over every word of the question")."""
    agent = make_agent(role="supervisor")
    texts = [ANSWER, IMPORTANT, *(f"{name} {verb} {thing}" for name, verb, thing in [
        ("Priya", "grows", "tomatoes"), ("Ben", "drives", "taxis"), ("Ana", "paints", "portraits"),
        ("Leo", "walks", "dogs"), ("Zara", "sings", "jazz"), ("Omar", "fixes", "bikes"),
    ])]  # fmt: skip
    ids = [
        create_memory(agent.id, text, actor="agent", memory_type="semantic", category="profile",
                      importance=5 if text == IMPORTANT else 1).id
        for text in texts
    ]  # fmt: skip
    expected = reference_bm25(texts, SCREAM_QUESTION)
    answer, other = expected[0], expected[1]
    # The premise: squashed, the two are within the importance's 0.15 of a score; read linearly, far apart.
    squashed_gap = 0.75 * (1 - (other / (1 + other)) / (answer / (1 + answer)))
    assert squashed_gap < 0.15 < 0.75 * (1 - other / answer)
    hits = query.search(agent.id, text=SCREAM_QUESTION, categories=["profile"], top_k=2)
    assert [h.id for h in hits] == [ids[0], ids[1]]
    assert hits[1].relevance < 0.6  # squashed it was 0.86 (the engines stem "watched" and "screamed" too)
