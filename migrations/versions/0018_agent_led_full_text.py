"""agent-led full text: memory.query's full-text index leads with the agent

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26

memory.query always searches one agent's memories, but the GIN index over `fts_vector` (0003, 0007,
0017) held every agent's: a word's posting list named the memories of all agents, and a search read
them all before the agent filter threw most away. Its cost grew with the other agents' memories
(bench.scale: 11.6 ms at 1M memories of 10,000 agents, 65.8 ms at 10M of 100,000, for the same agent).

PostgreSQL only: a second GIN index, over (agent_id, fts_vector), still over active rows and without a
pending list. `btree_gin` (a contrib extension Debian's PostgreSQL packages ship, trusted since
PostgreSQL 13: a database owner may create it) gives GIN its integer operator class; GIN intersects the
agent's posting list with the words', so a search reads about what it returns. The words-only index
stays: when one agent holds most of the table, its posting list is most of the table too, and walking
it costs more than filtering (7.9 ms against 0.5 ms for one question's bitmap at a million memories of
one agent, EXPLAIN ANALYZE); the planner weighs the two by the agent's share (column statistics) and
takes the cheaper. term_stats.py's whole-table word counts use the words-only one.

Where btree_gin cannot be created (not installed, or no CREATE right on the database), nothing changes
and the migration says so in a warning: memory.query is correct either way, slower with many agents.
Building the index reads the table once: 4.3 s at a million memories here.
"""

import warnings

from alembic import op
from sqlalchemy import text

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

AGENT_LED = (
    "CREATE INDEX agent_memories_agent_fts ON agent_memories USING gin (agent_id, fts_vector)"
    " WITH (fastupdate = off) WHERE deleted_at IS NULL"
)


def _btree_gin() -> bool:
    """Whether btree_gin is, or could just be, created; tried in a savepoint so a refusal leaves the
    migration's transaction usable."""
    bind = op.get_bind()
    if bind.execute(text("SELECT 1 FROM pg_available_extensions WHERE name = 'btree_gin'")).first() is None:
        return False
    savepoint = bind.begin_nested()
    try:
        bind.execute(text("CREATE EXTENSION IF NOT EXISTS btree_gin"))
    except Exception as error:  # noqa: BLE001 - any refusal means: keep the old index
        savepoint.rollback()
        warnings.warn(f"btree_gin could not be created ({error.__class__.__name__}); the full-text index stays words-only")
        return False
    savepoint.commit()
    return True


def upgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    if not _btree_gin():
        warnings.warn("btree_gin is not available: memory.query's full-text index stays words-only (slower with many agents)")
        return
    op.execute(AGENT_LED)


def downgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP INDEX IF EXISTS agent_memories_agent_fts")
    # The extension stays: another schema object may use it, and it costs nothing unused.
