"""bench/reranker.py: where memory.query's misses are, the reranking ceiling, and a reranker learned on the
other sets (the figures under docs/benchmarks.md, "Conversational sets", "A reranker over the
candidates")."""

from __future__ import annotations

import math

import pytest

from bench import reranker


def _row(
    answer: list[str], dense: list[str], lexical: list[str], evidence: list[str], **extra: object
) -> dict:
    return {"kind": "multi-hop", "answer": answer, "hybrid": [], "dense": dense, "lexical": lexical,
            "evidence": evidence, "cosine": {}, "leader_users": [], "age": {}, "to_leader": {}, "names": {},
            "scores": {name: {} for name in reranker.RANKINGS}} | extra  # fmt: skip


def test_a_miss_is_deeper_when_some_ranking_holds_it_and_nowhere_when_none_does() -> None:
    row = _row(["a", "b"], dense=["c"], lexical=[], evidence=["a", "c", "z"])
    assert reranker.where_missed(row) == {"deeper": 1, "nowhere": 1}  # "a" is found: not a miss


def test_the_ceiling_puts_every_candidate_evidence_first_and_cannot_reach_what_no_ranking_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reranker, "TOP", 2)
    deep = [f"m{i}" for i in range(40)] + ["e1"]
    assert reranker.ceiling(_row(["x", "y"], dense=deep, lexical=["e2"], evidence=["e1", "e2"])) == 1.0
    assert reranker.ceiling(_row(["x", "y"], dense=deep, lexical=[], evidence=["e1", "e3"])) == 0.5
    assert reranker.recall(["x", "y"], ["e1", "e3"]) == 0.0  # memory.query's own order found neither


def test_each_candidate_is_described_by_its_places_its_cosines_its_age_and_what_ties_it_to_the_leader() -> (
    None
):
    row = _row(["a"], dense=["b", "a"], lexical=[], evidence=["b"], cosine={"a": 0.5}, leader_users=["b"],
               age={"b": 2.0}, to_leader={"b": 0.25}, names={"b": 2}, scores={"answer": {"a": 0.9}, "hybrid": {}, "dense": {"b": 0.8, "a": 0.7},
                                       "lexical": {}})  # fmt: skip
    assert reranker.candidates(row) == ["a", "b"]
    a, b = reranker.features(row)
    absent = [0.0, 0.0, math.log(reranker.DEPTH + 10), 0.0]
    assert a == [1.0, 1.0, 0.0, 0.9, *absent, 1.0, 0.5, math.log(2), 0.7, *absent, 0.5, 0.0, 0.0, 0.0, 0.0]
    assert b == [*absent, *absent, 1.0, 1.0, 0.0, 0.8, *absent, 0.0, 1.0, math.log1p(2.0), 0.25, 2.0]


def _sets(rule: dict[str, str]) -> dict[str, list[dict]]:
    """Sets whose evidence memory leads the ranking `rule` names, a decoy leading the other; memory.query's
    answer holds neither."""
    sets = {}
    for name, first in rule.items():
        rows = []
        for i in range(20):
            e, z = f"{name}-e{i}", f"{name}-z{i}"
            rows.append(_row([f"{name}-x{i}"], dense=[e, z] if first == "dense" else [z, e],
                             lexical=[z, e] if first == "dense" else [e, z], evidence=[e]))  # fmt: skip
        sets[name] = rows
    return sets


def test_a_reranker_is_asked_on_the_set_it_was_not_trained_on(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sklearn")
    from sklearn.linear_model import LogisticRegression

    monkeypatch.setattr(reranker, "TOP", 1)
    # Three sets put the evidence first in the dense ranking, one in the lexical ranking: trained on the
    # others, each of the three learns "dense first" and the fourth is ordered by the wrong rule.
    sets = _sets({"a": "dense", "b": "dense", "c": "dense", "d": "lexical"})
    trained: list[int] = []

    class Recorded(LogisticRegression):
        def fit(self, x, y):  # type: ignore[no-untyped-def]
            trained.append(len(x))
            return super().fit(x, y)

    found = reranker.left_out(sets, Recorded)
    assert found == {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0}
    assert trained == [3 * 20 * 3] * 4  # three sets of 20 questions, three candidates each: never its own


def test_the_report_gives_each_set_and_the_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sklearn")
    monkeypatch.setattr(reranker, "TOP", 1)
    result = reranker.report(_sets({"a": "dense", "b": "dense", "c": "dense"}))
    assert result["a"]["memory.query"] == 0.0 and result["a"]["ceiling"] == 1.0
    assert result["a"]["missed"] == {"deeper": 20}
    assert result["mean"]["logistic regression"] == 1.0
    assert result["mean"]["gradient-boosted trees"] == 1.0
    assert "| a | 20 | 0.0000 | 1.0000 | 1.0000 | 1.0000 | 20 | 0 |" in reranker.table(result)
