"""the context block's whole categories from an index: active memories by agent and category

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-29

GET /api/v1/context reads an agent's active core memories, its journals of the window, and every other
active memory of the categories configured `context: all` (models/retrieval/context.py `_where`: the
shipped `profile`). The first two come from `ix_agent_memories_agent_type_active`; the third had no index
to find it, so the planner read every active memory of the agent — its thousands of retrieved semantic
memories too — to keep the block's thousand: at 1,000 core memories beside 5,000 semantic ones, 3.1 ms of
the statement's execution against 1.6 with this index (one bitmap scan per section), and a cost that grew
with everything the agent remembers instead of with its block. The index holds active rows only, like
the query's own predicate, on both databases; `category` is written with the memory and rarely changed,
and access-time touches (`last_accessed_at`) stay heap-only updates.
"""

from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade():
    op.execute(
        "CREATE INDEX ix_agent_memories_agent_category_active ON agent_memories (agent_id, category) "
        "WHERE deleted_at IS NULL"
    )


def downgrade():
    op.execute("DROP INDEX ix_agent_memories_agent_category_active")
