"""pgvector where the database has it: an `embedding vector` mirror of memory_embeddings and HNSW indexes

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27

The issue asks that vector search use pgvector (HNSW) automatically where the extension exists, and work
without it everywhere else. PostgreSQL only, and only where pgvector is installed on the server (the
`vector` extension is available, or already created): the extension is created (when the role may), and
memory_embeddings gains `embedding vector`, kept equal to the float32 bytes of `vector` by a trigger, and
one HNSW index per embedding model already stored (but the hashed fallback's, which memory.query never
ranks by) (models/retrieval/pgvector.py, `enable`, which
`flask --app wsgi embeddings pgvector` also runs for a server that gets pgvector later). Filling the column
reads every stored vector once (about a third of a millisecond a vector in SQL), and the indexes are built
in this transaction: writes to memory_embeddings wait meanwhile.

Elsewhere (SQLite; PostgreSQL without pgvector) nothing changes: memory.query keeps searching vectors in
the web process (models/retrieval/vectors.py).
"""

import logging

from alembic import op

from jobs.embeddings import FALLBACK_LABEL
from models.retrieval.pgvector import enable, installed

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

log = logging.getLogger("alembic.runtime.migration")


def upgrade():
    log.info("0020: %s", enable(op.get_bind(), unranked=(FALLBACK_LABEL,)))


def downgrade():
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER IF EXISTS memory_embeddings_mirror ON memory_embeddings")
    op.execute("DROP FUNCTION IF EXISTS memory_embeddings_mirror()")
    # Its HNSW indexes go with the column; the extension stays (another schema object may use it).
    op.execute("ALTER TABLE memory_embeddings DROP COLUMN IF EXISTS embedding")
    if installed(bind):
        op.execute("DROP FUNCTION IF EXISTS memconsole_float32_vector(bytea)")
