"""SQLite: each memory's agent in the full-text index, so a question reads only its own agent's memories

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-01

FTS5's index (`agent_memories_fts`) held the memories' words alone: a question's match read every
agent's memories holding its words, the candidate pool and the scoring pass alike, and only then kept
the asking agent's. On a database of many agents most of that reading was for the others (LoCoMo's ten
conversations in one database: memory.query 1.5-1.9 ms quicker at p50 without it, docs/benchmarks.md,
"An agent's own memories' words"). Here the index gets a second
column, the memory's `agent_id`, and memory.query matches `agent_id : "N" AND content : (...)`
(models/retrieval/ranking.py, `fts5_match`), which FTS5 answers by stepping through the agent's own
entries. PostgreSQL is untouched: its agent-led GIN index (0018) already reads one agent's memories.

The table is rebuilt from agent_memories (an external-content index: nothing to copy), and its triggers
write both columns; an update of either re-indexes the row, with the values it was indexed under, as
FTS5's 'delete' needs.
"""

from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None

DROP = [
    "DROP TRIGGER IF EXISTS agent_memories_fts_insert",
    "DROP TRIGGER IF EXISTS agent_memories_fts_delete",
    "DROP TRIGGER IF EXISTS agent_memories_fts_update",
    "DROP TABLE IF EXISTS agent_memories_fts",
]


def _index(columns: list[str]) -> list[str]:
    """The FTS5 table over agent_memories' `columns`, rebuilt, and the triggers that keep it in step."""
    listed = ", ".join(columns)
    new = ", ".join(f"NEW.{c}" for c in columns)
    old = ", ".join(f"OLD.{c}" for c in columns)
    return [
        f"""CREATE VIRTUAL TABLE agent_memories_fts USING fts5(
        {listed}, content='agent_memories', content_rowid='id', tokenize='porter unicode61')""",
        "INSERT INTO agent_memories_fts(agent_memories_fts) VALUES ('rebuild')",
        f"""CREATE TRIGGER agent_memories_fts_insert AFTER INSERT ON agent_memories BEGIN
          INSERT INTO agent_memories_fts(rowid, {listed}) VALUES (NEW.id, {new});
        END""",
        f"""CREATE TRIGGER agent_memories_fts_delete AFTER DELETE ON agent_memories BEGIN
          INSERT INTO agent_memories_fts(agent_memories_fts, rowid, {listed}) VALUES ('delete', OLD.id, {old});
        END""",
        f"""CREATE TRIGGER agent_memories_fts_update AFTER UPDATE OF {listed} ON agent_memories BEGIN
          INSERT INTO agent_memories_fts(agent_memories_fts, rowid, {listed}) VALUES ('delete', OLD.id, {old});
          INSERT INTO agent_memories_fts(rowid, {listed}) VALUES (NEW.id, {new});
        END""",
    ]


def upgrade():
    if op.get_bind().dialect.name != "sqlite":
        return
    for statement in [*DROP, *_index(["content", "agent_id"])]:
        op.execute(statement)


def downgrade():
    if op.get_bind().dialect.name != "sqlite":
        return
    for statement in [*DROP, *_index(["content"])]:
        op.execute(statement)
