"""memory.query's candidates keep the newest matches whichever route finds them
(models/retrieval/matching.py: `plan` chooses, `lexical_pool` builds).

On PostgreSQL a question's words take a route by how many memories they match in the whole table: every
match ranked ("exact"); the rare words' matches plus the newest of the common words' sorted out of them
all ("sorted"); or the newest found by walking the agent's newest memories, with the sorted fetch as the
fallback when they hold too few ("walk"). The limits are shrunk here so a handful of memories takes each
route, and the memories are written oldest first, so that a route taking the first matches it reads on
disk instead of the newest would return the oldest ones. SQLite has one route; the same expectations
hold there.
"""

from __future__ import annotations

import importlib
import sqlite3
import time
from datetime import timedelta

import pytest
import sqlalchemy as sa

from jobs import embeddings
from models import db
from models.changes.mutations import create_memory
from models.db import utcnow
from models.retrieval import matching, query, ranking, term_stats
from models.retrieval.filters import EQUALITY_FILTERS, FILTERS
from models.retrieval.matching import Plan, plan
from tests.models.retrieval.retrieval_support import backfill_all, remember
from tests.sql_statements import never_analyzed, sqlite_plan, statements_sent

TOP = 3
DB_MODULE = importlib.import_module("models.db")  # the module: `models.db` as an attribute is the handle


def test_plan_ranks_every_match_while_the_words_are_rare():
    assert plan(["kayak", "trip"], {"kayak": 10, "trip": 20}) == Plan("exact", ["kayak", "trip"], [])


def test_plan_splits_rare_words_from_common_ones_and_sorts_or_walks_by_their_matches():
    limit = matching.EXACT_LIMIT
    assert plan(["user", "kayak"], {"user": limit, "kayak": 5}) == Plan("sorted", ["kayak"], ["user"])
    rare = {"user": matching.RARE_LIMIT, "kayak": matching.RARE_LIMIT, "trip": 1}  # kayak: over RARE_LIMIT
    assert plan(["user", "kayak", "trip"], rare) == Plan("sorted", ["trip"], ["user", "kayak"])
    many = {"user": matching.SORT_LIMIT + 1, "kayak": 5}
    assert plan(["user", "kayak"], many) == Plan("walk", ["kayak"], ["user"])
    assert plan(["user"], {"user": limit + 1}) == Plan("sorted", [], ["user"])


def test_plan_sorts_a_users_matches_when_the_users_share_of_the_table_holds_few_of_them():
    many = {"user": matching.SORT_LIMIT * 10, "kayak": 5}
    assert plan(["user", "kayak"], many).route == "walk"
    assert plan(["user", "kayak"], many, share=0.05) == Plan("sorted", ["kayak"], ["user"])
    assert plan(["user", "kayak"], many, share=0.2).route == "walk"


@pytest.fixture
def small_limits(monkeypatch):
    monkeypatch.setattr(matching, "EXACT_LIMIT", 4)
    monkeypatch.setattr(matching, "RARE_LIMIT", 2)
    monkeypatch.setattr(matching, "WINDOW", 10)
    monkeypatch.setattr(matching, "SORT_LIMIT", 12)
    monkeypatch.setattr(matching, "POOL_ANY", TOP)
    monkeypatch.setattr(matching, "WALK_ENOUGH", TOP - 1)
    monkeypatch.setattr(matching, "POOL_ALL", TOP)
    query.statement.cache_clear()
    term_stats.forget()
    yield
    query.statement.cache_clear()
    term_stats.forget()


def seed(agent, matches: int, newer: int = 0, user_id: str | None = None) -> list[int]:
    """`matches` memories holding "kayak" (and as many without it), written oldest first, then `newer`
    memories without it, newer than all of them; all of `user_id`. Returns the matching ids, newest
    first."""
    ids = []
    now = utcnow()
    mine = {"category": "profile", "user_id": user_id}
    for n in range(newer):
        create_memory(agent.id, f"The piano lesson number {n} moved", actor="agent", **mine)
    for n in range(matches):
        kayak = create_memory(agent.id, f"The kayak trip number {n} went well", actor="agent", **mine)
        other = create_memory(agent.id, f"The garden plan number {n} changed", actor="agent", **mine)
        for memory in (kayak, other):
            db.session.execute(
                sa.text("UPDATE agent_memories SET updated_at = :at WHERE id = :id"),
                {"at": now - timedelta(minutes=matches - n), "id": memory.id},
            )
        ids.append(kayak.id)
    db.session.commit()
    ids.reverse()
    if db.engine.dialect.name == "postgresql":
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(sa.text("VACUUM ANALYZE agent_memories"))
    return ids


def ask(agent, question: str = "Where did the kayak go?", user_id: str | None = None) -> list[int]:
    filters = {"user_id": user_id} if user_id else None
    hits = query.search(agent.id, text=question, categories=["profile"], filters=filters, top_k=TOP)
    return [h.id for h in hits]


