"""The per-write linking job (jobs/relations.py `link_related` on the few memories of one API write) finds
its neighbours in the agent's matrix this process keeps for memory.query (models/retrieval/vectors.py)
instead of reloading the agent's vectors, and still links exactly what the batch path links: checked
against the database and scored from the stored vectors."""

from __future__ import annotations

import sqlalchemy as sa

from console.cli.rq import AppWorker
from infra.queues import get_rq
from jobs import relations
from jobs.embeddings import get_embedder
from models import AgentMemory, MemoryRelation, db
from models.changes.mutations import create_memory, soft_delete_memories, update_memory
from models.retrieval import vectors
from tests.api_support import bearer

TEXTS = [
    "Maya prefers green tea in the morning before work",
    "Maya prefers green tea in the morning before the standup",
    "Maya prefers green tea in the morning with lemon",
    "The quarterly platform budget is 120 thousand euros",
    "The quarterly platform budget was raised to 150 thousand euros",
    "Tom walks his dog along the river every evening",
]


def _semantic(agent_id: int, text: str) -> int:
    return create_memory(agent_id, text, actor="agent", memory_type="semantic", category="preferences").id


def _edges(agent_id: int) -> list[tuple[int, int, float]]:
    rows = db.session.execute(
        sa.select(MemoryRelation.from_id, MemoryRelation.to_id, MemoryRelation.strength)
        .where(MemoryRelation.agent_id == agent_id)
        .order_by(MemoryRelation.from_id, MemoryRelation.to_id)
    )
    return [tuple(r) for r in rows]


def test_the_per_write_job_links_from_the_cached_matrix_without_reloading_the_agents_vectors(
    app, make_agent, monkeypatch
):
    agent = make_agent()
    ids = [_semantic(agent.id, text) for text in TEXTS[:-1]]
    relations.link_related(agent.id, ids[:1])  # loads the agent's matrix into this process's cache
    assert (agent.id, get_embedder().label) in vectors.cache()._agents

    def reload(*args, **kwargs):
        raise AssertionError("the per-write path reloaded the agent's vectors")

    monkeypatch.setattr(relations, "agent_vectors", reload)
    newest = _semantic(agent.id, TEXTS[2])
    assert relations.link_related(agent.id, [newest]) >= 1
    linked = {(a, b) for a, b, _ in _edges(agent.id)}
    assert (min(ids[0], newest), max(ids[0], newest)) in linked


def test_one_write_at_a_time_links_the_same_edges_as_one_batch(app, make_agent):
    one_by_one, batched = make_agent(), make_agent()
    for agent in (one_by_one, batched):
        written = []
        for text in TEXTS:
            written.append(_semantic(agent.id, text))
            if agent is one_by_one:
                vectors.cache().clear()  # as if each write's job met a fresh matrix refresh
                relations.link_related(agent.id, written[-1:])
        if agent is batched:
            # More memories than the per-write path takes: the batch path, which loads every vector.
            padding = [
                _semantic(agent.id, f"Unrelated note number {n} about shipping crates") for n in range(20)
            ]
            relations.link_related(agent.id, written + padding)
    offset = {a: b for a, b in zip(_ids(one_by_one.id), _ids(batched.id), strict=False)}
    mapped = [(offset[a], offset[b], strength) for a, b, strength in _edges(one_by_one.id)]
    in_batch = [
        edge for edge in _edges(batched.id) if edge[0] in offset.values() and edge[1] in offset.values()
    ]
    assert mapped and mapped == in_batch


def _ids(agent_id: int) -> list[int]:
    return list(
        db.session.scalars(
            sa.select(AgentMemory.id).where(AgentMemory.agent_id == agent_id).order_by(AgentMemory.id)
        )
    )[: len(TEXTS)]


def test_a_rewritten_memorys_job_keeps_each_of_its_edges_once(app, make_agent):
    """A new memory's job reads no stored edges (it has none: its first vector is stored with them); a
    rewritten one has a vector already, and its job adds only the edges it does not have."""
    agent = make_agent()
    ids = [_semantic(agent.id, text) for text in TEXTS[:3]]
    for memory in ids:
        relations.link_related(agent.id, [memory])
    before = _edges(agent.id)
    assert len(before) == 3  # the three tea memories, each pair once
    assert relations.link_related(agent.id, ids[-1:]) == 0  # run again: nothing new
    update_memory(agent.id, ids[0], actor="agent", content="Maya prefers green tea in the morning at home")
    assert relations.link_related(agent.id, ids[:1]) == 0  # the rewritten vector's neighbours: linked already
    assert {(a, b) for a, b, _ in _edges(agent.id)} == {(a, b) for a, b, _ in before}
    newest = _semantic(agent.id, "Maya prefers green tea in the morning at the office")
    assert relations.link_related(agent.id, [newest]) == 3
    assert len(_edges(agent.id)) == 6


def test_a_memory_deleted_after_the_matrix_was_loaded_is_never_linked(app, make_agent):
    agent = make_agent()
    first = _semantic(agent.id, TEXTS[0])
    relations.link_related(agent.id, [first])  # the matrix now holds `first`
    soft_delete_memories(agent.id, [first], actor="agent")
    second = _semantic(agent.id, TEXTS[1])
    assert relations.link_related(agent.id, [second]) == 0
    assert _edges(agent.id) == []


def test_the_worker_runs_the_api_linking_job_in_its_own_process_where_the_matrix_stays_cached(
    app, client, make_agent, redis_conn
):
    app.config["EMBEDDINGS"] = "hashed"
    agent = make_agent(role="supervisor")
    agent_id, headers = agent.id, bearer(agent)  # the worker ends the session the agent row was read in
    first = _semantic(agent_id, TEXTS[0])
    vectors.cache().clear()
    queue = get_rq().queue("maintenance")
    saved = client.post(
        "/api/v1/memory",
        json={"category": "preferences", "memory_type": "semantic", "content": TEXTS[1]},
        headers=headers,
    )
    assert saved.status_code == 201 and queue.count == 1

    AppWorker([queue], connection=queue.connection).work(burst=True)

    # A forked work horse would have loaded the matrix in a process gone by now; this one keeps it.
    assert (agent_id, get_embedder().label) in vectors.cache()._agents
    assert [(a, b) for a, b, _ in _edges(agent_id)] == [(first, saved.get_json()["memory"]["id"])]
