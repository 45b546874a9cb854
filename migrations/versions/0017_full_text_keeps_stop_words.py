"""full text keeps stop words: memory.query scores every word of a question with BM25

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26

memory.query's lexical relevance is BM25 over every word of the question, stop words included (they
weigh little, by their idf, but they do weigh: models/retrieval/ranking.py); the memories are still
found by the question's other words (models/retrieval/matching.py). SQLite's FTS5 index
(`porter unicode61`) keeps every word already. PostgreSQL's stored `fts_vector` was
to_tsvector('english', content), and the 'english' configuration drops its stop words ("is", "her",
"s" of "Maya's"), so they could neither be scored nor searched there.

PostgreSQL only: a text-search configuration `memconsole_english`, a copy of 'english' whose snowball
stemmer keeps stop words (the same stems otherwise), and `fts_vector` generated with it, with its
partial GIN index (0007) rebuilt, and the table analyzed (memory.query reads the column's statistics).
Changing a generated column's expression rewrites the table: 1.9 s at 100,000 memories here, so
expect tens of seconds at a million.
"""

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

GIN = "CREATE INDEX agent_memories_fts ON agent_memories USING gin (fts_vector) WITH (fastupdate = off) WHERE deleted_at IS NULL"


def _fts_vector(config: str) -> list[str]:
    return [
        "DROP INDEX IF EXISTS agent_memories_fts",
        "ALTER TABLE agent_memories DROP COLUMN fts_vector",
        "ALTER TABLE agent_memories ADD COLUMN fts_vector tsvector"
        f" GENERATED ALWAYS AS (to_tsvector('{config}'::regconfig, content)) STORED",
        GIN,
    ]


def upgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "CREATE TEXT SEARCH DICTIONARY memconsole_english_stem (TEMPLATE = snowball, Language = english)"
    )
    op.execute("CREATE TEXT SEARCH CONFIGURATION memconsole_english (COPY = english)")
    op.execute(
        "ALTER TEXT SEARCH CONFIGURATION memconsole_english"
        " ALTER MAPPING REPLACE english_stem WITH memconsole_english_stem"
    )
    for statement in _fts_vector("memconsole_english"):
        op.execute(statement)
    # The new column has no statistics until ANALYZE; memory.query reads them (models/retrieval/term_stats.py).
    op.execute("ANALYZE agent_memories")


def downgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    for statement in _fts_vector("english"):
        op.execute(statement)
    op.execute("DROP TEXT SEARCH CONFIGURATION memconsole_english")
    op.execute("DROP TEXT SEARCH DICTIONARY memconsole_english_stem")
