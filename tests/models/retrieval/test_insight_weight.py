"""Insights surface with a lower weight than facts (docs/spec/003-memory-system.md §3;
docs/explanation/retrieval.md, "Insights rank below facts"): memory.query multiplies an insight's score by
ranking.INSIGHT_WEIGHT, so of an insight and a semantic fact holding the same words, otherwise equal, the fact
ranks first and the insight is still returned."""

from __future__ import annotations

import pytest

from models.changes.mutations import create_memory
from models.retrieval import query, ranking

FACT = "Maya drinks green tea every morning before her run"
# The same words in another order: the same BM25 score, so only the kind of memory differs.
INSIGHT = "Every morning before her run Maya drinks green tea"


def _fact_then_insight(agent_id: int) -> tuple[int, int]:
    # The insight is written second: newer, and the higher id, both of which would rank it first unweighted.
    common = {"actor": "agent", "category": "relationship_dynamic", "importance": 3}
    fact = create_memory(agent_id, FACT, memory_type="semantic", **common)
    insight = create_memory(agent_id, INSIGHT, memory_type="insight", **common)
    return fact.id, insight.id


@pytest.mark.parametrize("question", ["What does Maya drink in the morning?", None])
def test_a_fact_outranks_an_insight_of_equal_relevance_and_the_insight_is_still_returned(
    app, make_agent, question
):
    agent = make_agent(role="supervisor")
    fact, insight = _fact_then_insight(agent.id)
    hits = query.search(agent.id, text=question, categories=["relationship_dynamic"], top_k=5)
    assert [h.id for h in hits] == [fact, insight]
    if question:
        assert hits[0].relevance == pytest.approx(hits[1].relevance)  # equal relevance: the weight decides
    assert hits[1].score < hits[0].score


def test_an_insights_score_is_its_unweighted_score_times_the_insight_weight(app, make_agent):
    agent = make_agent(role="supervisor")
    _fact_then_insight(agent.id)
    hits = query.search(agent.id, text="green tea", categories=["relationship_dynamic"], top_k=5)
    fact, insight = hits
    # Written a moment apart: recency differs in the sixth decimal at most.
    assert insight.score == pytest.approx(fact.score * ranking.INSIGHT_WEIGHT, rel=1e-4)
