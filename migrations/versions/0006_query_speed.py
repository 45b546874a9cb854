"""memory.query speed: room on each agent_memories page, so access-time touches are HOT updates

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22

memory.query notes every memory it returns, and the access flusher writes `last_accessed_at` in
batches. On a full page such an UPDATE moves the row: a new heap tuple plus an entry in every index,
the GIN full-text index included (fastupdate is off, so that is a synchronous GIN insert), and a dead
tuple the recency walk of the next query steps over. With 10% of each page kept free, and no index on
`last_accessed_at`, PostgreSQL updates the row in place (a heap-only tuple): no index is touched.
Autovacuum runs sooner on this table too, so dead tuples from edits do not pile up between runs.

Storage parameters only: PostgreSQL applies the fill factor to pages written from now on (and to
every page at the next rewrite); SQLite has no equivalent and is left alone.
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "ALTER TABLE agent_memories SET (fillfactor = 90, autovacuum_vacuum_scale_factor = 0.05,"
            " autovacuum_analyze_scale_factor = 0.05)"
        )


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "ALTER TABLE agent_memories RESET (fillfactor, autovacuum_vacuum_scale_factor,"
            " autovacuum_analyze_scale_factor)"
        )
