"""the context block's version: agents.block_version, a new random value whenever a memory changes what the block shows

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-28

GET /api/v1/context answers an unchanged block with 304 after comparing ETags, and the ETag hashes the
block's digest, a sum over every memory of the block (models/retrieval/context.py). Summing a thousand
memories on every conditional request cost most of the 304 path. `agents.block_version` takes a new
random 63-bit value at every change of the agent's memories that the block could show — any insert or
delete, an update of the content, type, origin date, tokens, tags, category, lock or soft-deletion — so
the web process keeps each digest under the version it was computed at (console/api/context_cache.py)
and sums again only when the version moved or a journal left the window. Random, not a counter: a
database restored from a backup, or a test database truncated, cannot bring back a version a web
process still holds with another block under it. It is maintained where the core totals of migrations 0005 and 0021
are, so no write path (the mutation path, the Time Machine, a purge, a bulk COPY, raw SQL) can forget it:

- PostgreSQL: `agent_core_usage_apply()`, the statement-level function the three triggers of 0005 call,
  also gives a new version to every agent whose memories changed a shown column (an update's old and new
  rows compared by id), taking the agents' rows in id order as 0021 does. An update that changes no
  shown column (the access-time touches, importance) changes no agent row and locks nothing.
- SQLite: row-level triggers of their own, beside 0005's and 0021's.

The version says only that the block may have changed: the ETag still hashes the digest, so it changes
if and only if the block does. `tests/models/changes/test_invariants.py` checks the new version after every kind of raw write.
"""

import importlib.util
import os

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

# The columns the context block shows (models/retrieval/context.py `_signature`) and the soft-deletion
# that takes a memory out of it. `tags` is compared as text: PostgreSQL's json has no equality.
SHOWN = ("content", "memory_type", "created_at", "token_estimate", "tags::text", "category", "constitutional",
         "deleted_at")  # fmt: skip
_ROW = ", ".join("{t}." + column for column in SHOWN)

_NEW = """SELECT agent_id, CASE WHEN memory_type = 'core' THEN token_estimate ELSE 0 END AS tokens,
                   CASE WHEN memory_type = 'core' THEN 1 ELSE 0 END AS n, 1 AS m
            FROM new_rows WHERE deleted_at IS NULL"""
_OLD = """SELECT agent_id, CASE WHEN memory_type = 'core' THEN -token_estimate ELSE 0 END AS tokens,
                   CASE WHEN memory_type = 'core' THEN -1 ELSE 0 END AS n, -1 AS m
            FROM old_rows WHERE deleted_at IS NULL"""
_SHOWN_UPDATED = (
    "SELECT n.agent_id FROM new_rows n JOIN old_rows o ON o.id = n.id "
    f"WHERE ({_ROW.format(t='n')}) IS DISTINCT FROM ({_ROW.format(t='o')})"
)
# `d`: each agent's change of its figures; `shown`: the agents whose block may have changed (a new version). An agent in
# neither is neither locked nor written.
_APPLY = """WITH changed AS ({rows}),
    d AS (SELECT agent_id, sum(tokens) AS tokens, sum(n) AS n, sum(m) AS m FROM changed GROUP BY agent_id
          HAVING sum(tokens) <> 0 OR sum(n) <> 0 OR sum(m) <> 0),
    shown AS ({shown}),
    touched AS (SELECT agent_id FROM d UNION SELECT agent_id FROM shown),
    locked AS (SELECT a.id FROM agents a WHERE a.id IN (SELECT agent_id FROM touched) ORDER BY a.id
               FOR NO KEY UPDATE)
    UPDATE agents a SET core_tokens = a.core_tokens + coalesce(d.tokens, 0),
                        core_count = a.core_count + coalesce(d.n, 0),
                        memory_count = a.memory_count + coalesce(d.m, 0),
                        block_version = CASE WHEN t.agent_id IN (SELECT agent_id FROM shown)
                                             THEN {new_version} ELSE a.block_version END
    FROM touched t LEFT JOIN d ON d.agent_id = t.agent_id
    WHERE a.id = t.agent_id AND a.id IN (SELECT id FROM locked);"""
_PG_NEW = "floor(random() * 9223372036854775807)::bigint"
POSTGRES = f"""CREATE OR REPLACE FUNCTION agent_core_usage_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    {_APPLY.format(rows=_NEW, shown="SELECT DISTINCT agent_id FROM new_rows", new_version=_PG_NEW)}
  ELSIF TG_OP = 'DELETE' THEN
    {_APPLY.format(rows=_OLD, shown="SELECT DISTINCT agent_id FROM old_rows", new_version=_PG_NEW)}
  ELSE
    {_APPLY.format(rows=f"{_NEW} UNION ALL {_OLD}", shown=_SHOWN_UPDATED, new_version=_PG_NEW)}
  END IF;
  RETURN NULL;
END $$"""

_BUMP = "UPDATE agents SET block_version = random() WHERE id = {row}.agent_id;"
_SQLITE_CHANGED = " OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in (c.split("::")[0] for c in SHOWN))
SQLITE = [
    f"""CREATE TRIGGER agent_memories_block_insert AFTER INSERT ON agent_memories
       BEGIN {_BUMP.format(row="NEW")} END""",
    f"""CREATE TRIGGER agent_memories_block_delete AFTER DELETE ON agent_memories
       BEGIN {_BUMP.format(row="OLD")} END""",
    f"""CREATE TRIGGER agent_memories_block_update AFTER UPDATE ON agent_memories
       WHEN {_SQLITE_CHANGED}
       BEGIN {_BUMP.format(row="NEW")} END""",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS agent_memories_block_insert",
    "DROP TRIGGER IF EXISTS agent_memories_block_delete",
    "DROP TRIGGER IF EXISTS agent_memories_block_update",
]


def _function_of_0021() -> str:
    """0021's function as it was, for the downgrade: read from that revision's file, its one source."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "0021_agent_memory_count.py")
    spec = importlib.util.spec_from_file_location("revision_0021", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.POSTGRES


def upgrade():
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.add_column(sa.Column("block_version", sa.BigInteger(), nullable=False, server_default="0"))
    if op.get_bind().dialect.name == "postgresql":
        op.execute(POSTGRES)
    else:
        for statement in SQLITE:
            op.execute(statement)


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_function_of_0021())
    else:
        for statement in SQLITE_DROP:
            op.execute(statement)
    # Not batch mode: on SQLite that copies `agents` into a new table, which the memories' foreign keys refuse.
    op.execute("ALTER TABLE agents DROP COLUMN block_version")
