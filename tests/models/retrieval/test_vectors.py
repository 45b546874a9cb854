"""The vector matrix a process keeps per agent for memory.query (models/retrieval/vectors.py): its hourly
rebuild, which drops deleted memories' rows, is loaded by a thread of its own while requests go on."""

from __future__ import annotations

import logging
import threading

import numpy as np

from models.changes.mutations import soft_delete_memories
from models.retrieval import vectors
from tests.models.retrieval.retrieval_support import LABEL, backfill_all, concept_vector, remember

WAIT = 10.0  # seconds: a bound, so a broken rebuild fails the test instead of hanging it


def _an_hour_on(make_agent):
    """An agent of two memories whose matrix is loaded, one of them deleted since and the matrix as old
    as RELOAD_SECONDS: the next search is due to rebuild it."""
    agent = make_agent()
    kept = remember(agent, "Maya books a flight")
    gone = remember(agent, "Maya books a flight to Lisbon")
    backfill_all()
    probe = np.array(concept_vector("Maya books a flight"), dtype=np.float32)
    assert set(vectors.nearest(agent.id, LABEL, probe, 5)[0]) == {kept.id, gone.id}
    soft_delete_memories(agent.id, [gone.id], actor="agent", reason="test")
    old = vectors.cache().cached(agent.id, LABEL)
    assert old is not None
    old.loaded_at -= vectors.RELOAD_SECONDS
    return agent, kept, gone, probe, old


def test_the_hourly_rebuild_loads_in_a_thread_of_its_own_while_requests_search_the_old_matrix(
    app, make_agent, embedder, monkeypatch
):
    agent, kept, gone, probe, old = _an_hour_on(make_agent)
    loading, release, threads = threading.Event(), threading.Event(), []

    class Held(vectors.AgentMatrix):
        """A matrix whose load waits until the test lets it go: a request loading it would wait too."""

        def refresh(self, now: float) -> None:
            if not self.loaded_at:  # its full load (later refreshes read what was embedded since)
                threads.append(threading.current_thread())
                loading.set()
                assert release.wait(WAIT)
            super().refresh(now)

    monkeypatch.setattr(vectors, "AgentMatrix", Held)
    try:
        # Answered from the old matrix while the new one loads, the deleted memory's row still in it (the
        # SQL drops it from results: test_an_agent_never_receives_another_agents_memory_through_the_vector_path).
        assert set(vectors.nearest(agent.id, LABEL, probe, 5)[0]) == {kept.id, gone.id}
        assert loading.wait(WAIT) and threads[0] is not threading.current_thread()
        assert set(vectors.nearest(agent.id, LABEL, probe, 5)[0]) == {kept.id, gone.id}
        assert len(threads) == 1  # one rebuild at a time
    finally:
        release.set()
        vectors.cache().join_rebuilds(WAIT)
    fresh = vectors.cache().cached(agent.id, LABEL)
    assert isinstance(fresh, Held) and fresh is not old
    assert vectors.nearest(agent.id, LABEL, probe, 5)[0] == [kept.id]
    assert len(threads) == 1 and fresh.loaded_at  # the new matrix is an hour from its own rebuild


def test_a_failed_rebuild_leaves_the_old_matrix_serving_and_is_tried_again_an_hour_later(
    app, make_agent, embedder, monkeypatch, caplog
):
    agent, kept, gone, probe, old = _an_hour_on(make_agent)
    tried = []

    class Failing(vectors.AgentMatrix):
        def refresh(self, now: float) -> None:
            tried.append(now)
            raise RuntimeError("Maya books a flight")  # a message with content: never logged

    monkeypatch.setattr(vectors, "AgentMatrix", Failing)
    with caplog.at_level(logging.WARNING, logger="models.retrieval.vectors"):
        assert set(vectors.nearest(agent.id, LABEL, probe, 5)[0]) == {kept.id, gone.id}
        vectors.cache().join_rebuilds(WAIT)
    assert len(tried) == 1 and vectors.cache().cached(agent.id, LABEL) is old
    assert [r.getMessage() for r in caplog.records] == [
        f"vectors: agent {agent.id}'s matrix was not rebuilt (RuntimeError)"
    ]
    vectors.nearest(agent.id, LABEL, probe, 5)
    vectors.cache().join_rebuilds(WAIT)
    assert len(tried) == 1  # not again until RELOAD_SECONDS have passed
    old.loaded_at -= vectors.RELOAD_SECONDS
    vectors.nearest(agent.id, LABEL, probe, 5)
    vectors.cache().join_rebuilds(WAIT)
    assert len(tried) == 2


def test_the_rq_worker_which_forks_its_work_horses_rebuilds_in_the_jobs_own_thread(app, make_agent, embedder):
    # `flask rq worker` forks a work horse for most jobs, and a thread alive at a fork would leave the locks
    # it held held in the child: its process rebuilds in the caller's thread.
    result = app.test_cli_runner().invoke(args=["rq", "worker", "--burst"])
    assert result.exit_code == 0, result.output
    assert vectors.cache().background is False
    agent, kept, gone, probe, old = _an_hour_on(make_agent)
    before = set(threading.enumerate())
    assert vectors.nearest(agent.id, LABEL, probe, 5)[0] == [kept.id]  # rebuilt before answering
    assert set(threading.enumerate()) == before
    fresh = vectors.cache().cached(agent.id, LABEL)
    assert fresh is not old and fresh is not None and fresh.loaded_at