@pytest.mark.parametrize(
    ("matches", "newer"),
    [
        pytest.param(3, 0, id="exact"),
        pytest.param(8, 0, id="sorted"),
        pytest.param(20, 0, id="walk-newest-among-the-newest-memories"),
    ],
)
def test_a_common_word_finds_its_newest_matches_on_every_route(app, make_agent, small_limits, matches, newer):
    agent = make_agent(role="supervisor")
    newest_first = seed(agent, matches, newer)
    assert ask(agent) == newest_first[:TOP]


def test_the_walk_falls_back_to_sorting_when_the_newest_memories_hold_too_few(app, make_agent, small_limits):
    """Another agent's matches make the word common in the table (the route is chosen for the table), so
    this agent's question walks; its newest 10 memories hold no match, so the fallback sorts its 8
    matches: still the newest, and never the other agent's."""
    other = make_agent(role="supervisor")
    theirs = set(seed(other, 10))
    agent = make_agent(role="supervisor")
    newest_first = seed(agent, 8, newer=20)
    if db.engine.dialect.name == "postgresql":
        figures = term_stats.bm25_params(["kayak"], ["kayak"])
        assert plan(["kayak"], figures.matches).route == "walk"
    hits = ask(agent)
    assert hits == newest_first[:TOP]
    assert not theirs & set(hits)


def _explained(statement: str, parameters: object) -> list[str]:
    rows = db.session.connection().exec_driver_sql(
        f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {statement}", parameters
    )
    return [row[0] for row in rows]


@pytest.mark.parametrize("matches", [pytest.param(8, id="fits"), pytest.param(20, id="more-than-estimated")])
def test_a_users_question_sorts_the_users_matches_and_walks_only_when_there_are_more_than_estimated(
    app, make_agent, small_limits, monkeypatch, matches
):
    """Another user's matches make "kayak" common, so without a user the question walks; with one, the
    user's share of the table (estimated: here far too low, 1%) makes their matches look few, and the
    route sorts them. Up to SORT_LIMIT (12) they are all sorted; past it (20), sorting the first 12
    fetched would miss newer ones, so the walk takes over. Either way: the user's newest, and the walk
    runs only in the second case."""
    agent = make_agent(role="supervisor")
    seed(agent, 20, user_id="bob")
    newest_first = seed(agent, matches, user_id="ann")
    monkeypatch.setattr(term_stats, "user_share", lambda user_id: 0.01)
    if db.engine.dialect.name == "postgresql":
        figures = term_stats.bm25_params(["kayak"], ["kayak"])
        assert plan(["kayak"], figures.matches).route == "walk"
        assert plan(["kayak"], figures.matches, term_stats.user_share("ann")).route == "sorted"
    with statements_sent("AS leaders") as sent:
        assert ask(agent, user_id="ann") == newest_first[:TOP]
    if db.engine.dialect.name == "postgresql":
        (walk,) = [line for line in _explained(*sent[0]) if "Subquery Scan on newest_memories" in line]
        assert ("never executed" in walk) == (matches <= matching.SORT_LIMIT)


def test_a_users_share_of_the_memories_comes_from_the_column_statistics(app, make_agent):
    """term_stats.user_share: ann holds 30 of 40 memories, bob 10, nobody none; without the user-led
    full-text index (migration 0019) a user's matches could not be fetched alone: 1.0, as for the agent."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's column statistics")
    agent = make_agent(role="supervisor")
    seed(agent, 15, user_id="ann")
    seed(agent, 5, user_id="bob")
    total = db.session.scalar(sa.text("SELECT count(*) FROM agent_memories"))
    term_stats.forget()
    assert term_stats.user_share("ann") == pytest.approx(30 / total, rel=0.01)
    assert term_stats.user_share("bob") == pytest.approx(10 / total, rel=0.01)
    assert term_stats.user_share("nobody") == pytest.approx(0.0, abs=0.01)
    db.session.execute(sa.text("DROP INDEX agent_memories_agent_user_fts"))  # undone by the rollback
    term_stats.forget()
    assert term_stats.user_share("ann") == 1.0
    db.session.rollback()
    term_stats.forget()


def test_a_rare_words_old_match_is_never_crowded_out_by_common_words(app, make_agent, small_limits):
    """The oldest memory is the only one holding "zebra" (rare), and not "kayak" (common: 20 newer
    matches, past every limit): it is among the candidates only through the rare word's matches — it is
    neither among the newest matches nor holding every word — and first."""
    agent = make_agent(role="supervisor")
    old = create_memory(agent.id, "The zebra trip went well", actor="agent", category="profile")
    db.session.execute(
        sa.text("UPDATE agent_memories SET updated_at = :at WHERE id = :id"),
        {"at": utcnow() - timedelta(days=30), "id": old.id},
    )
    db.session.commit()
    seed(agent, 20)
    if db.engine.dialect.name == "postgresql":
        figures = term_stats.bm25_params(["zebra", "kayak"], ["zebra", "kayak"])
        assert plan(["zebra", "kayak"], figures.matches) == Plan("walk", ["zebra"], ["kayak"])
    assert ask(agent, "Where did the zebra kayak go?")[0] == old.id


def test_every_process_samples_the_same_average_length_so_the_same_question_gets_the_same_answer(
    app, make_agent, monkeypatch
):
    """BM25's average memory length comes from a sample of the table's pages, cached per process: a random
    sample gave each gunicorn worker its own figure, and (with fusion "rrf", where the lexical ranks
    count) 2 to 6 of 600 top-5 answers depended on which worker asked (bench.nl_latency's 100k questions,
    ad hoc). Sampled REPEATABLE, every process reads the same pages."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's sampled figure (SQLite's FTS5 keeps its own)")
    agent = make_agent(role="supervisor")
    for n in range(40):
        create_memory(
            agent.id, f"Memory {n} " + "with more words " * (n % 7), actor="agent", category="profile"
        )
    db.session.commit()
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("ANALYZE agent_memories"))
    # A table "of MIN_ROWS or more" whose sample is a few percent of its pages: some samples hold none.
    monkeypatch.setattr(term_stats, "MIN_ROWS", 10)
    monkeypatch.setattr(term_stats, "LENGTH_SAMPLE", 5)
    figures = set()
    for _ in range(50):
        term_stats.forget()
        figures.add(term_stats._postgresql_table(term_stats._key(), time.monotonic()).avgdl)
    term_stats.forget()
    assert len(figures) == 1, figures


