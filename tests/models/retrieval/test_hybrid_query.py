"""memory.query's hybrid ranking: lexical relevance fused with vector similarity
(docs/explanation/retrieval.md).

The embedder is a real OpenAI-compatible endpoint on loopback (tests/scripted_llm.py's server answering
/v1/embeddings), driven through the real `openai` SDK. Its vectors are a bag of *concepts*: words that
mean the same thing ("study", "course", "certificate") share a dimension, so a paraphrase with no word in
common with a memory is still near it — what a real embedding model does, deterministically.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import sqlalchemy as sa
from rq import SimpleWorker

from infra.queues import get_rq
from jobs import embeddings
from models import MemoryEmbedding, db
from models.changes.mutations import soft_delete_memories
from models.retrieval import fusion, matching, pgvector, query, term_stats, vectors
from tests.api_support import bearer
from tests.models.retrieval.retrieval_support import (
    DIMS,
    LABEL,
    QUESTION,
    ask,
    backfill_all,
    concept_vector,
    paraphrase_set,
    remember,
    word_figures_gathered,
)
from tests.scripted_llm import error
from tests.sql_statements import never_analyzed, sqlite_plan, statements_sent


def test_stop_words_search_nothing_but_are_scored_and_a_query_made_only_of_them_searches_them():
    question = "What would the user like to study after finishing this course?"
    assert matching.query_terms(question) == ["user", "like", "study", "finishing", "course"]
    assert matching.question_words("Where is her desk? Her desk!") == ["where", "is", "her", "desk"]
    assert matching.query_terms("Where is her desk?") == ["desk"]
    assert matching.query_terms("what is it") == ["what", "is", "it"]


def test_fusion_ranks_a_paraphrased_questions_target_first_when_lexical_alone_does_not(
    app, client, make_agent, embedder
):
    agent = make_agent(role="supervisor")
    target, decoy, _ = paraphrase_set(agent)
    assert backfill_all() == 5

    lexical = [
        h.id
        for h in query.search(agent.id, text=QUESTION, categories=["profile"], mode="lexical", bridge=False)
    ]
    assert lexical[:1] == [decoy.id] and target.id not in lexical  # no word of the question is in the target

    assert ask(client, agent, QUESTION)[0] == target.id
    vector = embeddings.query_vector(QUESTION)
    hits = query.search(agent.id, text=QUESTION, categories=["profile"], dense=vector, bridge=False)
    assert hits[0].id == target.id and hits[0].relevance == pytest.approx(1.0)
    # Reciprocal rank fusion favours what both rankings found (the decoy is the lexical first and the dense
    # second): one reason the calibrated mix is the default (docs/benchmarks.md, "Retrieval quality").
    rrf = query.search(
        agent.id, text=QUESTION, categories=["profile"], dense=vector, fusion="rrf", bridge=False
    )
    assert [h.id for h in rrf[:2]] == [decoy.id, target.id]
    dense = query.search(
        agent.id, text=QUESTION, categories=["profile"], dense=vector, mode="dense", bridge=False
    )
    assert dense[0].id == target.id
    # Only the question was embedded on the request path, once: repeats come from the cache.
    ask(client, agent, QUESTION)
    asked = [r["input"] for r in embedder.requests]
    assert asked.count([QUESTION.strip()]) == 1


def test_the_mix_weighs_the_absolute_lexical_match_and_the_cosine_against_its_best_a_negative_one_as_none(
    app, make_agent, embedder
):
    """fusion.fused_pool's "mix", checked against the two rankings it fuses: relevance is
    MIX_LEXICAL x the lexical ranking's absolute match (ranking.coverage) + (1 - MIX_LEXICAL) x (cosine /
    best cosine, none below zero), then divided by the best candidate's."""
    agent = make_agent(role="supervisor")
    target, decoy, flights = paraphrase_set(agent)
    remember(agent, "Maya would like a window seat on every flight")
    backfill_all()
    label, toward = embeddings.query_vector(QUESTION)
    # A query vector pointing away from the flights: their cosines are below zero.
    away = np.asarray(toward) - 0.8 * np.asarray(concept_vector("flight to Lisbon at 7 o'clock"))
    dense = (label, away / np.linalg.norm(away))
    assert float(np.dot(dense[1], concept_vector(flights[0].content))) < 0

    def relevance(mode: str, field: str = "relevance") -> dict[int, float]:
        hits = query.search(agent.id, text=QUESTION, categories=["profile"], dense=dense, mode=mode, top_k=50,
                            bridge=False, with_match=True)  # fmt: skip
        return {h.id: getattr(h, field) for h in hits}

    lexical, semantic, hybrid = relevance("lexical", "match"), relevance("dense"), relevance("hybrid")
    assert decoy.id in lexical and target.id not in lexical and semantic[target.id] == pytest.approx(1.0)
    assert 0 < lexical[decoy.id] < 1  # the decoy holds some of the question's words, not all
    assert semantic[flights[0].id] == 0.0  # found by vector, but below zero: no dense relevance
    raw = {
        i: fusion.MIX_LEXICAL * lexical.get(i, 0.0) + (1 - fusion.MIX_LEXICAL) * semantic.get(i, 0.0)
        for i in set(lexical) | set(semantic)
    }
    best = max(raw.values())
    assert hybrid == pytest.approx({i: r / best for i, r in raw.items()})


