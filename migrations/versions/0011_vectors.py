"""memory.query's dense vectors: an index to read an agent's recently embedded rows

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23

memory.query keeps each agent's vectors (`memory_embeddings`, float32 bytes, unchanged) as an
in-process matrix and refreshes it with the rows embedded since its last look (models/retrieval/vectors.py):
`WHERE agent_id = :agent AND created_at >= :since`. This index makes that an index range scan that
usually finds nothing, instead of a read of every vector of the agent.
"""

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade():
    op.create_index("ix_memory_embeddings_agent_created", "memory_embeddings", ["agent_id", "created_at"])


def downgrade():
    op.drop_index("ix_memory_embeddings_agent_created", table_name="memory_embeddings")