def test_the_routes_agree_with_ranking_every_match(app, make_agent, monkeypatch):
    """The same memories ranked with every match scored (limits out of reach), then through the walk
    with a window too small (the fallback) and large enough."""
    agent = make_agent(role="supervisor")
    seed(agent, 8, newer=20)
    question = "Which kayak trip went well?"
    query.statement.cache_clear()
    exact = ask(agent, question)
    for window in (10, 40):
        monkeypatch.setattr(matching, "EXACT_LIMIT", 4)
        monkeypatch.setattr(matching, "RARE_LIMIT", 2)
        monkeypatch.setattr(matching, "WINDOW", window)
        monkeypatch.setattr(matching, "SORT_LIMIT", 6)
        monkeypatch.setattr(matching, "POOL_ANY", TOP)
        monkeypatch.setattr(matching, "WALK_ENOUGH", TOP - 1)
        query.statement.cache_clear()
        term_stats.forget()
        assert ask(agent, question) == exact
    query.statement.cache_clear()


def test_the_full_text_index_leads_with_the_agent_and_the_user(app):
    """Migrations 0018 and 0019: on PostgreSQL an agent's search reads its own posting lists, not every
    agent's, and a user's its own user's too; the words-only index stays beside it (for agents holding
    most of the table, and term_stats)."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("the GIN indexes are PostgreSQL's")
    indexes = dict(
        db.session.execute(
            sa.text("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'agent_memories'")
        ).all()
    )
    assert "gin (fts_vector)" in indexes["agent_memories_fts"]
    available = db.session.scalar(
        sa.text("SELECT count(*) FROM pg_available_extensions WHERE name = 'btree_gin'")
    )
    assert "agent_memories_agent_fts" not in indexes  # 0019 replaced it
    if not available:  # the migration warned and kept the words-only index
        assert "agent_memories_agent_user_fts" not in indexes
        return
    definition = indexes["agent_memories_agent_user_fts"]
    assert "gin (agent_id, user_id, fts_vector)" in definition and "deleted_at IS NULL" in definition


def test_sqlite_searches_its_full_text_index_once_per_question_not_once_per_memory(app, make_agent):
    """On a database never ANALYZEd, joining agent_memories to its FTS5 index let SQLite walk the user's
    memories along their recency index and run the whole full-text query once per memory (140 ms a
    question at 2,500 memories, bench.peers); the matches are now a list built once."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's FTS5 plan")
    agent = make_agent(role="supervisor")
    for n in range(60):
        create_memory(agent.id, f"Note {n} about the garden", actor="agent", category="profile", user_id="u1")
    create_memory(
        agent.id, "Maya plans a counselling course", actor="agent", category="profile", user_id="u1"
    )
    assert never_analyzed()
    term_stats.names_agent(agent.id)  # the agent's share of the index: counted once, cached, not a question's
    with statements_sent("agent_memories_fts MATCH") as statements:
        for filters in ({"user_id": "u1"}, None):
            hits = query.search(
                agent.id, text="What course does Maya plan?", categories=["profile"], filters=filters
            )
            assert [h.content for h in hits][:1] == ["Maya plans a counselling course"]
    assert len(statements) == 2
    for statement, parameters in statements:
        steps = sqlite_plan(statement, parameters)
        # "INDEX 0:=M...": FTS5 asked for one rowid's match, i.e. once for every row of the outer loop.
        assert not [s for s in steps if "agent_memories_fts VIRTUAL TABLE INDEX 0:=" in s], steps


