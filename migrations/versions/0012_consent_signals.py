"""consent signals: benign user-context writes wait for two independent signals

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23

- `proposed_patches.policy`: `consent` (a sensitive field: the user's explicit consent applies it) or
  `signals` (a benign field: applied once two independent signals corroborate it).
- `proposed_patches.proposed_by`: the actor whose write the patch holds (`agent`, `system:extraction`,
  `system:consolidation`); the change is applied, and audited, as that actor.
- `proposed_patches.value_key`: a hash of what the patch proposes (operation, target, user, field and
  the normalised words), so a repeated mention finds the pending patch it corroborates.
- `consent_signals`: one row per independent signal (kind and source unique per patch): `mention`
  (source: the thread), `chat_ack`, `ui`, or `tom` (source: the insight memory).

Plain ADD COLUMN / CREATE TABLE on both databases (no SQLite table rebuild; the guard triggers of
migration 0008 stay as they are).
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column(
        "proposed_patches", sa.Column("policy", sa.String(12), nullable=False, server_default="consent")
    )
    op.add_column("proposed_patches", sa.Column("value_key", sa.String(64), nullable=True))
    op.add_column("proposed_patches", sa.Column("proposed_by", sa.String(32), nullable=True))
    op.create_index("ix_proposed_patches_value_key", "proposed_patches", ["agent_id", "value_key", "status"])
    op.create_table(
        "consent_signals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column(
            "patch_id",
            sa.Integer(),
            sa.ForeignKey("proposed_patches.id", name="fk_consent_signals_patch_id_proposed_patches"),
            nullable=False,
        ),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("source", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_consent_signals"),
        sa.UniqueConstraint("patch_id", "kind", "source", name="uq_consent_signals_patch_kind_source"),
    )


def downgrade():
    op.drop_table("consent_signals")
    op.drop_index("ix_proposed_patches_value_key", table_name="proposed_patches")
    with op.batch_alter_table("proposed_patches") as batch:
        batch.drop_column("proposed_by")
        batch.drop_column("value_key")
        batch.drop_column("policy")