@pytest.mark.parametrize("missing", fusion.MISSING_COSINES)
def test_a_lexical_candidate_outside_the_nearest_counts_the_cosine_missing_cosine_gives_it(
    app, make_agent, embedder, monkeypatch, missing
):
    """The mix's cosine for a memory the words found and the DENSE_K nearest did not (fusion.MISSING_COSINE):
    none, half the nearest's last cosine, or that last cosine — never more than a memory among the nearest."""
    monkeypatch.setattr(fusion, "MISSING_COSINE", missing)
    monkeypatch.setattr(query, "DENSE_K", 2)
    agent = make_agent(role="supervisor")
    paraphrase_set(agent)
    remember(agent, "Maya would like a window seat on every flight")
    backfill_all()
    dense = embeddings.query_vector(QUESTION)
    ids, scores = vectors.nearest(agent.id, dense[0], dense[1], 2)
    last = {"zero": 0.0, "half": scores[-1] / 2, "floor": scores[-1]}[missing]

    def found(mode: str, field: str) -> dict[int, float]:
        hits = query.search(agent.id, text=QUESTION, categories=["profile"], dense=dense, mode=mode, top_k=50,
                            bridge=False, with_match=True)  # fmt: skip
        return {h.id: getattr(h, field) for h in hits}

    lexical, hybrid = found("lexical", "match"), found("hybrid", "relevance")
    assert set(lexical) - set(ids), "a memory the words found and the vector did not"
    cosine = dict(zip(ids, scores, strict=True))
    raw = {
        i: fusion.MIX_LEXICAL * lexical.get(i, 0.0)
        + (1 - fusion.MIX_LEXICAL) * max(cosine.get(i, last), 0.0) / max(scores)
        for i in set(lexical) | set(ids)
    }
    best = max(raw.values())
    assert hybrid == pytest.approx({i: r / best for i, r in raw.items()})
    # The match `threshold` compares reads no counted cosine: beyond the nearest, the words' share alone.
    matched = found("hybrid", "match")
    assert {i: matched[i] for i in set(lexical) - set(ids)} == pytest.approx(
        {i: lexical[i] for i in set(lexical) - set(ids)}
    )


def test_reciprocal_rank_fusion_sums_one_over_k_plus_the_rank_in_each_ranking_a_memory_is_in(
    app, make_agent, embedder
):
    """fusion.fused_pool's "rrf", checked against the two rankings it fuses: 1 / (RRF_K + rank) in the
    lexical ranking (by lexical relevance, a memory without any not ranked) plus 1 / (RRF_K + rank) in
    the dense one (nearest first), then divided by the best candidate's. Memories found by one ranking
    and by both are in the set."""
    agent = make_agent(role="supervisor")
    paraphrase_set(agent)
    remember(agent, "Maya would like a window seat on every flight")
    backfill_all()
    dense = embeddings.query_vector(QUESTION)
    lexical = query.search(
        agent.id, text=QUESTION, categories=["profile"], mode="lexical", top_k=50, bridge=False
    )
    lexical_rank = {
        h.id: rank
        for rank, h in enumerate(sorted(lexical, key=lambda h: (-(h.relevance or 0.0), -h.id)), start=1)
        if h.relevance
    }
    ids, _ = vectors.nearest(agent.id, dense[0], dense[1], fusion.DENSE_K)
    dense_rank = {memory_id: rank for rank, memory_id in enumerate(ids, start=1)}
    assert set(dense_rank) - set(lexical_rank) and set(dense_rank) & set(lexical_rank)

    hits = query.search(
        agent.id, text=QUESTION, categories=["profile"], dense=dense, fusion="rrf", top_k=50, bridge=False
    )
    raw = {
        i: sum(1.0 / (fusion.RRF_K + ranks[i]) for ranks in (lexical_rank, dense_rank) if i in ranks)
        for i in set(lexical_rank) | set(dense_rank)
    }
    best = max(raw.values())
    assert {h.id: h.relevance for h in hits} == pytest.approx({i: r / best for i, r in raw.items()})