def test_sqlite_scores_every_candidate_in_one_full_text_pass_by_every_word_of_the_question(app, make_agent):
    """FTS5's bm25() sums its phrases, each with its whole-index idf: scoring the candidates once by the
    search terms OR the other words gives each the score of the words it holds — what scoring them twice,
    by the search terms and by the terms AND the other words, and keeping the better, gave."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's FTS5 scoring")
    agent = make_agent(role="supervisor")
    contents = [
        "Maya plans the counselling course",
        "Maya plans a trip",
        "the course is long",
        "garden notes",
    ]
    for content in contents + [f"Note {n} about the garden" for n in range(20)]:
        create_memory(agent.id, content, actor="agent", category="profile")
    question = "What course does Maya plan with the counsellor?"
    with statements_sent("bm25(") as ranking:
        hits = query.search(agent.id, text=question, categories=["profile"], top_k=10)
    assert len(ranking) == 1 and ranking[0][0].count("FROM agent_memories_fts JOIN agent_memories") == 1

    words = matching.question_words(question)
    terms = matching.search_terms(words)
    others = [w for w in words if w not in terms]
    raw = db.session.connection().connection.driver_connection

    def bm25(match: str) -> dict[int, float]:
        rows = raw.execute(
            "SELECT rowid, -bm25(agent_memories_fts) FROM agent_memories_fts WHERE agent_memories_fts MATCH ?",
            (match,),
        )
        return dict(rows.fetchall())

    by_terms = bm25(matching.match_text("sqlite", terms, every=False))
    by_both = bm25(
        f"({matching.match_text('sqlite', terms, every=False)}) AND ({matching.match_text('sqlite', others, every=False)})"
    )
    expected = {i: max(s, by_both.get(i, s)) for i, s in by_terms.items()}
    best = max(expected.values())
    assert {h.id for h in hits} <= set(expected)
    for hit in hits:  # relevance: the score over the best's
        assert hit.relevance == pytest.approx(expected[hit.id] / best, rel=1e-9)


def test_sqlite_full_text_match_reads_only_the_asking_agents_memories(app, make_agent):
    """FTS5's index holds each memory's agent beside its words (migration 0027): every full-text query of a
    question matches within the asking agent's memories, so none of another agent's is read, however many
    hold the question's words."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's FTS5 index")
    asking, other = make_agent(role="supervisor"), make_agent(role="supervisor")
    for n in range(30):
        create_memory(other.id, f"Maya plans course {n} in the garden", actor="agent", category="profile")
    create_memory(asking.id, "Maya plans a counselling course", actor="agent", category="profile")
    create_memory(asking.id, "Maya sold the kayak", actor="agent", category="profile")
    with statements_sent("agent_memories_fts MATCH") as sent:
        hits = query.search(asking.id, text="What course does Maya plan?", categories=["profile"])
    assert [h.content for h in hits][:1] == ["Maya plans a counselling course"]
    raw = db.session.connection().connection.driver_connection
    own = {row[0] for row in raw.execute("SELECT id FROM agent_memories WHERE agent_id = ?", (asking.id,))}
    queries = [value for _, parameters in sent for value in parameters if "content :" in str(value)]
    assert queries and all(value.startswith(f'agent_id : "{asking.id}" AND ') for value in queries)
    for value in queries:
        matched = {
            row[0]
            for row in raw.execute(
                "SELECT rowid FROM agent_memories_fts WHERE agent_memories_fts MATCH ?", (value,)
            )
        }
        assert matched and matched <= own


def test_sqlite_full_text_match_leaves_out_an_agent_holding_most_of_the_index_and_ranks_alike(
    app, make_agent, monkeypatch
):
    """An agent holding term_stats.AGENT_SHARE of the index's memories or more is not named in its
    questions' full-text matches (its term would be in most rows: a long list to walk for little to skip),
    and ranks as it would named; a smaller agent's matches still name it."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's FTS5 index")
    big, small = make_agent(role="supervisor"), make_agent(role="supervisor")
    for n in range(6):
        create_memory(big.id, f"Maya plans course {n} in the garden", actor="agent", category="profile")
    create_memory(big.id, "Maya plans a counselling course at the college", actor="agent", category="profile")
    create_memory(small.id, "Maya plans a pottery course", actor="agent", category="profile")
    create_memory(small.id, "Maya sold the kayak", actor="agent", category="profile")
    question = "What course does Maya plan at the college?"

    def asked(agent_id: int) -> tuple[list, list[str]]:
        with statements_sent("agent_memories_fts MATCH") as sent:
            hits = query.search(agent_id, text=question, categories=["profile"], top_k=10)
        matches = [str(value) for _, parameters in sent for value in parameters if "content :" in str(value)]
        assert matches
        return [(hit.id, hit.relevance) for hit in hits], matches

    ranked, matches = asked(big.id)
    assert not any(match.startswith("agent_id :") for match in matches)
    assert all(match.startswith(f'agent_id : "{small.id}" AND ') for match in asked(small.id)[1])

    term_stats.forget()
    monkeypatch.setattr(term_stats, "AGENT_SHARE", 1.01)  # no agent holds more than all: each one named
    named, matches = asked(big.id)
    assert all(match.startswith(f'agent_id : "{big.id}" AND ') for match in matches)
    assert [hit_id for hit_id, _ in named] == [hit_id for hit_id, _ in ranked] and len(ranked) == 7
    assert [relevance for _, relevance in named] == pytest.approx([relevance for _, relevance in ranked])


def test_a_number_in_the_question_matches_memories_words_not_an_agents_id(app, make_agent):
    """The index's agent column holds numbers: every query names the words' column, so "room 7" finds the
    memory that says 7, not every memory of agent 7 — nor, counted for a word's weight, theirs."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's FTS5 index")
    agent = make_agent(role="supervisor")
    create_memory(agent.id, "The projector lives in the library", actor="agent", category="profile")
    create_memory(agent.id, f"The meeting moved to room {agent.id + 1}", actor="agent", category="profile")
    hits = query.search(agent.id, text=f"What about {agent.id}?", categories=["profile"])
    assert hits == []  # agent_id's own number is in no memory's words
    hits = query.search(agent.id, text=f"What moved to room {agent.id + 1}?", categories=["profile"])
    assert [h.content for h in hits] == [f"The meeting moved to room {agent.id + 1}"]
    term_stats.forget()  # and the word's weight counts no memory: none says the agent's number
    memories = db.session.scalar(sa.text("SELECT count(*) FROM agent_memories"))
    assert term_stats.sqlite_weight([str(agent.id)]) == term_stats.question_weight([0], memories)


