"""admin sign-in state kept on the server: a session token per admin, an optional TOTP secret, sign-in events

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23

- `users.session_token`: the value Flask-Login's alternative id carries in the session cookie;
  rotated at sign-out and on a password change, so a cookie saved before then stops working.
  Unique (it names one admin) and indexed (it is looked up on every console request).
- `users.totp_secret`: the base32 TOTP secret when the admin enrolled a second factor, else NULL.
- `users.totp_last_step`: the 30-second step of the last accepted code, so a code works once.
- `users.password_changed_at`: when the password was last set.
- `sign_in_events`: sign-ins, failures, lockouts and sign-outs (no passwords; no email of anyone
  who is not an admin: `user_id` is NULL when the email tried matched no admin).

Plain ADD COLUMN / CREATE TABLE on both databases (SQLite needs no table rebuild for it, so the
guard triggers of migration 0008 stay as they are).
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("users", sa.Column("session_token", sa.String(64), nullable=True))
    op.add_column("users", sa.Column("totp_secret", sa.String(64), nullable=True))
    op.add_column("users", sa.Column("totp_last_step", sa.Integer(), nullable=True))
    op.add_column("users", sa.Column("password_changed_at", sa.DateTime(), nullable=True))
    op.create_index("ix_users_session_token", "users", ["session_token"], unique=True)
    op.create_table(
        "sign_in_events",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("ts", sa.DateTime(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        sa.Column("address", sa.String(64), nullable=True),
    )
    op.create_index("ix_sign_in_events_ts", "sign_in_events", ["ts"])


def downgrade():
    op.drop_index("ix_sign_in_events_ts", table_name="sign_in_events")
    op.drop_table("sign_in_events")
    op.drop_index("ix_users_session_token", table_name="users")
    op.drop_column("users", "password_changed_at")
    op.drop_column("users", "totp_last_step")
    op.drop_column("users", "totp_secret")
    op.drop_column("users", "session_token")
