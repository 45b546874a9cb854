"""the context block's signatures kept with each memory: agent_memories.block_sig and block_sig_text

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-29

GET /api/v1/context signs every memory it shows — a 64-bit hash of everything the block shows of it — and
a block's digest is their sum (models/retrieval/context.py). PostgreSQL computed each signature at every
read — hashing every shown column of every memory, in the statement that reads the block and in
`outline`, which decides a 304 and a changed block's reading. Here each memory keeps its two signatures (JSON, which
shows its origin's time; text, which shows its date) in generated columns, written by PostgreSQL with the
row at every insert and update, so no write path (the mutation path, the Time Machine, a bulk COPY, raw
SQL) can leave one stale, and a read only reads them. Each signs the memory's id, type, origin, tokens,
tags, category, lock and text, joined by `|`, with expressions PostgreSQL holds immutable (a generated
column admits no other): the origin as seconds since the epoch (JSON) or days since 2000-01-01 (text),
not through DateStyle. Adding them rewrites the table once. SQLite keeps signing in the web process: it
has no such hash in SQL.
"""

from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def _signed(origin: str) -> str:
    shown = ["id::text", "memory_type", origin, "token_estimate::text", "coalesce(tags::text, '')",
             "coalesce(category, '')", "constitutional::text", "content"]  # fmt: skip
    return "hashtextextended(" + " || '|' || ".join(shown) + ", 0)"


COLUMNS = {
    "block_sig": _signed("extract(epoch FROM created_at)::text"),
    "block_sig_text": _signed("(created_at::date - date '2000-01-01')::text"),
}


def upgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    additions = ", ".join(f"ADD COLUMN {name} bigint GENERATED ALWAYS AS ({signed}) STORED"
                          for name, signed in COLUMNS.items())  # fmt: skip
    op.execute(f"ALTER TABLE agent_memories {additions}")


def downgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("ALTER TABLE agent_memories " + ", ".join(f"DROP COLUMN {name}" for name in COLUMNS))