def test_migration_0027_indexes_each_memorys_agent_and_keeps_the_index_in_step(
    database_template, redis_url, tmp_path
):
    """On a SQLite database at 0026 holding a memory: 0027 rebuilds FTS5's index with the agent beside the
    words (the memory still found); its triggers keep both columns in step through an insert, an edit and
    a delete (FTS5's integrity check against agent_memories); the downgrade gives 0026's index back."""
    from flask_migrate import downgrade, upgrade

    from console import create_app
    from tests.conftest import DB_KIND

    if DB_KIND != "sqlite":
        pytest.skip("SQLite's FTS5 index")
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{tmp_path}/m27.sqlite", "REDIS_URL": redis_url,
                      "SECRET_KEY": "test"})  # fmt: skip
    columns = "SELECT name FROM pragma_table_xinfo('agent_memories_fts') WHERE hidden = 0 ORDER BY cid"
    check = "INSERT INTO agent_memories_fts(agent_memories_fts, rank) VALUES ('integrity-check', 1)"
    try:
        with app.app_context():
            upgrade(revision="0026")
            with db.engine.begin() as conn:
                assert conn.scalars(sa.text(columns)).all() == ["content"]
                # Raw SQL at 0026: the models describe the newest schema.
                agent_id = conn.execute(
                    sa.text(
                        "INSERT INTO agents (name, role, core_token_budget, min_retention, mechanic_preconsent, "
                        "active, created_at) VALUES ('m27', 'supervisor', 5000, 0.8, 0, 1, CURRENT_TIMESTAMP)"
                    )
                ).lastrowid
                conn.execute(
                    sa.text(
                        "INSERT INTO agent_memories (agent_id, memory_type, content, content_hash, token_estimate, "
                        "tags, pinned, constitutional, category, created_at, updated_at) VALUES (:a, 'semantic', "
                        "'The kayak trip went well', 'h', 6, '[]', 0, 0, 'profile', CURRENT_TIMESTAMP, "
                        "CURRENT_TIMESTAMP)"
                    ),
                    {"a": agent_id},
                )
            upgrade()
            with db.engine.begin() as conn:
                assert conn.scalars(sa.text(columns)).all() == ["content", "agent_id"]
            term_stats.forget()
            hits = query.search(agent_id, text="kayak trip", categories=["profile"])
            assert [h.content for h in hits] == ["The kayak trip went well"]
            db.session.rollback()
            with db.engine.begin() as conn:
                conn.execute(sa.text(check))
                conn.execute(sa.text("UPDATE agent_memories SET content = 'The canoe trip went well'"))
                conn.execute(sa.text(check))
                conn.execute(sa.text("DELETE FROM agent_memories"))
                conn.execute(sa.text(check))
                assert (
                    conn.scalar(
                        sa.text(
                            "SELECT count(*) FROM agent_memories_fts WHERE agent_memories_fts MATCH 'canoe'"
                        )
                    )
                    == 0
                )
            downgrade(revision="0026")
            with db.engine.begin() as conn:
                assert conn.scalars(sa.text(columns)).all() == ["content"]
                conn.execute(sa.text(check))
            db.engine.dispose()
    finally:
        term_stats.forget()
        query.statement.cache_clear()


def garden_notes(agent_id: int, count: int) -> None:
    """`count` memories of one user ("u1") that no question here matches, newest first, written straight to
    the table (non-constitutional rows): thousands through the mutation path would be slow."""
    now = utcnow()
    db.session.execute(
        sa.text(
            "INSERT INTO agent_memories (agent_id, memory_type, content, content_hash, token_estimate, tags, "
            "category, pinned, constitutional, created_at, updated_at, user_id) VALUES (:agent, 'semantic', "
            ":content, :content, 8, '[]', 'profile', 0, 0, :at, :at, 'u1')"
        ),
        [
            {"agent": agent_id, "content": f"Note {n} about the garden", "at": now - timedelta(minutes=n)}
            for n in range(count)
        ],
    )
    db.session.commit()


def _checked_in() -> None:
    """The session's connection back to the pool (what the end of a request does)."""
    db.session.commit()
    db.session.close()


