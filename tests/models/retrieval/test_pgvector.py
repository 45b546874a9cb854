"""pgvector where the database has it (models/retrieval/pgvector.py, migration 0020).

This project's PostgreSQL has no pgvector, so these tests start a second server that does: the
`pgserver` wheel's PostgreSQL 16 with pgvector 0.6.2 (a dev dependency; its own data directory and Unix
socket under pytest's tmp dir, stopped at the end). The schema is built by the Alembic revisions, as in
production; the app, its agents and the scripted embeddings endpoint are the suite's own fixtures
(tests/models/retrieval/test_hybrid_query.py). They run in the PostgreSQL suite only (scripts/test.sh runs both suites).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import sqlalchemy as sa

from models import MemoryEmbedding, db
from models.changes.mutations import soft_delete_memories, update_memory
from models.retrieval import pgvector, query, vectors
from tests.conftest import DB_KIND, TABLES, _migrate
from tests.models.retrieval.retrieval_support import (
    LABEL,
    QUESTION,
    ask,
    backfill_all,
    concept_vector,
    paraphrase_set,
    remember,
)

pytestmark = pytest.mark.skipif(
    DB_KIND != "postgresql", reason="runs once, in the PostgreSQL suite (a server of its own)"
)


@pytest.fixture(scope="module")
def pgvector_template(tmp_path_factory):
    """A PostgreSQL server with pgvector, and a database on it migrated to head."""
    pgserver = pytest.importorskip("pgserver", reason="the dev extra installs pgserver")
    server = pgserver.get_server(str(tmp_path_factory.mktemp("pgvector")), cleanup_mode="stop")
    admin = sa.create_engine(
        server.get_uri().replace("postgresql://", "postgresql+psycopg://"), isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as conn:
        conn.execute(sa.text("CREATE DATABASE memconsole_pgvector"))
    url = admin.url.set(database="memconsole_pgvector").render_as_string(hide_password=False)
    with pytest.warns(UserWarning, match="btree_gin is not available"):  # pgserver ships no btree_gin
        _migrate(url)
    yield url
    admin.dispose()
    server.cleanup()


@pytest.fixture
def database_url(pgvector_template):
    """This module's app runs on the pgvector server (the `app` fixture takes its URL from here)."""
    yield pgvector_template
    engine = sa.create_engine(pgvector_template)
    with engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL session_replication_role = replica"))
        conn.execute(sa.text(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE"))
        # Indexes built by a test's embedding job are not the next test's.
        for name in conn.execute(sa.text("SELECT indexname FROM pg_indexes WHERE indexname LIKE '%hnsw%'")):
            conn.execute(sa.text(f"DROP INDEX {name[0]}"))
    engine.dispose()
    pgvector.forget()


@pytest.fixture(autouse=True)
def every_agent(app, monkeypatch):
    """VECTOR_SEARCH=pgvector: the index serves every agent, not only those too big for a matrix ("auto",
    the default: its own test below), so these small agents exercise it."""
    monkeypatch.setitem(app.config, "VECTOR_SEARCH", "pgvector")


def stored(memory_id: int) -> tuple[np.ndarray, np.ndarray]:
    """The row's float32 bytes and its pgvector column, as arrays."""
    raw, mirrored = db.session.execute(
        sa.text("SELECT vector, embedding::text FROM memory_embeddings WHERE memory_id = :id"),
        {"id": memory_id},
    ).one()
    return np.frombuffer(raw, dtype="<f4"), np.array(mirrored.strip("[]").split(","), dtype=np.float32)


def test_migration_0020_sets_pgvector_up_where_the_server_has_it(app):
    assert db.session.scalar(sa.text("SELECT extversion FROM pg_extension WHERE extname = 'vector'"))
    assert db.session.scalar(sa.text("SELECT 1 FROM pg_trigger WHERE tgname = 'memory_embeddings_mirror'"))
    assert pgvector._state().column


def test_the_mirror_column_equals_the_stored_bytes_whoever_writes_them(app, make_agent):
    agent = make_agent(role="supervisor")
    memory = remember(agent, "Maya plans to take a counselling certificate")
    rng = np.random.default_rng(5)
    first = rng.standard_normal(384).astype(np.float32)
    first[:4] = [0.0, -0.0, 1e-40, -3.5]  # signed zeros and a subnormal convert exactly too
    db.session.add(
        MemoryEmbedding(
            memory_id=memory.id,
            agent_id=agent.id,
            model="m",
            dims=384,
            content_hash=memory.content_hash,
            vector=first.tobytes(),
        )
    )
    db.session.commit()
    raw, mirrored = stored(memory.id)
    assert np.array_equal(raw, first) and np.array_equal(mirrored, first)

    # Raw SQL, either column: the mirror follows the bytes, never the other way round.
    second = rng.standard_normal(384).astype(np.float32)
    db.session.execute(
        sa.text("UPDATE memory_embeddings SET vector = :v WHERE memory_id = :id"),
        {"v": second.tobytes(), "id": memory.id},
    )
    db.session.execute(
        sa.text("UPDATE memory_embeddings SET embedding = CAST(:e AS vector) WHERE memory_id = :id"),
        {"e": "[" + ",".join(["1"] * 384) + "]", "id": memory.id},
    )
    db.session.commit()
    raw, mirrored = stored(memory.id)
    assert np.array_equal(mirrored, second) and np.array_equal(raw, second)


@pytest.mark.usefixtures("embedder")
def test_the_embedding_job_builds_the_models_hnsw_index_which_memory_query_then_uses(
    app, client, make_agent, monkeypatch
):
    monkeypatch.setattr(query, "DENSE_K", 3)  # pgvector answers only when it finds k: a small agent here
    agent = make_agent(role="supervisor")
    target, decoy, others = paraphrase_set(agent)
    assert not pgvector.usable(LABEL, 64)
    backfill_all()  # the worker's job: vectors stored, then this model's index built
    assert pgvector.usable(LABEL, 64)

    answered = []
    search = pgvector.nearest
    monkeypatch.setattr(pgvector, "nearest", lambda *a, **k: answered.append(search(*a, **k)) or answered[-1])
    monkeypatch.setattr(vectors, "cache", lambda: pytest.fail("the matrix was searched"))
    # The paraphrase shares no content word with its target: found through the index.
    assert ask(client, agent, QUESTION)[0] == target.id
    assert answered and answered[-1] is not None and answered[-1][0][0] == target.id

    # VECTOR_SEARCH=matrix: the index stays, memory.query searches the matrix.
    monkeypatch.setitem(app.config, "VECTOR_SEARCH", "matrix")
    assert (
        not pgvector.usable(LABEL, 64)
        and pgvector.nearest(agent.id, LABEL, concept_vector(QUESTION), 3) is None
    )
    monkeypatch.setitem(app.config, "VECTOR_SEARCH", "pgvector")

    # And the index can serve the statement: its expression and predicate are the search's own.
    db.session.execute(sa.text("SET LOCAL enable_seqscan = off"))
    db.session.execute(sa.text("SET LOCAL enable_sort = off"))
    plan = "\n".join(
        row[0]
        for row in db.session.execute(
            sa.text("EXPLAIN " + str(pgvector._search(LABEL, 64, user=False))),
            {"q": "[" + ",".join(["0.125"] * 64) + "]", "agent_id": agent.id, "ef": 40, "k": 3},
        )
    )
    assert pgvector.index_name(LABEL, 64) in plan, plan
    db.session.rollback()


@pytest.mark.usefixtures("embedder")
def test_an_agent_never_receives_another_agents_memory_through_pgvector(app, make_agent):
    mine, theirs = make_agent(role="supervisor"), make_agent(role="supervisor")
    own = [remember(mine, f"Maya wants to travel to Lisbon, trip {n}", user_id="u1") for n in range(4)]
    other_user = [
        remember(mine, f"Maya hopes to study a counselling course {n}", user_id="u2") for n in range(4)
    ]
    foreign = {remember(theirs, QUESTION, user_id="u1").id, remember(theirs, "She would like to study").id}
    backfill_all()
    vector = concept_vector(QUESTION)
    # The other agent holds the question word for word: it is never among this agent's nearest.
    ids, scores = pgvector.nearest(mine.id, LABEL, vector, 8)
    assert set(ids) == {m.id for m in own + other_user} and scores == sorted(scores, reverse=True)
    ids, _ = pgvector.nearest(mine.id, LABEL, vector, 4, user_id="u1")
    assert set(ids) == {m.id for m in own}
    assert set(pgvector.nearest(theirs.id, LABEL, vector, 2)[0]) == foreign
    # Fewer than k of this agent's: no answer (the matrix searches instead), never someone else's.
    assert pgvector.nearest(mine.id, LABEL, vector, 9) is None
    assert set(vectors.nearest(mine.id, LABEL, np.array(vector, dtype=np.float32), 50)[0]).isdisjoint(foreign)


@pytest.mark.usefixtures("embedder")
def test_deleted_memories_and_stale_vectors_are_not_candidates(app, make_agent):
    agent = make_agent(role="supervisor")
    memories = [remember(agent, f"Maya hopes to study a counselling course {n}") for n in range(5)]
    backfill_all()
    vector = concept_vector(QUESTION)
    soft_delete_memories(agent.id, [memories[0].id], actor="agent", reason="test")
    update_memory(agent.id, memories[1].id, actor="agent", content="Maya booked a flight to Lisbon")
    db.session.commit()
    # memories[1]'s stored vector is of its old content until the worker re-embeds it.
    ids, _ = pgvector.nearest(agent.id, LABEL, vector, 3)
    assert set(ids) == {m.id for m in memories[2:]}
    assert pgvector.nearest(agent.id, LABEL, vector, 4) is None


@pytest.mark.usefixtures("embedder")
def test_the_pgvector_command_sets_up_a_server_that_got_pgvector_later(app, runner, make_agent):
    agent = make_agent(role="supervisor")
    remember(agent, "Maya plans to take a counselling certificate")
    backfill_all()
    # As before migration 0020 found pgvector: no column, no trigger, no index.
    db.session.execute(sa.text("DROP TRIGGER memory_embeddings_mirror ON memory_embeddings"))
    db.session.execute(sa.text("ALTER TABLE memory_embeddings DROP COLUMN embedding"))
    db.session.commit()
    pgvector.forget()
    assert not pgvector.usable(LABEL, 64)

    result = runner.invoke(args=["embeddings", "pgvector"])
    assert result.exit_code == 0, result.output
    assert "1 stored vectors copied, 1 HNSW index(es) built" in result.output
    assert pgvector.usable(LABEL, 64)
    (memory_id,) = db.session.scalars(sa.select(MemoryEmbedding.memory_id)).all()
    raw, mirrored = stored(memory_id)
    assert np.array_equal(raw, mirrored)
    db.session.commit()
    # Idempotent, and then takes no table lock (run on a live server, it must not queue behind readers).
    result = runner.invoke(args=["embeddings", "pgvector"])
    assert result.exit_code == 0 and "0 stored vectors copied" in result.output


@pytest.mark.usefixtures("embedder")
def test_auto_asks_pgvector_for_agents_too_big_for_a_matrix_and_not_again_after_it_found_too_few(
    app, make_agent, monkeypatch
):
    monkeypatch.setitem(app.config, "VECTOR_SEARCH", "auto")
    agent = make_agent(role="supervisor")
    for n in range(4):
        remember(agent, f"Maya hopes to study a counselling course {n}", user_id="u1")
    backfill_all()
    vector = concept_vector(QUESTION)
    # Four vectors of 64 dimensions: far inside VECTOR_CACHE_MB, so the matrix searches them.
    assert not pgvector.serves(agent.id, LABEL, 64) and pgvector.nearest(agent.id, LABEL, vector, 2) is None
    # A budget smaller than the agent's matrix (the count is cached: forget it first).
    monkeypatch.setitem(app.config, "VECTOR_CACHE_MB", 0.0005)
    pgvector.forget()
    assert pgvector.serves(agent.id, LABEL, 64)
    assert len(pgvector.nearest(agent.id, LABEL, vector, 2)[0]) == 2
    # Fewer than k found for this agent and user: not asked again for a while; other users still are.
    assert pgvector.nearest(agent.id, LABEL, vector, 5, user_id="u1") is None
    assert not pgvector.serves(agent.id, LABEL, 64, "u1") and pgvector.serves(agent.id, LABEL, 64)


@pytest.mark.usefixtures("embedder")
def test_an_index_build_that_failed_half_way_or_must_wait_is_retried(app, make_agent, monkeypatch):
    agent = make_agent(role="supervisor")
    remember(agent, "Maya plans to take a counselling certificate")
    backfill_all()
    name = pgvector.index_name(LABEL, 64)
    # A CONCURRENTLY build that failed leaves its index invalid: not used, and rebuilt on the next call.
    db.session.execute(
        sa.text(f"UPDATE pg_index SET indisvalid = false WHERE indexrelid = '{name}'::regclass")
    )
    db.session.commit()
    pgvector.forget()
    assert not pgvector.usable(LABEL, 64)
    assert pgvector.ensure_index(LABEL, 64) and pgvector.usable(LABEL, 64)

    # A build that would wait for another transaction writing the table gives up, and is not retried at once.
    db.session.execute(sa.text(f"DROP INDEX {name}"))
    db.session.commit()
    pgvector.forget()
    monkeypatch.setattr(pgvector, "LOCK_WAIT", "200ms")
    with db.engine.connect() as writer:
        writer.execute(sa.text("UPDATE memory_embeddings SET created_at = created_at"))  # left uncommitted
        assert not pgvector.ensure_index(LABEL, 64)
        assert pgvector._state().retry_at > time.monotonic()  # not tried again within STATE_SECONDS
        assert not pgvector.ensure_index(LABEL, 64)
        writer.rollback()
    pgvector.forget()
    assert pgvector.ensure_index(LABEL, 64) and pgvector.usable(LABEL, 64)
