"""The offline same-fact policy on a labelled corpus: precision 1.00, recall ≥ 0.95 (docs/explanation/background-work.md)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from jobs.embeddings import HashedBagOfWords
from jobs.prefilter import Candidate, passes
from jobs.samefact import same_fact
from models import utcnow

CORPUS = Path(__file__).parents[1] / "data" / "duplicates.jsonl"


def score(rows: list[dict]) -> tuple[float, float, list[dict], list[dict]]:
    embedder = HashedBagOfWords()
    now = utcnow()
    vectors = embedder.embed([t for r in rows for t in (r["a"], r["b"])])
    predictions = []
    for i, row in enumerate(rows):
        cosine = float(vectors[2 * i] @ vectors[2 * i + 1])
        a = Candidate(1, row["a"], now - timedelta(days=3))
        b = Candidate(2, row["b"], now - timedelta(days=1))
        predictions.append(passes(a, b, cosine, now) and same_fact(row["a"], row["b"]))
    true_pos = sum(p and r["same"] for p, r in zip(predictions, rows, strict=True))
    false_pos = [r for p, r in zip(predictions, rows, strict=True) if p and not r["same"]]
    missed = [r for p, r in zip(predictions, rows, strict=True) if not p and r["same"]]
    precision = true_pos / (true_pos + len(false_pos)) if true_pos + len(false_pos) else 1.0
    recall = true_pos / sum(r["same"] for r in rows)
    return precision, recall, false_pos, missed


def test_offline_policy_reaches_full_precision_and_high_recall_on_the_labelled_corpus():
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    assert sum(r["same"] for r in rows) >= 100 and sum(not r["same"] for r in rows) >= 80
    precision, recall, false_pos, missed = score(rows)
    assert false_pos == [] and precision == 1.0
    assert recall >= 0.95, missed


def test_near_miss_kinds_are_all_present():
    kinds = {json.loads(line)["kind"] for line in CORPUS.read_text(encoding="utf-8").splitlines()}
    assert {"duplicate", "negation", "different object", "different P", "different N", "different D"} <= kinds