def test_sqlite_gets_statistics_and_then_looks_one_users_few_matches_up_by_id(app, make_agent, monkeypatch):
    """Without statistics SQLite's planner walks all of a single user's memories for every question
    (models/db.py, `_keep_statistics`); once a connection going back to the pool has run PRAGMA optimize,
    the tables are analyzed and the few matches are looked up by id."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's statistics")
    agent_id = make_agent(role="supervisor").id
    create_memory(
        agent_id, "Maya plans a counselling course", actor="agent", category="profile", user_id="u1"
    )
    garden_notes(agent_id, 2500)
    question = {
        "text": "What course does Maya plan?",
        "categories": ["profile"],
        "filters": {"user_id": "u1"},
    }

    def plan() -> list[str]:
        with statements_sent("agent_memories_fts MATCH") as sent:
            hits = query.search(agent_id, **question)
        assert [h.content for h in hits][:1] == ["Maya plans a counselling course"]
        return sqlite_plan(*sent[0])

    _checked_in()  # within OPTIMIZE_SECONDS of start-up: nothing analyzed yet
    assert never_analyzed()
    term_stats.names_agent(agent_id)  # the agent's share of the index: counted once, cached, not a question's
    assert [s for s in plan() if "USING INDEX ix_agent_memories_agent_user" in s]
    monkeypatch.setattr(DB_MODULE, "OPTIMIZE_SECONDS", 0.0)
    _checked_in()
    assert not never_analyzed()
    steps = plan()
    assert not [s for s in steps if "USING INDEX ix_agent_memories_agent_user" in s], steps


def test_sqlite_gets_statistics_after_a_thousand_changes_without_waiting_a_minute(
    app, make_agent, monkeypatch
):
    """A fresh database filling fast (an import, a new deployment) is analyzed once the process has
    committed OPTIMIZE_WRITES write transactions since the last PRAGMA optimize, well inside
    OPTIMIZE_SECONDS of start-up: its questions are not planned blind for a minute. Transactions that
    only read do not count."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's statistics")
    monkeypatch.setattr(DB_MODULE, "OPTIMIZE_WRITES", 12)
    agent_id = make_agent(role="supervisor").id
    garden_notes(agent_id, 2500)
    question = {"text": "garden", "categories": ["profile"], "filters": {"user_id": "u1"}}
    for _ in range(20):  # reads, each transaction ending with the connection back in the pool
        assert query.search(agent_id, **question)
        _checked_in()
    assert never_analyzed()
    for n in range(12):
        create_memory(agent_id, f"Maya plans course {n}", actor="agent", category="profile", user_id="u1")
        assert query.search(agent_id, **question)
        _checked_in()
    assert not never_analyzed()


def test_sqlite_statistics_wait_for_no_writer(app, make_agent, monkeypatch):
    """PRAGMA optimize needs the write lock to store what ANALYZE found: with another connection writing,
    the connection going back to the pool gives up at once (not after the 30 s busy timeout), and keeps
    its busy timeout for the statements after."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's statistics")
    agent_id = make_agent(role="supervisor").id
    garden_notes(agent_id, 2500)
    query.search(agent_id, text="garden", categories=["profile"], filters={"user_id": "u1"})
    monkeypatch.setattr(DB_MODULE, "OPTIMIZE_SECONDS", 0.0)
    writer = sqlite3.connect(db.engine.url.database, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        _checked_in()
        assert time.monotonic() - started < 5
        assert never_analyzed()
        timeout = db.session.connection().exec_driver_sql("PRAGMA busy_timeout").scalar()
        assert timeout == DB_MODULE.BUSY_TIMEOUT_MS
    finally:
        writer.execute("ROLLBACK")
        writer.close()


# Sixteen words the question is scored by (ranking.WORD_SLOTS), each held by one memory of twenty.
SCORED = (
    "harbour lantern quarry meadow violin ledger orchard compass "
    "granite saddle pottery beacon thistle canoe falcon tapestry"
).split()


@pytest.mark.parametrize("dense", [False, True], ids=["lexical", "hybrid"])
def test_psycopg_keeps_memory_querys_statements_converted(app, make_agent, embedder, dense):
    """psycopg remembers how it turned a statement's placeholders into PostgreSQL's only for statements of
    at most MAX_CACHED_STATEMENT_LENGTH bytes and MAX_CACHED_STATEMENT_PARAMS parameters (4,096 and 50
    as shipped). memory.query's ranking statement is longer, and with vectors, many scored words and
    filters it binds more parameters: the app raises both (models/db.py, `_cache_long_statements`), so a question's
    second run finds the first's conversion in psycopg's cache instead of parsing the statement again.
    Converted here as psycopg converts each statement it executes, both limits applied."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("psycopg's statement cache")
    from psycopg import _queries
    from psycopg.adapt import Transformer

    agent = make_agent(role="supervisor")
    for word in SCORED:
        remember(agent, f"Maya keeps the {word} notes in the blue folder", user_id="maya")
    for number in range(4):
        remember(agent, f"Maya's flight leaves at {number + 6} o'clock", user_id="maya")
    backfill_all()
    question = " ".join(SCORED)
    vector = embeddings.query_vector(question) if dense else None
    # The largest shape: every filter a request may set, each binding a parameter more.
    filters = {name: "x" for name in EQUALITY_FILTERS} | {"user_id": "maya", "pinned": False}
    filters |= {"importance_min": 0, "importance_max": 10}
    filters |= {"updated_after": "2000-01-01", "updated_before": "2100-01-01"}
    assert set(filters) == set(FILTERS)
    with statements_sent("agent_memories") as sent:
        query.search(
            agent.id, text=question, categories=["profile"], filters=filters, dense=vector, bridge=False
        )
    ranking, params = sent[-1]
    assert len(ranking.encode()) > 4096
    if dense:
        assert len(params) > 50  # past psycopg's own limit
    converted = _queries.PostgresQuery(Transformer(db.session.connection().connection.dbapi_connection))
    converted.convert(ranking, params)
    before = _queries._query2pg.cache_info()
    converted.convert(ranking, params)  # what psycopg does when the question is asked again
    after = _queries._query2pg.cache_info()
    assert (after.hits, after.misses) == (before.hits + 1, before.misses)