def test_a_lexical_match_still_counts_in_the_fusion(app, client, make_agent, embedder):
    agent = make_agent(role="supervisor")
    target, decoy, others = paraphrase_set(agent)
    backfill_all()
    # "Lisbon flight at 7": every flight memory is near by vector; the exact words pick the one.
    assert ask(client, agent, "When is the Lisbon flight at 7?")[0] == others[1].id


def test_vectors_are_written_by_the_worker_off_the_request_path(
    app, client, make_agent, embedder, redis_conn
):
    agent = make_agent(role="supervisor")
    queue = get_rq().queue("maintenance")
    saved = client.post(
        "/api/v1/memory",
        json={
            "category": "profile",
            "memory_type": "episodic",
            "content": "Maya enrolled in a degree in counselling",
        },
        headers=bearer(agent),
    )
    assert saved.status_code == 201
    memory_id = saved.get_json()["memory"]["id"]
    assert db.session.get(MemoryEmbedding, memory_id) is None  # the request did not embed it
    assert queue.count == 1

    SimpleWorker([queue], connection=queue.connection).work(burst=True)

    db.session.expire_all()
    stored = db.session.get(MemoryEmbedding, memory_id)
    assert stored is not None and stored.model == LABEL and stored.dims == DIMS
    assert np.allclose(
        np.frombuffer(stored.vector, dtype=np.float32),
        concept_vector("Maya enrolled in a degree in counselling"),
    )
    assert ask(client, agent, "Which course would she want to study?")[0] == memory_id


def test_the_backfill_command_embeds_what_is_missing_or_stale_and_nothing_twice(
    app, runner, make_agent, embedder
):
    agent, other = make_agent(role="supervisor"), make_agent(role="supervisor")
    mine = [remember(agent, f"Maya studies class {n}") for n in range(3)]
    remember(other, "Someone else's memory")

    result = runner.invoke(args=["embeddings", "backfill", agent.name])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {"embedded": 3, "model": LABEL, "agents": 1}
    stored = db.session.scalars(
        sa.select(MemoryEmbedding.memory_id).order_by(MemoryEmbedding.memory_id)
    ).all()
    assert stored == [m.id for m in mine]  # the other agent's memory was not asked for

    again = runner.invoke(args=["embeddings", "backfill"])
    assert json.loads(again.stdout.strip().splitlines()[-1])["embedded"] == 1  # only the other agent's
    assert (
        json.loads(runner.invoke(args=["embeddings", "backfill"]).stdout.strip().splitlines()[-1])["embedded"]
        == 0
    )


def test_an_agent_never_receives_another_agents_memory_through_the_vector_path(
    app, client, make_agent, embedder, monkeypatch
):
    monkeypatch.setattr(vectors, "REFRESH_SECONDS", 0.0)
    mine, theirs = make_agent(role="supervisor"), make_agent(role="supervisor")
    own = remember(mine, "Maya wants to travel to Lisbon", user_id="u1")
    other_user = remember(mine, "Maya hopes to study a counselling course", user_id="u2")
    foreign = [remember(theirs, QUESTION, user_id="u1"), remember(theirs, "She would like to study a course")]
    backfill_all()

    # The other agent holds the question word for word; it never comes back, whatever the path.
    for body in ({}, {"filters": {"user_id": "u1"}}, {"top_k": 20}):
        got = ask(client, mine, QUESTION, **body)
        assert not set(got) & {m.id for m in foreign}
    assert ask(client, mine, QUESTION, filters={"user_id": "u1"}) == [own.id]  # and not u2's memory
    ids, _ = vectors.nearest(mine.id, LABEL, np.array(concept_vector(QUESTION), dtype=np.float32), 50)
    assert set(ids) == {own.id, other_user.id}

    # A memory deleted after the matrix was loaded is dropped by the SQL, not served from the matrix.
    soft_delete_memories(mine.id, [other_user.id], actor="agent", reason="test")
    assert other_user.id not in ask(client, mine, QUESTION, top_k=20)


