"""database guards that hold against raw SQL, and ids that are never reused

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22

The model layer refuses first, with a clear error; these guards refuse whatever the model layer is
bypassed by (a psql session, a `sqlite3` shell, a buggy job):

- A constitutional memory is frozen: no UPDATE of its content, memory_type or tags and no clearing of
  its flag, unless the transaction carries the app's guard privilege, which the mutation path sets
  only for an admin's edit or unprotect and for a Time Machine rollback (`models.db.guard_privilege`).
  PostgreSQL reads the transaction-local setting `memconsole.guard`; SQLite calls the function
  `memconsole_guard()`, which the app registers on each of its connections — a raw `sqlite3` shell
  has no such function, so its UPDATEs of those columns are refused outright.
- No memory ever changes owner (agent_id), whoever asks: history is filed per agent.
- PostgreSQL: TRUNCATE is refused on every table that holds memories or their history
  (`audit_logs` already refused it).
- SQLite reuses the highest freed rowid, so a purged memory's id could be handed to another agent's
  new memory and the audit log would then name two memories with one id. The tables whose ids the
  audit log names are rebuilt with AUTOINCREMENT, their sequences started above every id the audit
  log has ever named. PostgreSQL sequences never reuse ids.
"""

import re

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

PRIVILEGED = "('admin', 'timemachine')"
# Tables that hold memories or their history: TRUNCATE on any of them (or a CASCADE reaching one) is refused.
HISTORY_TABLES = (
    "agents",
    "agent_memories",
    "audit_contents",
    "refinement_sessions",
    "events",
    "change_log",
    "thread_revisions",
    "proposed_patches",
    "mechanic_grants",
    "mechanic_views",
)
# SQLite tables whose ids the audit log names, with the audit columns that name them (the sequence
# starts above the highest id ever named, so even an id freed before this migration is not reused).
AUTOINCREMENT = {
    "agents": ("SELECT max(agent_id) FROM audit_logs",),
    "agent_memories": ("SELECT max(memory_id) FROM audit_logs", "SELECT max(memory_id) FROM audit_contents"),
    "refinement_sessions": ("SELECT max(session_id) FROM audit_logs",),
    "audit_contents": (),
}

POSTGRES_GUARD = f"""CREATE OR REPLACE FUNCTION guard_constitutional_memory() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.constitutional THEN
      RAISE EXCEPTION 'constitutional memory % cannot be deleted', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    RETURN OLD;
  END IF;
  IF NEW.agent_id <> OLD.agent_id THEN
    RAISE EXCEPTION 'memory % cannot change owner', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF OLD.constitutional AND (NEW.content IS DISTINCT FROM OLD.content
                             OR NEW.memory_type IS DISTINCT FROM OLD.memory_type
                             OR NEW.tags::text IS DISTINCT FROM OLD.tags::text
                             OR NOT NEW.constitutional)
     AND coalesce(current_setting('memconsole.guard', true), '') NOT IN {PRIVILEGED} THEN
    RAISE EXCEPTION 'constitutional memory % is frozen', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF OLD.constitutional AND OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN
    RAISE EXCEPTION 'constitutional memory % cannot be deleted', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF (OLD.constitutional OR NEW.constitutional) AND NEW.purge_at IS NOT NULL THEN
    RAISE EXCEPTION 'constitutional memory % cannot be purged', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql"""

POSTGRES_GUARD_0001 = """CREATE OR REPLACE FUNCTION guard_constitutional_memory() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.constitutional THEN
      RAISE EXCEPTION 'constitutional memory % cannot be deleted', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    RETURN OLD;
  END IF;
  IF OLD.constitutional AND OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN
    RAISE EXCEPTION 'constitutional memory % cannot be deleted', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF (OLD.constitutional OR NEW.constitutional) AND NEW.purge_at IS NOT NULL THEN
    RAISE EXCEPTION 'constitutional memory % cannot be purged', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql"""

SQLITE_GUARDS = [
    """CREATE TRIGGER agent_memories_no_owner_change
    BEFORE UPDATE OF agent_id ON agent_memories
    WHEN NEW.agent_id IS NOT OLD.agent_id
    BEGIN SELECT RAISE(ABORT, 'a memory cannot change owner'); END""",
    f"""CREATE TRIGGER agent_memories_constitutional_frozen
    BEFORE UPDATE OF content, memory_type, tags, constitutional ON agent_memories
    WHEN OLD.constitutional = 1
         AND (NEW.content IS NOT OLD.content OR NEW.memory_type IS NOT OLD.memory_type
              OR NEW.tags IS NOT OLD.tags OR NEW.constitutional = 0)
         AND memconsole_guard() NOT IN {PRIVILEGED}
    BEGIN SELECT RAISE(ABORT, 'constitutional memory is frozen'); END""",
]


def upgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute(POSTGRES_GUARD)
        op.execute(
            """CREATE FUNCTION reject_truncate() RETURNS trigger AS $$
            BEGIN
              RAISE EXCEPTION '% holds memories or their history and cannot be truncated', TG_TABLE_NAME
                USING ERRCODE = 'insufficient_privilege';
            END $$ LANGUAGE plpgsql"""
        )
        for table in HISTORY_TABLES:
            op.execute(
                f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
                "FOR EACH STATEMENT EXECUTE FUNCTION reject_truncate()"
            )
        return
    _sqlite_rebuild_with_autoincrement()
    for statement in SQLITE_GUARDS:
        op.execute(statement)


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        for table in HISTORY_TABLES:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table}")
        op.execute("DROP FUNCTION IF EXISTS reject_truncate()")
        op.execute(POSTGRES_GUARD_0001)
        return
    op.execute("DROP TRIGGER IF EXISTS agent_memories_no_owner_change")
    op.execute("DROP TRIGGER IF EXISTS agent_memories_constitutional_frozen")
    # The tables keep AUTOINCREMENT: never reusing an id is correct under every revision.


def _sqlite_rebuild_with_autoincrement() -> None:
    """SQLite's documented procedure for a schema change ALTER TABLE cannot make: with foreign keys off
    (which only takes effect outside a transaction), in one transaction per table, create the new
    table, copy the rows with their ids, drop the old one, rename the new one, and re-create the old
    one's indexes and triggers from their saved SQL; then check every foreign key."""
    dbapi = op.get_bind().connection.dbapi_connection
    if dbapi.in_transaction:
        dbapi.commit()  # the revisions before this one; SQLite DDL here is not transactional anyway
    dbapi.execute("PRAGMA foreign_keys=OFF")
    dbapi.execute("PRAGMA legacy_alter_table=ON")  # the rename must not rewrite other tables' triggers
    try:
        for table, high_water in AUTOINCREMENT.items():
            (create,) = dbapi.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
            if "AUTOINCREMENT" in create.upper():
                continue
            dependents = [
                sql
                for (sql,) in dbapi.execute(
                    "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') "
                    "AND sql IS NOT NULL ORDER BY type, name",
                    (table,),
                )
            ]
            columns = [row[1] for row in dbapi.execute(f"PRAGMA table_info({table})")]
            new = _with_autoincrement(create, table)
            column_list = ", ".join(columns)
            dbapi.execute("BEGIN IMMEDIATE")
            dbapi.execute(new.replace(f"CREATE TABLE {table} ", f"CREATE TABLE {table}_rebuilt ", 1))
            dbapi.execute(f"INSERT INTO {table}_rebuilt ({column_list}) SELECT {column_list} FROM {table}")
            dbapi.execute(f"DROP TABLE {table}")
            dbapi.execute(f"ALTER TABLE {table}_rebuilt RENAME TO {table}")
            for sql in dependents:
                dbapi.execute(sql)
            marks = [dbapi.execute(query).fetchone()[0] for query in (f"SELECT max(id) FROM {table}", *high_water)]
            start = max([m for m in marks if m is not None], default=0)
            dbapi.execute("DELETE FROM sqlite_sequence WHERE name = ?", (table,))
            dbapi.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (table, start))
            problems = dbapi.execute("PRAGMA foreign_key_check").fetchall()
            if problems:
                dbapi.execute("ROLLBACK")
                raise RuntimeError(f"rebuilding {table} would break foreign keys: {problems[:5]}")
            dbapi.execute("COMMIT")
    finally:
        dbapi.execute("PRAGMA legacy_alter_table=OFF")
        dbapi.execute("PRAGMA foreign_keys=ON")


def _with_autoincrement(create: str, table: str) -> str:
    """The CREATE TABLE statement with its `id` column as INTEGER PRIMARY KEY AUTOINCREMENT."""
    pk = re.compile(rf",\s*CONSTRAINT pk_{table} PRIMARY KEY \(id\)")
    column = re.compile(r"\bid INTEGER NOT NULL,")
    if not pk.search(create) or not column.search(create):
        raise RuntimeError(f"unexpected schema for {table}; cannot add AUTOINCREMENT")
    create = pk.sub("", create, count=1)
    return column.sub(f"id INTEGER NOT NULL CONSTRAINT pk_{table} PRIMARY KEY AUTOINCREMENT,", create, count=1)
