"""indexes over active rows only: soft-deletes stop paying for the full-text and dedup indexes

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22

Profiling the nightly dedup showed ~1.3 ms per soft-deleted row, nearly all of it index maintenance:
setting `deleted_at` is not a heap-only update (the column is indexed), so the new row version went
into every index — the GIN full-text index (fastupdate off: a synchronous insert per lexeme)
included. Every reader of those two indexes only wants active rows (memory.query filters
`deleted_at IS NULL`; dedup compares active core rows), so both become partial: a soft-deleted row
version is simply not indexed there.

- `ix_agent_memories_agent_hash` (agent_id, content_hash) -> `ix_agent_memories_active_core_hash`,
  WHERE memory_type = 'core' AND deleted_at IS NULL (both databases).
- PostgreSQL: the GIN index `agent_memories_fts` gets WHERE deleted_at IS NULL.
"""

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

ACTIVE_CORE = "memory_type = 'core' AND deleted_at IS NULL"


def upgrade():
    op.execute(
        f"CREATE INDEX ix_agent_memories_active_core_hash ON agent_memories (agent_id, content_hash) WHERE {ACTIVE_CORE}"
    )
    op.execute("DROP INDEX ix_agent_memories_agent_hash")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE INDEX agent_memories_fts_active ON agent_memories USING gin (fts_vector)"
            " WITH (fastupdate = off) WHERE deleted_at IS NULL"
        )
        op.execute("DROP INDEX agent_memories_fts")
        op.execute("ALTER INDEX agent_memories_fts_active RENAME TO agent_memories_fts")


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute("CREATE INDEX agent_memories_fts_all ON agent_memories USING gin (fts_vector) WITH (fastupdate = off)")
        op.execute("DROP INDEX agent_memories_fts")
        op.execute("ALTER INDEX agent_memories_fts_all RENAME TO agent_memories_fts")
    op.execute("CREATE INDEX ix_agent_memories_agent_hash ON agent_memories (agent_id, content_hash)")
    op.execute("DROP INDEX ix_agent_memories_active_core_hash")
