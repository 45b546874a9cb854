"""maintained memory count: agents.memory_count, kept by the database triggers of 0005, for the storage quota

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28

Every create checked the agent's quota (MAX_MEMORIES_PER_AGENT, models/agents/quotas.py) with a count of its
active memories: O(memories) per write. `bench/api_load.py` measured a create at p50 11 ms with 10,000
memories in the agent, 25 ms with 100,000 and 107 ms with 1,000,000 (2026-11-28), the count being most of
it. `agents.memory_count` holds that count — every memory type, soft-deleted ones excluded, as the quota
counts — maintained where the core totals of migration 0005 are, so no write path (the mutation path, the
Time Machine, a purge, a bulk COPY, raw SQL) can forget it:

- PostgreSQL: `agent_core_usage_apply()`, the statement-level function 0005's three triggers call, now
  sums both figures per agent from the transition tables. Since a write of any memory now updates its
  agent's row (0005 did so for core memories only), the function locks the agents it changes in id order
  first: two statements changing memories of several agents each (the nightly dedup, the TTL job) take
  their agents' rows in the same order. `FOR NO KEY UPDATE`, the lock the UPDATE itself takes: a writer's
  foreign-key check on the agent (`FOR KEY SHARE`, taken by every insert of a memory or an audit record)
  does not conflict with it, where `FOR UPDATE` made two concurrent creates in one agent deadlock
  (tests/console/api/test_api.py, thread revisions under concurrent writes). A statement that changes no agent's
  figures (the access-time touches) locks nothing, as before.
- SQLite: row-level triggers of their own, beside 0005's.

`tests/models/changes/test_invariants.py` checks the column against the aggregate after every kind of write.
"""

import importlib.util
import os

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

BACKFILL = """
UPDATE agents SET memory_count = (SELECT count(*) FROM agent_memories m
                                  WHERE m.agent_id = agents.id AND m.deleted_at IS NULL)
"""

# A row counts when active: toward `m` whatever its type, toward the core totals when core. The delta of a
# statement is what it adds (new_rows) minus what it removes (old_rows), per agent; an agent whose figures do
# not move is neither locked nor written.
_NEW = """SELECT agent_id, CASE WHEN memory_type = 'core' THEN token_estimate ELSE 0 END AS tokens,
                   CASE WHEN memory_type = 'core' THEN 1 ELSE 0 END AS n, 1 AS m
            FROM new_rows WHERE deleted_at IS NULL"""
_OLD = """SELECT agent_id, CASE WHEN memory_type = 'core' THEN -token_estimate ELSE 0 END AS tokens,
                   CASE WHEN memory_type = 'core' THEN -1 ELSE 0 END AS n, -1 AS m
            FROM old_rows WHERE deleted_at IS NULL"""
_APPLY = """WITH changed AS ({rows}),
    d AS (SELECT agent_id, sum(tokens) AS tokens, sum(n) AS n, sum(m) AS m FROM changed GROUP BY agent_id
          HAVING sum(tokens) <> 0 OR sum(n) <> 0 OR sum(m) <> 0),
    locked AS (SELECT a.id FROM agents a WHERE a.id IN (SELECT agent_id FROM d) ORDER BY a.id FOR NO KEY UPDATE)
    UPDATE agents a SET core_tokens = a.core_tokens + d.tokens, core_count = a.core_count + d.n,
                        memory_count = a.memory_count + d.m
    FROM d WHERE a.id = d.agent_id AND a.id IN (SELECT id FROM locked);"""
# One function for 0005's three triggers; which transition tables exist depends on the operation.
POSTGRES = f"""CREATE OR REPLACE FUNCTION agent_core_usage_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    {_APPLY.format(rows=_NEW)}
  ELSIF TG_OP = 'DELETE' THEN
    {_APPLY.format(rows=_OLD)}
  ELSE
    {_APPLY.format(rows=f"{_NEW} UNION ALL {_OLD}")}
  END IF;
  RETURN NULL;
END $$"""


def _function_of_0005() -> str:
    """0005's function as it was, for the downgrade: read from that revision's file, its one source."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "0005_core_usage_counters.py")
    spec = importlib.util.spec_from_file_location("revision_0005", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.POSTGRES[0].replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)


SQLITE = [
    """CREATE TRIGGER agent_memories_count_insert AFTER INSERT ON agent_memories
       WHEN NEW.deleted_at IS NULL
       BEGIN
         UPDATE agents SET memory_count = memory_count + 1 WHERE id = NEW.agent_id;
       END""",
    """CREATE TRIGGER agent_memories_count_delete AFTER DELETE ON agent_memories
       WHEN OLD.deleted_at IS NULL
       BEGIN
         UPDATE agents SET memory_count = memory_count - 1 WHERE id = OLD.agent_id;
       END""",
    """CREATE TRIGGER agent_memories_count_update AFTER UPDATE OF agent_id, deleted_at ON agent_memories
       BEGIN
         UPDATE agents SET memory_count = memory_count - 1 WHERE id = OLD.agent_id AND OLD.deleted_at IS NULL;
         UPDATE agents SET memory_count = memory_count + 1 WHERE id = NEW.agent_id AND NEW.deleted_at IS NULL;
       END""",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS agent_memories_count_insert",
    "DROP TRIGGER IF EXISTS agent_memories_count_update",
    "DROP TRIGGER IF EXISTS agent_memories_count_delete",
]


def upgrade():
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.add_column(sa.Column("memory_count", sa.Integer(), nullable=False, server_default="0"))
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        # No write between the new function and the backfill.
        op.execute("LOCK TABLE agent_memories IN SHARE ROW EXCLUSIVE MODE")
        op.execute(POSTGRES)
    else:
        for statement in SQLITE:
            op.execute(statement)
    op.execute(BACKFILL)


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_function_of_0005())
    else:
        for statement in SQLITE_DROP:
            op.execute(statement)
    # Not batch mode: on SQLite that copies `agents` into a new table, which the memories' foreign keys refuse.
    op.execute("ALTER TABLE agents DROP COLUMN memory_count")
