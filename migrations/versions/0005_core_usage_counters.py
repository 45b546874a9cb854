"""maintained core usage: agents.core_tokens and agents.core_count, kept by database triggers

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22

The circuit breaker, the over-budget scan and every budget display needed SUM(token_estimate) over an
agent's active core memories: O(memories) per refinement tool call and O(all memories) per scan. These
two columns hold that sum and count, maintained by triggers on agent_memories so that no write path —
the mutation path, the Time Machine, a purge, a bulk import — can forget them. PostgreSQL uses
statement-level triggers with transition tables (one UPDATE per statement, whatever its row count);
SQLite uses row-level triggers. `tests/models/changes/test_invariants.py` checks them against the aggregate.
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

BACKFILL = """
UPDATE agents SET
  core_tokens = coalesce((SELECT sum(m.token_estimate) FROM agent_memories m
                          WHERE m.agent_id = agents.id AND m.memory_type = 'core' AND m.deleted_at IS NULL), 0),
  core_count = (SELECT count(*) FROM agent_memories m
                WHERE m.agent_id = agents.id AND m.memory_type = 'core' AND m.deleted_at IS NULL)
"""

# A row counts when it is an active core memory; the delta of a statement is what it adds minus what it removes.
POSTGRES = [
    """CREATE FUNCTION agent_core_usage_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE agents a SET core_tokens = a.core_tokens + d.tokens, core_count = a.core_count + d.n
    FROM (SELECT agent_id, sum(token_estimate) AS tokens, count(*) AS n FROM new_rows
          WHERE memory_type = 'core' AND deleted_at IS NULL GROUP BY agent_id) d
    WHERE a.id = d.agent_id;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE agents a SET core_tokens = a.core_tokens - d.tokens, core_count = a.core_count - d.n
    FROM (SELECT agent_id, sum(token_estimate) AS tokens, count(*) AS n FROM old_rows
          WHERE memory_type = 'core' AND deleted_at IS NULL GROUP BY agent_id) d
    WHERE a.id = d.agent_id;
  ELSE
    UPDATE agents a SET core_tokens = a.core_tokens + d.tokens, core_count = a.core_count + d.n
    FROM (SELECT agent_id, sum(tokens) AS tokens, sum(n) AS n FROM (
            SELECT agent_id, token_estimate AS tokens, 1 AS n FROM new_rows
            WHERE memory_type = 'core' AND deleted_at IS NULL
            UNION ALL
            SELECT agent_id, -token_estimate, -1 FROM old_rows
            WHERE memory_type = 'core' AND deleted_at IS NULL) x
          GROUP BY agent_id) d
    WHERE a.id = d.agent_id AND (d.tokens <> 0 OR d.n <> 0);
  END IF;
  RETURN NULL;
END $$""",
    """CREATE TRIGGER agent_memories_core_usage_insert AFTER INSERT ON agent_memories
       REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION agent_core_usage_apply()""",
    """CREATE TRIGGER agent_memories_core_usage_update AFTER UPDATE ON agent_memories
       REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
       FOR EACH STATEMENT EXECUTE FUNCTION agent_core_usage_apply()""",
    """CREATE TRIGGER agent_memories_core_usage_delete AFTER DELETE ON agent_memories
       REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION agent_core_usage_apply()""",
]
SQLITE = [
    """CREATE TRIGGER agent_memories_core_usage_insert AFTER INSERT ON agent_memories
       WHEN NEW.memory_type = 'core' AND NEW.deleted_at IS NULL
       BEGIN
         UPDATE agents SET core_tokens = core_tokens + NEW.token_estimate, core_count = core_count + 1
         WHERE id = NEW.agent_id;
       END""",
    """CREATE TRIGGER agent_memories_core_usage_delete AFTER DELETE ON agent_memories
       WHEN OLD.memory_type = 'core' AND OLD.deleted_at IS NULL
       BEGIN
         UPDATE agents SET core_tokens = core_tokens - OLD.token_estimate, core_count = core_count - 1
         WHERE id = OLD.agent_id;
       END""",
    """CREATE TRIGGER agent_memories_core_usage_update
       AFTER UPDATE OF agent_id, memory_type, deleted_at, token_estimate ON agent_memories
       BEGIN
         UPDATE agents SET core_tokens = core_tokens - OLD.token_estimate, core_count = core_count - 1
         WHERE id = OLD.agent_id AND OLD.memory_type = 'core' AND OLD.deleted_at IS NULL;
         UPDATE agents SET core_tokens = core_tokens + NEW.token_estimate, core_count = core_count + 1
         WHERE id = NEW.agent_id AND NEW.memory_type = 'core' AND NEW.deleted_at IS NULL;
       END""",
]
DROP = {
    "postgresql": [
        "DROP TRIGGER IF EXISTS agent_memories_core_usage_insert ON agent_memories",
        "DROP TRIGGER IF EXISTS agent_memories_core_usage_update ON agent_memories",
        "DROP TRIGGER IF EXISTS agent_memories_core_usage_delete ON agent_memories",
        "DROP FUNCTION IF EXISTS agent_core_usage_apply()",
    ],
    "sqlite": [
        "DROP TRIGGER IF EXISTS agent_memories_core_usage_insert",
        "DROP TRIGGER IF EXISTS agent_memories_core_usage_update",
        "DROP TRIGGER IF EXISTS agent_memories_core_usage_delete",
    ],
}


def upgrade():
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.add_column(sa.Column("core_tokens", sa.BigInteger(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("core_count", sa.Integer(), nullable=False, server_default="0"))
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute("LOCK TABLE agent_memories IN SHARE ROW EXCLUSIVE MODE")  # no write between backfill and triggers
    op.execute(BACKFILL)
    for statement in POSTGRES if dialect == "postgresql" else SQLITE:
        op.execute(statement)


def downgrade():
    for statement in DROP[op.get_bind().dialect.name]:
        op.execute(statement)
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.drop_column("core_count")
        batch_op.drop_column("core_tokens")
