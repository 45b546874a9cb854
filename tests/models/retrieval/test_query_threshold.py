"""memory.query's `threshold` is absolute (a memory's `match`, independent of the other hits), so a
question nothing answers returns nothing; the relative cut survives as `relative_threshold`."""

from __future__ import annotations

import pytest

from tests.api_support import bearer

FACTS = (
    "The team meets weekly on Mondays to review the product roadmap.",
    "The user prefers tea over coffee in the morning.",
    "The user's sister lives in Lisbon and works as an architect.",
    "The user is learning to play the cello.",
    "The user's cat is called Miso.",
)


@pytest.fixture
def agent_and_headers(make_agent, make_memory):
    agent = make_agent(role="supervisor")
    ids = [make_memory(agent, fact, memory_type="semantic", category="preferences").id for fact in FACTS]
    return ids, bearer(agent)


def ask(client, headers, **body) -> list[dict]:
    response = client.post("/api/v1/memory/query", json={"return": "full", **body}, headers=headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["results"]


def test_an_irrelevant_question_with_a_threshold_returns_nothing_while_a_relevant_one_returns_its_memory(
    client, agent_and_headers
):
    ids, headers = agent_and_headers
    unrelated = "quantum entanglement weekly"
    # Without a threshold the one shared word finds the meeting, as the best hit: relevance 1.0.
    loose = ask(client, headers, query=unrelated)
    assert [r["id"] for r in loose] == [ids[0]] and loose[0]["relevance"] == 1.0
    assert loose[0]["match"] < 0.3
    assert ask(client, headers, query=unrelated, threshold=0.3) == []
    assert ask(client, headers, query=unrelated, threshold=0.99) == []
    relevant = ask(client, headers, query="When does the team review the roadmap?", threshold=0.3)
    assert [r["id"] for r in relevant] == [ids[0]]
    assert relevant[0]["match"] >= 0.3


def test_match_tells_how_much_of_the_question_a_memory_holds_where_relevance_cannot(
    client, agent_and_headers
):
    ids, headers = agent_and_headers
    question = "When does the team review the roadmap?"
    alone = ask(client, headers, query=question)[0]
    fuller = ask(client, headers, query=question + " weekly Mondays product")[0]
    # One memory, the best hit of two questions: relevance is 1.0 for both; match rises with the share of
    # the question it holds.
    assert alone["id"] == fuller["id"] == ids[0]
    assert alone["relevance"] == fuller["relevance"] == 1.0
    assert fuller["match"] > alone["match"]


def test_relative_threshold_keeps_the_best_hit_whatever_it_matched(client, agent_and_headers):
    ids, headers = agent_and_headers
    kept = ask(client, headers, query="quantum entanglement weekly", relative_threshold=0.99)
    assert [r["id"] for r in kept] == [ids[0]]


@pytest.mark.parametrize("name", ["threshold", "relative_threshold"])
def test_a_threshold_outside_zero_to_one_is_a_422_naming_it(client, agent_and_headers, name):
    _, headers = agent_and_headers
    response = client.post("/api/v1/memory/query", json={"query": "tea", name: 1.5}, headers=headers)
    assert response.status_code == 422
    assert response.get_json()["field"].endswith(name)
