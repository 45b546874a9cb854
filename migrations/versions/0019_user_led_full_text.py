"""user-led full text: memory.query's agent-led full-text index gains the user

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27

Nearly every memory.query call names a user (`user_id`, docs/spec/003-memory-system.md §6.1). The
agent-led GIN index of 0018, over (agent_id, fts_vector), finds the agent's matches of a word, not the
user's: for a user holding a fiftieth of an agent's million memories, fetching the user's newest matches
of a common word through it read every user's until enough were the user's (162 ms at p95, ad hoc), so
memory.query walked the user's newest memories instead, a heap page each (models/retrieval/matching.py;
p95 22-28 ms over four runs, bench/results/retrieval_notes.section.md).

PostgreSQL only: the index becomes `agent_memories_agent_user_fts`, over (agent_id, user_id, fts_vector),
still over active rows and without a pending list. GIN keeps each column's keys apart, so a search with
no user reads the same posting lists as before (the agent's and the words'), and one with a user
intersects the user's too. memory.query estimates a user's matches from the column's statistics
(models/retrieval/term_stats.py, `user_share`) and sorts them out of this index when they are few.

Only where 0018 built its index (btree_gin was there); elsewhere nothing changes. Building the index reads
the table once (seconds at a million memories; writes wait meanwhile, as in 0018).
"""

from alembic import op
from sqlalchemy import text

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

USER_LED = (
    "CREATE INDEX agent_memories_agent_user_fts ON agent_memories USING gin (agent_id, user_id, fts_vector)"
    " WITH (fastupdate = off) WHERE deleted_at IS NULL"
)
AGENT_LED = (
    "CREATE INDEX agent_memories_agent_fts ON agent_memories USING gin (agent_id, fts_vector)"
    " WITH (fastupdate = off) WHERE deleted_at IS NULL"
)


def _has_index(name: str) -> bool:
    return (
        op.get_bind().execute(
            text("SELECT 1 FROM pg_indexes WHERE tablename = 'agent_memories' AND indexname = :name"),
            {"name": name},
        ).first()
        is not None
    )


def upgrade():
    if op.get_bind().dialect.name != "postgresql" or not _has_index("agent_memories_agent_fts"):
        return
    op.execute(USER_LED)
    op.execute("DROP INDEX agent_memories_agent_fts")


def downgrade():
    if op.get_bind().dialect.name != "postgresql" or not _has_index("agent_memories_agent_user_fts"):
        return
    op.execute(AGENT_LED)
    op.execute("DROP INDEX agent_memories_agent_user_fts")