def test_with_no_embedder_results_are_identical_to_the_lexical_ranking(
    app, client, make_agent, no_embedder, llm
):
    agent = make_agent(role="supervisor")
    paraphrase_set(agent)
    for n in range(12):
        remember(agent, f"Maya likes pasta dinner number {n} and would study the menu", importance=1 + n % 5)
    backfill_all()  # hashed vectors exist (the relations layer's fallback), and must not be ranked by
    assert embeddings.semantic_embedder() is None and embeddings.query_vector(QUESTION) is None
    hashed = db.session.scalars(sa.select(MemoryEmbedding.model).distinct()).all()
    assert hashed == [embeddings.FALLBACK_LABEL]
    for question in (QUESTION, "pasta dinner", "Which menu would Maya study for dinner?", "study"):
        for body in ({}, {"top_k": 10}, {"threshold": 0.5}):
            lexical = query.search(
                agent.id,
                text=question,
                categories=["profile"],
                top_k=body.get("top_k", 5),
                threshold=body.get("threshold"),
            )
            assert ask(client, agent, question, **body) == [h.id for h in lexical]
    assert llm.requests == []  # nothing was sent to any endpoint


def test_a_failing_embedding_endpoint_degrades_to_the_lexical_ranking(app, client, make_agent, embedder):
    agent = make_agent(role="supervisor")
    target, decoy, _ = paraphrase_set(agent)
    backfill_all()
    embedder.script = [error(500), error(500)]  # the query embedding fails, its one retry too
    assert ask(client, agent, QUESTION) == [
        h.id for h in query.search(agent.id, text=QUESTION, categories=["profile"], mode="lexical")
    ]


def test_the_matrix_picks_up_new_and_rewritten_vectors(app, make_agent, embedder, monkeypatch):
    monkeypatch.setattr(vectors, "REFRESH_SECONDS", 0.0)
    agent = make_agent()
    first = remember(agent, "Maya eats pasta")
    backfill_all()
    probe = np.array(concept_vector("Maya books a flight"), dtype=np.float32)
    assert vectors.nearest(agent.id, LABEL, probe, 5)[0] == [first.id]
    second = remember(agent, "Maya books a flight")
    backfill_all()
    ids, scores = vectors.nearest(agent.id, LABEL, probe, 5)
    assert ids[0] == second.id and scores[0] == pytest.approx(1.0, abs=1e-5)
    assert vectors.cache().nbytes > 0


def test_a_questions_common_words_are_left_out_of_the_search_when_a_rarer_one_remains(
    app, make_agent, half_is_common
):
    """Long questions stay fast (models/retrieval/term_stats.py): a word most memories hold is not searched by."""
    agent = make_agent(role="supervisor")
    rare = remember(agent, "The user keeps a kayak in the garage")
    common = [remember(agent, f"The user mentioned report number {n}") for n in range(15)]
    word_figures_gathered()
    assert term_stats.searchable(db.engine.dialect.name, ["user", "kayak"]) == ["kayak"]
    assert term_stats.searchable(db.engine.dialect.name, ["user"]) == ["user"]  # nothing rarer: kept
    # Nor is it scored (SQLite's bm25() would read its whole posting list for its weight); stop words are.
    words = ["where", "does", "the", "user", "keep", "kayak"]
    assert term_stats.search_and_score(db.engine.dialect.name, words, ["user", "keep", "kayak"]) == (
        ["keep", "kayak"],
        ["where", "does", "keep", "kayak"],
    )
    hits = query.search(
        agent.id, text="Where does the user keep the kayak?", categories=["profile"], top_k=10
    )
    assert [h.id for h in hits] == [rare.id]
    assert len(query.search(agent.id, text="the user", categories=["profile"], top_k=20)) == len(common) + 1


def test_a_word_held_by_the_common_share_is_common_when_that_share_is_no_whole_number_of_memories(
    app, make_agent, half_is_common
):
    """Half of 15 memories is 7.5: a word 8 of them hold is common, one 7 hold is not. SQLite counts a
    word's memories only up to the threshold, so the count must stop at a whole number it can reach (it
    stopped at 7 and was compared with 7.5: on SQLite no word was ever common unless the share made a
    whole number of the memories)."""
    agent = make_agent(role="supervisor")
    remember(agent, "The user keeps a kayak in the shed")
    for n in range(7):
        remember(agent, f"The user mentioned report number {n}")
        remember(agent, f"Maya weeded the garden on day {n}")
    word_figures_gathered()
    assert term_stats.common_words(db.engine.dialect.name, ["user", "garden", "kayak"]) == {"user"}


