"""the breaker's own measure and what a trip left in place, on the session

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28

- `refinement_sessions.left_in_place`: when the circuit breaker rolled a session back but a later change
  (the agent's own, through its API) depended on some of the session's operations, those operations were
  left in place and every other one undone (models/changes/timemachine.py, `leave_conflicts`). This names
  them: `{"op_ids": [...], "memory_ids": [...]}`, ids only. NULL when nothing was left.
- `refinement_sessions.removed_tokens`, `removed_count`: what the session's own operations removed from the
  agent's active core memory, net, each tool call's measured under the agent's row lock
  (models/refinement/toolbox.py). The breaker compares these with the session's start, so the agent's own
  writes through its API during a session no longer count against it. 0 for the sessions already there.

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
    for name in ("removed_tokens", "removed_count"):
        op.add_column(
            "refinement_sessions", sa.Column(name, sa.Integer(), nullable=False, server_default="0")
        )


def downgrade():
    # Not batch mode: on SQLite that copies `refinement_sessions`, which the audit log's foreign key refuses.
    for name in ("removed_count", "removed_tokens", "left_in_place"):
        op.execute(f"ALTER TABLE refinement_sessions DROP COLUMN {name}")
