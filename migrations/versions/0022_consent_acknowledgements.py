"""consent acknowledgements: a held patch is confirmed by a person, on the record

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28

- `proposed_patches.proposed_turn`: the user turn the proposing write came from (the agent's own reference,
  at most 128 characters), so an acknowledgement can be told apart from the turn that proposed the change.
- `proposed_patches.acknowledgement`: who confirmed the patch and on what grounds — an admin in the console,
  or the agent relaying the user's acknowledgement with a reference to the user's turn that gave it — kept
  after the patch is decided (the proposed text is still dropped).

Plain ADD COLUMN on both databases.
"""

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("proposed_patches", sa.Column("proposed_turn", sa.String(128), nullable=True))
    op.add_column("proposed_patches", sa.Column("acknowledgement", sa.JSON(), nullable=True))


def downgrade():
    # Not batch mode: on SQLite that copies `proposed_patches`, which consent_signals' foreign key refuses.
    op.execute("ALTER TABLE proposed_patches DROP COLUMN acknowledgement")
    op.execute("ALTER TABLE proposed_patches DROP COLUMN proposed_turn")
