"""docs/spec/003-memory-system.md §2's read and write paths through the agent API: memory.query adds 1-2 related bullets, and a
semantic memory saved through the API is linked to its neighbours by a maintenance worker."""

from __future__ import annotations

import sqlalchemy as sa
from rq import SimpleWorker

from infra.queues import get_rq
from models import MemoryRelation, db, estimate_tokens
from models.changes.mutations import create_memory, soft_delete_memories
from tests.api_support import bearer


def edge(agent, a, b, strength: float) -> None:
    low, high = sorted((a.id, b.id))
    db.session.add(MemoryRelation(agent_id=agent.id, from_id=low, to_id=high, strength=strength))
    db.session.commit()


def ask(client, headers, **body):
    response = client.post("/api/v1/memory/query", json=body, headers=headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_query_adds_the_strongest_linked_memories_within_the_allowlist_filters_and_budget(client, make_agent):
    agent = make_agent(role="supervisor")
    other = make_agent(role="supervisor")
    headers = bearer(agent)
    mem = lambda text, **f: create_memory(agent.id, text, actor="agent", memory_type="semantic", **f)  # noqa: E731
    hit = mem("Cycling to work on Tuesdays", category="preferences", user_id="u1")
    strong = mem("Keeps a spare inner tube in the office", category="preferences", user_id="u1")
    weaker = mem("Bought a new saddle in March", category="activity", user_id="u1")
    outside = mem(
        "Secret strategy notes", category="knowledge", user_id="u1"
    )  # not in a supervisor's allowlist
    gone = mem("Used to commute by train", category="preferences", user_id="u1")
    someone_else = mem("Rides with Sam on Sundays", category="preferences", user_id="u2")
    foreign = create_memory(
        other.id, "Another agent's note", actor="agent", memory_type="semantic", category="preferences"
    )
    for target, strength in (
        (outside, 0.99),
        (gone, 0.98),
        (someone_else, 0.97),
        (strong, 0.9),
        (weaker, 0.7),
    ):
        edge(agent, hit, target, strength)
    db.session.add(MemoryRelation(agent_id=other.id, from_id=hit.id, to_id=foreign.id, strength=0.995))
    db.session.commit()
    soft_delete_memories(agent.id, [gone.id], actor="agent", reason="test")

    answer = ask(client, headers, query="cycling", filters={"user_id": "u1"})

    assert [r["id"] for r in answer["results"]] == [hit.id]
    assert [(r["id"], r["related_to"], r["strength"]) for r in answer["related"]] == [
        (strong.id, hit.id, 0.9),
        (weaker.id, hit.id, 0.7),
    ]
    assert answer["related"][0]["text"] == "[preferences] Keeps a spare inner tube in the office"
    costs = [estimate_tokens(r["text"]) for r in answer["results"] + answer["related"]]
    assert answer["tokens_used"] == sum(costs)

    # Without the user filter, the other user's memory is within scope and the strongest allowed one.
    assert [r["id"] for r in ask(client, headers, query="cycling")["related"]] == [someone_else.id, strong.id]
    assert [r["id"] for r in ask(client, headers, query="cycling", related=1)["related"]] == [someone_else.id]
    assert ask(client, headers, query="cycling", related=0)["related"] == []
    # The budget holds: room for the hit alone leaves no room for related bullets.
    tight = ask(client, headers, query="cycling", filters={"user_id": "u1"}, budget_tokens=costs[0])
    assert [r["id"] for r in tight["results"]] == [hit.id] and tight["related"] == []
    # A category filter narrows the related bullets too.
    only = ask(client, headers, query="cycling", filters={"user_id": "u1", "category": "preferences"})
    assert [r["id"] for r in only["related"]] == [strong.id]


def test_related_is_validated(client, make_agent):
    headers = bearer(make_agent(role="supervisor"))
    for bad in (3, -1, "2", True):
        response = client.post("/api/v1/memory/query", json={"query": "x", "related": bad}, headers=headers)
        assert response.status_code == 422, bad


def test_a_semantic_memory_saved_through_the_api_is_linked_by_a_maintenance_worker(app, client, make_agent):
    # Without a real embedder only the semantic write queues work ("auto" would pick the local model
    # when its extra is installed, and then the episodic write is embedded too).
    app.config["EMBEDDINGS"] = "hashed"
    agent = make_agent(role="supervisor")
    headers = bearer(agent)
    first = create_memory(
        agent.id,
        "The user prefers green tea in the morning before work",
        actor="agent",
        memory_type="semantic",
        category="preferences",
    )
    queue = get_rq().queue("maintenance")
    queue.empty()

    saved = client.post(
        "/api/v1/memory",
        json={
            "category": "preferences",
            "memory_type": "semantic",
            "content": "The user prefers green tea in the morning before the standup",
        },
        headers=headers,
    )
    episodic = client.post(
        "/api/v1/memory",
        json={"category": "preferences", "memory_type": "episodic", "content": "Met the user for tea today"},
        headers=headers,
    )
    assert saved.status_code == 201 and episodic.status_code == 201
    assert (
        db.session.scalar(sa.select(sa.func.count()).select_from(MemoryRelation)) == 0
    )  # not on the request
    assert queue.count == 1  # only the semantic memory is linked

    SimpleWorker([queue], connection=queue.connection).work(burst=True)

    db.session.expire_all()
    edges = db.session.execute(sa.select(MemoryRelation.from_id, MemoryRelation.to_id)).all()
    assert edges == [(first.id, saved.get_json()["memory"]["id"])]
    answer = ask(client, headers, query="standup")
    assert [r["id"] for r in answer["related"]] == [first.id]
