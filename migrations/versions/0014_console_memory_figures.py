"""console memory figures: locked (constitutional) active memories counted from an index

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25

The dashboard, the agent page and the timeline show, per agent, active memories by type, soft-deleted
ones, active core tokens and the locked (constitutional) count. Grouped over the memory rows, that read
one heap page per memory — an agent's memories arrive interleaved with every other agent's — 5,000 pages
for a dashboard page of 50 agents, 20-36 ms whenever they were not in shared buffers (the dashboard's
first view). `models/readmodels/dashboard.memory_stats` now reads no memory row: counts by type come
from `ix_agent_memories_agent_type_active` alone (an index-only scan), core tokens from the totals on
`agents` (migration 0005), and the locked count from this partial index, which holds only active
constitutional rows. Its predicate is the query's own terms on each database (SQLite has no boolean
type: `constitutional = 1`), so both planners match it. Toggling `constitutional` or soft-deleting a
constitutional row updates it; access-time touches (`last_accessed_at`) stay heap-only updates.
"""

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade():
    if op.get_bind().dialect.name == "postgresql":
        predicate = "constitutional AND deleted_at IS NULL"
    else:
        predicate = "constitutional = 1 AND deleted_at IS NULL"
    op.execute(f"CREATE INDEX ix_agent_memories_locked_active ON agent_memories (agent_id) WHERE {predicate}")


def downgrade():
    op.execute("DROP INDEX ix_agent_memories_locked_active")
