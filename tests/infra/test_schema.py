"""The Alembic revisions and the models describe the same schema, on both databases."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from models import db
from models.history.partitions import schema_compared


def _compared(obj, name, type_, reflected, compare_to) -> bool:
    """Everything but the full-text index of memory.query, dialect-specific DDL in revisions 0003, 0017,
    0018 and 0019 outside the ORM metadata: SQLite's FTS5 table `agent_memories_fts` (and its shadow
    tables), PostgreSQL's generated column `agent_memories.fts_vector` and its GIN indexes
    `agent_memories_fts` and `agent_memories_agent_user_fts`; PostgreSQL's generated columns of the context
    block's signatures (revision 0026: `block_sig`, `block_sig_text`), read by name like `fts_vector`; and
    what PostgreSQL's history partitions add (revision 0016: the partitions themselves, the partition key in
    a unique index)."""
    generated = type_ == "column" and name in ("fts_vector", "block_sig", "block_sig_text")
    outside = (name or "").startswith(("agent_memories_fts", "agent_memories_agent_user_fts")) or generated
    return not (reflected and compare_to is None and outside) and schema_compared(
        obj, name, type_, reflected, compare_to
    )


def test_migrations_match_models(app):
    with db.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"include_object": _compared})
        diff = compare_metadata(context, db.metadata)
    assert diff == []


def test_guard_triggers_are_installed(app):
    from sqlalchemy import text

    if db.engine.dialect.name == "sqlite":
        names = set(db.session.scalars(text("SELECT name FROM sqlite_master WHERE type = 'trigger'")))
        assert {
            "agent_memories_constitutional_no_soft_delete",
            "agent_memories_constitutional_no_delete",
            "audit_logs_append_only_update",
            "audit_logs_append_only_delete",
            "audit_contents_redaction_only",
        } <= names
    else:
        names = set(db.session.scalars(text("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")))
        assert {
            "agent_memories_constitutional_guard",
            "audit_logs_append_only",
            "audit_contents_redaction_only",
        } <= names


def test_app_factory_opens_no_connection(monkeypatch, database_url):
    """create_app() builds everything lazily: no database or Redis connection at build time."""
    import sqlalchemy.engine.base as engine_base

    from console import create_app

    opened = []
    original = engine_base.Connection.__init__

    def spy(self, *args, **kwargs):
        opened.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(engine_base.Connection, "__init__", spy)
    app = create_app({"TESTING": True, "DATABASE_URL": database_url, "REDIS_URL": "redis://127.0.0.1:1/0"})
    assert opened == []
    assert app.extensions["rq"]._connection is None