def test_sqlite_weighs_a_word_by_the_count_the_common_words_rule_finished_and_recounts_one_it_cut_short(
    app, make_agent, half_is_common
):
    """A word's memories counted for the common-words rule stop at its threshold; a count that stopped
    short of it is the word's whole count, which the question's weight needs: no second statement reads
    it. A count the threshold cut short is read whole."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite counts a word's memories in its FTS5 index")
    agent = make_agent(role="supervisor")
    remember(agent, "The user keeps a kayak in the shed")
    for n in range(7):
        remember(agent, f"The user mentioned report number {n}")
        remember(agent, f"Maya weeded the garden on day {n}")
    assert term_stats.common_words("sqlite", ["user", "garden", "kayak"]) == {"user"}
    with statements_sent("agent_memories_fts") as sent:
        weight = term_stats.sqlite_weight(["garden", "kayak"])
    assert sent == [] and weight == term_stats.question_weight([7, 1], 15)
    with statements_sent("agent_memories_fts") as sent:
        weight = term_stats.sqlite_weight(["user", "kayak"])
    assert len(sent) == 1 and weight == term_stats.question_weight([8, 1], 15)


def test_sqlite_looks_the_nearest_memories_up_by_id_not_by_walking_the_agents_memories(
    app, make_agent, embedder
):
    """On a database never ANALYZEd, SQLite preferred the agent-led indexes to the nearest memories' ids:
    it walked all of the user's memories and checked each against them (fusion._looked_up_by_id)."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's query plan")
    agent = make_agent(role="supervisor")
    for n in range(30):
        remember(agent, f"Maya note {n} about the garden", user_id="u1")
    backfill_all()
    assert never_analyzed()
    vector = embeddings.query_vector("a note about the garden")
    with statements_sent("json_each") as statements:
        for filters in ({"user_id": "u1"}, None):
            hits = query.search(
                agent.id, text="garden", categories=["profile"], filters=filters, dense=vector, mode="dense"
            )
            assert len(hits) == 5
    assert len(statements) == 2
    for statement, parameters in statements:
        steps = sqlite_plan(statement, parameters)
        assert not [s for s in steps if "USING INDEX ix_agent_memories_agent" in s], steps
        assert [s for s in steps if "SEARCH agent_memories USING INTEGER PRIMARY KEY" in s], steps


def test_without_pgvector_vectors_are_searched_in_the_web_process(app, runner):
    """SQLite, and PostgreSQL without pgvector (this project's): no mirror column, so memory.query searches
    its matrix (tests/models/retrieval/test_pgvector.py covers a server with pgvector), and the set-up command says why."""
    assert not pgvector.usable(LABEL, DIMS)
    assert "embedding" not in {c["name"] for c in sa.inspect(db.engine).get_columns("memory_embeddings")}
    result = runner.invoke(args=["embeddings", "pgvector"])
    assert result.exit_code == 0, result.output
    sqlite = db.engine.dialect.name == "sqlite"
    assert ("not PostgreSQL" if sqlite else "pgvector is not installed on this server") in result.output


def test_vector_search_is_auto_pgvector_or_matrix(tmp_path, monkeypatch):
    from infra.config import Config

    monkeypatch.delenv("VECTOR_SEARCH", raising=False)
    assert Config(str(tmp_path), {"SECRET_KEY": "x"}).VECTOR_SEARCH == "auto"
    monkeypatch.setenv("VECTOR_SEARCH", "Matrix")
    assert Config(str(tmp_path), {"SECRET_KEY": "x"}).VECTOR_SEARCH == "matrix"
    monkeypatch.setenv("VECTOR_SEARCH", "pgvector")
    assert Config(str(tmp_path), {"SECRET_KEY": "x"}).VECTOR_SEARCH == "pgvector"
    monkeypatch.setenv("VECTOR_SEARCH", "faiss")
    with pytest.raises(ValueError, match="VECTOR_SEARCH must be auto, pgvector or matrix"):
        Config(str(tmp_path), {"SECRET_KEY": "x"})


def test_with_an_embedder_the_threshold_keeps_a_paraphrase_and_drops_a_question_about_nothing_held(
    app, client, make_agent, embedder
):
    """`threshold` compares a hit's match, the larger of its word share and its cosine: a paraphrase that
    shares no word with its memory passes by meaning, a question about nothing held has neither."""
    agent = make_agent(role="supervisor")
    target, _, _ = paraphrase_set(agent)
    backfill_all()
    response = client.post(
        "/api/v1/memory/query",
        json={"query": QUESTION, "return": "full", "threshold": 0.45},
        headers=bearer(agent),
    )
    results = response.get_json()["results"]
    assert results[0]["id"] == target.id and results[0]["match"] >= 0.45
    assert all(r["match"] >= 0.45 for r in results)
    unrelated = "Which vegetarian meal is for lunch?"
    assert ask(client, agent, unrelated) != []  # the best candidate is still relevance 1.0
    assert ask(client, agent, unrelated, threshold=0.45) == []