def _prepared_ranking_statements() -> list[str]:
    rows = db.session.execute(sa.text("SELECT statement FROM pg_prepared_statements")).scalars()
    return [statement for statement in rows if "AS leaders" in statement]


def test_memory_query_keeps_its_statement_prepared_from_one_request_to_the_next(app, client, make_agent):
    """psycopg prepares a statement the fifth time a connection runs it, so PostgreSQL parses it once — but
    forgets all it prepared at a ROLLBACK, and a request used to end with one: the ranking statement was
    parsed for every question. A memory.query request ends with COMMIT (`end_read`), and no statement
    goes before the ranking one to choose how it is planned."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("psycopg's prepared statements")
    app.config["API_FLUSH_SECONDS"] = 3600  # no bookkeeping flush borrowing a second pooled connection
    agent = make_agent(role="supervisor")
    headers = {"Authorization": f"Bearer {agent.issue_token()}"}
    create_memory(agent.id, "Maya plans a counselling course", actor="agent", category="profile")
    db.session.commit()
    db.session.close()
    with statements_sent() as sent:
        for _ in range(10):
            answer = client.post(
                "/api/v1/memory/query", json={"query": "What course does Maya plan?"}, headers=headers
            )
            assert answer.status_code == 200
            assert [r["text"] for r in answer.get_json()["results"]] == [
                "[profile] Maya plans a counselling course"
            ]
            db.session.remove()  # what the request's teardown does outside tests, which share one app context
    ranking = [i for i, (statement, _) in enumerate(sent) if "AS leaders" in statement]
    assert len(ranking) == 10
    assert not any("plan_cache_mode" in statement for statement, _ in sent)
    assert len(_prepared_ranking_statements()) == 1


def _generic_plan(statement: str, parameters: dict) -> list[str]:
    """PostgreSQL's generic plan for a statement the app sent: the plan a prepared statement may keep
    for every value (EXPLAIN VERBOSE of an SQL PREPARE under force_generic_plan)."""
    from psycopg import _queries
    from psycopg import sql as psycopg_sql
    from psycopg.adapt import Transformer

    raw = db.session.connection().connection.dbapi_connection
    converted = _queries.PostgresQuery(Transformer(raw))
    converted.convert(statement, parameters)
    literals = ", ".join(
        psycopg_sql.Literal(None if parameters[name] is None else str(parameters[name])).as_string(raw)
        for name in converted._order  # the names in $n order
    )
    cursor = raw.cursor()
    cursor.execute(b"PREPARE generic_probe AS " + converted.query)
    cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
    plan = [
        row[0] for row in cursor.execute(f"EXPLAIN (VERBOSE, COSTS OFF) EXECUTE generic_probe({literals})")
    ]
    cursor.execute("DEALLOCATE generic_probe")
    return plan


def test_a_generic_plan_builds_the_questions_tsquery_and_category_list_once_not_for_every_row(
    app, make_agent, monkeypatch
):
    """A prepared statement may run on PostgreSQL's generic plan, where a parameter is not a constant: a
    function of one (the tsquery from the question's text, the category list's array from its text) is
    computed for every row that reads it unless the statement computes it once first (a subquery). Built
    per row, the walk route's walk was 2.5x slower (retrieval notes). Every route, every match."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's generic plans")
    agent = make_agent(role="supervisor")
    create_memory(agent.id, "Maya plans a counselling course", actor="agent", category="profile")
    routes = {
        "exact": lambda terms, matches, share=1.0: Plan("exact", list(terms), []),
        "sorted": lambda terms, matches, share=1.0: Plan("sorted", list(terms[:1]), list(terms[1:])),
        # As if the words were common:
        "walk": lambda terms, matches, share=1.0: Plan("walk", [], list(terms)),
    }
    for route, planned in routes.items():
        monkeypatch.setattr(query, "plan", planned)
        with statements_sent("AS leaders") as sent:
            hits = query.search(agent.id, text="What course does Maya plan?", categories=["profile"])
        assert [h.content for h in hits] == ["Maya plans a counselling course"], route
        plan_lines = _generic_plan(*sent[0])
        matching_lines = [line for line in plan_lines if "fts_vector @@" in line]
        assert matching_lines, route
        assert not [line for line in matching_lines if "websearch_to_tsquery" in line], route
        assert not [line for line in plan_lines if "category" in line and "::text[]" in line], route
        db.session.rollback()


