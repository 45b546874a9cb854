"""a breaker trip that could not undo everything: what it left in place, on the session

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28

- `refinement_sessions.left_in_place`: when the circuit breaker rolled a session back but a later change
  (the agent's own, through its API) depended on some of the session's operations, those operations were
  left in place and every other one undone (models/changes/timemachine.py, `leave_conflicts`). This names
  them: `{"op_ids": [...], "memory_ids": [...]}`, ids only. NULL when nothing was left.

Plain ADD COLUMN on both databases.
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("refinement_sessions", sa.Column("left_in_place", sa.JSON(), nullable=True))


def downgrade():
    # Not batch mode: on SQLite that copies `refinement_sessions`, which the audit log's foreign key refuses.
    op.execute("ALTER TABLE refinement_sessions DROP COLUMN left_in_place")