def test_questions_scoring_different_numbers_of_words_share_one_statement_and_score_alike(
    app, make_agent, monkeypatch
):
    """PostgreSQL scores a question's words in slots, and every slot count is a statement of its own that
    each connection prepares and plans apart. The count is rounded up (ranking.SLOT_STEPS), the extra
    slots NULL: questions of 2 to 8 scoring words share one statement, and every score is the one the
    exact count gives."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's word slots")
    agent = make_agent(role="supervisor")
    for content in (
        "Maya plans a counselling course in Lisbon next spring",
        "Maya drinks green tea while reading about counselling",
        "The budget report for the Lisbon office is due before the client meeting",
        "Joao prefers strong coffee over tea in the morning",
    ):
        create_memory(agent.id, content, actor="agent", category="profile")
    db.session.commit()
    asked = [
        "Maya course?",
        "Which course does Maya plan in Lisbon?",
        "What does Maya drink while reading about counselling before the Lisbon course?",
    ]
    now = utcnow()  # recency is computed up to it

    def ranked(question: str) -> tuple[str, int, list[tuple[int, float, float]]]:
        with statements_sent("AS leaders") as sent:
            # The one statement's scores: no second hop (its memories carry no relevance).
            hits = query.search(
                agent.id, text=question, categories=["profile"], top_k=4, now=now, bridge=False
            )
        statement, parameters = sent[0]
        words = parameters["s_terms"].count(",") + 1
        return statement, words, [(h.id, round(h.relevance, 9), round(h.score, 9)) for h in hits]

    rounded = [ranked(question) for question in asked]
    assert len({words for _, words, _ in rounded}) == 3  # three word counts...
    assert all(words <= 8 for _, words, _ in rounded)
    assert len({statement for statement, _, _ in rounded}) == 1  # ...one statement
    assert all(hits for _, _, hits in rounded)
    monkeypatch.setattr(ranking, "SLOT_STEPS", tuple(range(1, ranking.WORD_SLOTS + 1)))
    exact = [ranked(question) for question in asked]
    assert len({statement for statement, _, _ in exact}) == 3
    assert [hits for _, _, hits in exact] == [hits for _, _, hits in rounded]


def test_migration_0019_swaps_the_agent_led_index_for_the_user_led_one_and_back(database_template, redis_url):
    """On a database at 0018 holding a memory: 0019 replaces `agent_memories_agent_fts` by
    `agent_memories_agent_user_fts` (the memory still found, by its user too); the downgrade restores
    0018's index."""
    from flask_migrate import downgrade, upgrade

    from console import create_app
    from tests.conftest import DB_KIND, scratch_database

    if DB_KIND != "postgresql":
        pytest.skip("the GIN indexes are PostgreSQL's")
    with scratch_database("m19") as url:
        app = create_app({"TESTING": True, "DATABASE_URL": url, "REDIS_URL": redis_url, "SECRET_KEY": "test"})
        full_text = "SELECT indexname FROM pg_indexes WHERE tablename = 'agent_memories' AND indexname LIKE '%fts' ORDER BY 1"
        try:
            with app.app_context():
                upgrade(revision="0018")
                with db.engine.begin() as conn:
                    agent_led = conn.scalars(sa.text(full_text)).all()
                # Raw SQL at 0018: the models describe the newest schema (agents.memory_count: 0021).
                with db.engine.begin() as conn:
                    agent_id = conn.scalar(
                        sa.text(
                            "INSERT INTO agents (name, role, core_token_budget, min_retention, mechanic_preconsent, "
                            "active, created_at) VALUES ('m19', 'supervisor', 5000, 0.8, false, true, now()) RETURNING id"
                        )
                    )
                    conn.execute(
                        sa.text(
                            "INSERT INTO agent_memories (agent_id, memory_type, content, content_hash, token_estimate, "
                            "tags, pinned, constitutional, category, user_id, created_at, updated_at) VALUES (:a, "
                            "'semantic', 'The kayak trip went well', 'h', 6, '[]', false, false, 'profile', 'ann', "
                            "now(), now())"
                        ),
                        {"a": agent_id},
                    )
                if "agent_memories_agent_fts" not in agent_led:
                    pytest.skip("btree_gin is not available here: neither 0018 nor 0019 builds its index")
                upgrade()
                with db.engine.begin() as conn:
                    assert conn.scalars(sa.text(full_text)).all() == [
                        "agent_memories_agent_user_fts",
                        "agent_memories_fts",
                    ]
                term_stats.forget()
                for filters in (None, {"user_id": "ann"}):
                    hits = query.search(agent_id, text="kayak trip", categories=["profile"], filters=filters)
                    assert [h.content for h in hits] == ["The kayak trip went well"]
                db.session.rollback()
                downgrade(revision="0018")
                with db.engine.begin() as conn:
                    assert conn.scalars(sa.text(full_text)).all() == agent_led
                db.engine.dispose()
        finally:
            term_stats.forget()
            query.statement.cache_clear()
