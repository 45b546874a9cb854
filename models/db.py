"""The SQLAlchemy handle, time helpers and the transaction boundary every mutation uses."""

from __future__ import annotations

import logging
import math
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast

from flask_sqlalchemy import SQLAlchemy
from flask_sqlalchemy.session import Session as FlaskSession
from sqlalchemy import Engine, MetaData, Select, event, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.sql.util import find_tables

# Stable constraint names so Alembic revisions are identical on SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# ----- read replica (docs/how-to/scaling-out.md, "A PostgreSQL read replica") -----
# With DATABASE_REPLICA_URL set, the app has a second engine (the "replica" bind). A request that opts in
# (console pages answering GET, memory.query) sends its *plain reads* there: SELECTs without FOR UPDATE,
# outside every atomic() block, on no table below. Everything else goes to the primary: every write, every
# flush, every statement inside atomic() — so the mutation path, which locks and reads inside atomic(),
# never reads the replica — and whatever decides who may do what: admins and their session tokens, and
# the Mechanic's grants (a revoked grant or a rotated token must stop working at once, not after the lag).
REPLICA = "replica"
PRIMARY_ONLY_TABLES = frozenset({"users", "mechanic_grants", "mechanic_views"})


class RoutingSession(FlaskSession):
    """Flask-SQLAlchemy's session, sending an opted-in session's plain reads to the replica."""

    def get_bind(self, mapper=None, clause=None, bind=None, **kwargs):
        if bind is None and self.info.get(REPLICA) and not self.info.get(DEPTH) and not self._flushing:
            replica = self._db.engines.get(REPLICA)
            if replica is not None and _plain_read(clause):
                return replica
        return super().get_bind(mapper=mapper, clause=clause, bind=bind, **kwargs)


def _plain_read(clause) -> bool:
    if not isinstance(clause, Select) or clause._for_update_arg is not None:
        return False
    return not any(
        getattr(table, "name", None) in PRIMARY_ONLY_TABLES
        for table in find_tables(clause, include_joins=True)
    )


def read_from_replica() -> bool:
    """Let this request's plain reads go to the replica, when one is configured; True if so."""
    if REPLICA not in db.engines:
        return False
    db.session.info[REPLICA] = True
    return True


# Every engine the app creates (the primary, the replica) keeps statement parameters out of its errors: a
# driver error's message would otherwise quote them (`[parameters: {'content': ...}]`), and job failures
# and logs carry that message (docs/explanation/architecture.md, "Privacy: who may read memory text").
db = SQLAlchemy(
    metadata=MetaData(naming_convention=NAMING),
    session_options={"class_": RoutingSession},
    engine_options={"hide_parameters": True},
)


def end_read() -> None:
    """End a transaction that only read, with COMMIT where a request would otherwise end it with ROLLBACK.
    To the database the two are the same (nothing was written); to psycopg they are not: at a ROLLBACK it
    forgets every statement it has prepared on the connection (the transaction may have dropped what they
    name), so memory.query, whose requests all ended so, never had its ranking statement prepared and
    PostgreSQL parsed it afresh for every question. Only for a caller whose transaction holds no writes:
    any that were there would be kept."""
    db.session.commit()


# The base class of every table. At run time it is Flask-SQLAlchemy's `db.Model`; mypy cannot see through
# that attribute, so it checks the tables against SQLAlchemy's declarative base, which gives the same
# `Mapped[...]` column types.
if TYPE_CHECKING:
    from typing import ClassVar

    from sqlalchemy import Table
    from sqlalchemy.orm import DeclarativeBase

    class Model(DeclarativeBase):
        __table__: ClassVar[Table]  # every table here is a plain Table, as Core statements need

else:
    Model = db.Model


_Mapped = TypeVar("_Mapped")


def refresh_loaded(model: type[_Mapped], ident: int, values: dict) -> _Mapped | None:
    """Give the session's copy of a row, if it holds one, the column values just read or written with
    Core, as a fresh load with `populate_existing` would: a caller that loaded the row earlier (a route
    that checked its category, a job's loop) sees the change, and nothing is left for a flush to write.
    Returns that copy, or None when the session holds none."""
    session = db.session()
    instance = session.identity_map.get(session.identity_key(model, ident))
    if instance is not None:
        for name, value in values.items():
            set_committed_value(instance, name, value)
    # The identity map holds, under `model`'s identity key, only an instance of `model`.
    return cast("_Mapped | None", instance)


def utcnow() -> datetime:
    """Naive UTC with microseconds: stored the same way on SQLite and PostgreSQL, so snapshots round-trip exactly."""
    return datetime.now(UTC).replace(tzinfo=None)


LIKE_ESCAPE = "\\"  # the ESCAPE character `like_pattern` writes


def like_pattern(text: str, *, before: str = "%", after: str = "%") -> str:
    """`text` as a literal inside a SQL LIKE pattern with ESCAPE LIKE_ESCAPE: its own %, _ and
    backslash match themselves; only `before` and `after` (a substring match by default) are wildcards."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return before + escaped + after


def estimate_tokens(text: str | None) -> int:
    """The one token estimate of the product: ceil(len / 4), OpenAI's rough heuristic."""
    return math.ceil(len(text or "") / 4)


# The transaction rule (docs/explanation/governance.md, "The transaction rule"): the caller owns the unit of
# work. The outermost atomic() block is that unit and commits when it exits cleanly. Every atomic() entered
# while a transaction is already open (an outer block, or work the caller staged before calling) runs in a
# SAVEPOINT, so a refusal rolls back only its own statements and leaves the caller's work to the caller,
# neither committed nor lost.
DEPTH = "atomic_depth"
JOIN = "atomic_join_children"
COMMITTED = "atomic_units_committed"  # outermost atomic() blocks this session has committed


@contextmanager
def atomic(*, propagates: bool = False) -> Iterator[None]:
    """One unit of work around the block: a transaction at the outermost level, a SAVEPOINT inside one.

    `propagates=True` is the caller's promise that nothing in the block catches an exception and
    carries on: whatever fails inside fails the whole block. atomic() blocks nested directly in such
    a block then join it instead of opening SAVEPOINTs of their own (two round trips each), since
    rolling back the whole block is exactly what a failure inside them leads to anyway. The
    refinement toolbox's calls are the case: one tool call, one mutation, all or nothing.
    """
    session = db.session()  # the Session itself, not the scoped proxy
    depth = session.info.get(DEPTH, 0)
    parent_joins = session.info.get(JOIN, False)
    owner = depth == 0
    joined = _begin_writing(session) if owner else True
    session.info[DEPTH] = depth + 1
    session.info[JOIN] = propagates
    try:
        if joined and not (parent_joins and not owner):
            with session.begin_nested():
                yield
        else:
            yield
        if owner:
            session.commit()
            session.info[COMMITTED] = session.info.get(COMMITTED, 0) + 1
    except BaseException:
        if owner and not joined:
            session.rollback()
        raise
    finally:
        session.info[DEPTH] = depth
        session.info[JOIN] = parent_joins


# ----- retrying a unit of work the database aborted -----
# PostgreSQL aborts a transaction it had to choose as a deadlock's victim (40P01), or one that cannot be
# serialized with another (40001). Nothing of it was kept, and running it again usually succeeds: a
# conflict with another writer is a reason to wait, not to fail the caller.
RETRY_SQLSTATES = frozenset({"40P01", "40001"})
MAX_RETRIES = 3
RETRY_PAUSE = 0.02  # seconds before the first retry; doubled for each next one, jittered by +-50%

_T = TypeVar("_T")


def is_retryable(error: BaseException) -> bool:
    """Whether the database aborted this statement's transaction for a deadlock or a serialization
    failure: the whole unit of work may be run again."""
    return getattr(getattr(error, "orig", error), "sqlstate", None) in RETRY_SQLSTATES


def retrying(work: Callable[[], _T], *, retries: int = MAX_RETRIES) -> _T:
    """Run `work`, a whole unit of work, again (up to `retries` times, after a short jittered pause) when
    the database aborted it for a deadlock or a serialization failure.

    Only from outside every atomic() block: a retry re-runs the whole transaction, never a SAVEPOINT in
    one (inside a block, `work` runs once and the outermost caller decides). Only while `work` has
    committed nothing: once one of its units of work is committed, running it again would apply that one
    twice, so the error is raised. The session is rolled back before each retry, so reads are fresh."""
    session = db.session()
    if session.info.get(DEPTH):
        return work()
    for attempt in range(retries + 1):
        committed = session.info.get(COMMITTED, 0)
        try:
            return work()
        except DBAPIError as error:
            if attempt == retries or not is_retryable(error) or session.info.get(COMMITTED, 0) != committed:
                raise
            session.rollback()
            state = getattr(error.orig, "sqlstate", None)
            log.info(
                "database aborted a unit of work (SQLSTATE %s); retry %d of %d", state, attempt + 1, retries
            )
            time.sleep(RETRY_PAUSE * 2**attempt * random.uniform(0.5, 1.5))
    raise AssertionError("unreachable: the last attempt returns or raises")


def _begin_writing(session) -> bool:
    """Open the transaction a write will run in; True when it joins one the caller already had open.

    SQLite has no row locks: a writer must hold the database's write lock before it reads what it
    is about to snapshot, or it may read a version another writer has since replaced. So a write
    transaction starts with BEGIN IMMEDIATE; a read-only transaction the caller left open is ended
    first (it holds nothing worth keeping, and its read snapshot may be stale); one that has
    already written holds the lock, and is joined. PostgreSQL needs none of this: the mutation
    path's SELECT ... FOR UPDATE waits for and returns the newest row version.
    """
    if session.get_bind().dialect.name != "sqlite":
        return session.in_transaction()
    if session.in_transaction():
        session.flush()
        info = session.connection().info
        if info.get("immediate") or info.get("wrote"):
            return True
        session.rollback()  # it only read (pending objects were flushed above): nothing to lose
    token = _IMMEDIATE.set(True)
    try:
        session.connection()  # fires the engine's "begin" event (configure_engine): BEGIN IMMEDIATE
    finally:
        _IMMEDIATE.reset(token)
    return False


_IMMEDIATE: ContextVar[bool] = ContextVar("sqlite_begin_immediate", default=False)
WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")  # statements that take SQLite's write lock
GUARD_SETTING = "memconsole.guard"  # PostgreSQL: transaction-local; SQLite: memconsole_guard() per connection
# SQLite: how often a process refreshes the planner's statistics (PRAGMA optimize): every OPTIMIZE_SECONDS,
# or sooner once it has committed OPTIMIZE_WRITES write transactions since the last time; each ANALYZE it
# runs reads a sample of ANALYSIS_LIMIT rows per index.
OPTIMIZE_SECONDS = 60.0
OPTIMIZE_WRITES = 1000
ANALYSIS_LIMIT = 1000
BUSY_TIMEOUT_MS = 30_000  # SQLite: how long a statement waits for another connection's write lock
# PostgreSQL: the longest statement, and the most parameters, psycopg keeps converted
# (`_cache_long_statements`).
PSYCOPG_CACHED_STATEMENT_BYTES = 32_768
PSYCOPG_CACHED_STATEMENT_PARAMS = 128
log = logging.getLogger(__name__)


def configure_engine(engine: Engine) -> None:
    """Connection setup the transaction rule and the database guards rely on (called by the app factory).

    SQLite: foreign keys on, WAL so the web process and workers share the file, a busy timeout; the
    driver's own transaction handling switched off and done here instead, the same way (reads see the
    newest commit, the first write begins a transaction) except that `atomic()` begins with BEGIN
    IMMEDIATE, and SAVEPOINTs work; and the `memconsole_guard()` function the guard triggers of migration 0008 call,
    registered on every connection the app opens (a raw `sqlite3` shell has no such function, so those
    triggers refuse it). And statistics for the query planner, which SQLite keeps only when asked
    (`_keep_statistics`).
    """
    if engine.dialect.name == "postgresql":
        _cache_long_statements()
    if engine.dialect.name != "sqlite":
        return

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn, record):
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute(f"PRAGMA analysis_limit={ANALYSIS_LIMIT}")
        cursor.close()
        holder = record.info["guard"] = {"value": ""}
        dbapi_conn.create_function("memconsole_guard", 0, lambda: holder["value"])

    @event.listens_for(engine, "begin")
    def _begin(conn):
        immediate = _IMMEDIATE.get()
        conn.info["immediate"], conn.info["wrote"] = immediate, False
        if immediate:
            conn.exec_driver_sql("BEGIN IMMEDIATE")

    @event.listens_for(engine, "before_cursor_execute")
    def _begin_on_write(conn, cursor, statement, parameters, context, executemany):
        # As the driver's own default did: reads outside a write transaction see the newest commit,
        # and the first write begins the transaction (deferred) that COMMIT or ROLLBACK ends.
        if statement.lstrip()[:7].upper().startswith(WRITES):
            if not cursor.connection.in_transaction:
                cursor.execute("BEGIN")
            conn.info["wrote"] = True

    write_committed = _keep_statistics(engine)

    @event.listens_for(engine, "commit")
    def _committed(conn):
        if conn.info.get("wrote"):
            write_committed()
        _end(conn)

    @event.listens_for(engine, "rollback")
    def _end(conn):
        conn.info["immediate"] = conn.info["wrote"] = False
        guard = conn.connection.info.get("guard") if conn.connection is not None else None
        if guard is not None:
            guard["value"] = ""


def _cache_long_statements() -> None:
    """psycopg turns a statement's `%(name)s` placeholders into PostgreSQL's `$n` by parsing its text, and
    remembers the result only for statements of at most 4,096 bytes and 50 parameters
    (`MAX_CACHED_STATEMENT_LENGTH`, `MAX_CACHED_STATEMENT_PARAMS`: they keep the many different huge
    INSERTs an ORM can send out of its 128-entry cache). memory.query's ranking statement (5.7-15.8 KB for
    bench.nl_latency's questions) is one of a bounded set of shapes (`query.statement`'s own cache), run
    on every question:

    - parsed again each time (0.07-0.1 ms alone, ad hoc), it was a tenth of an API worker's samples
      holding the GIL under read-only load (py-spy --gil);
    - with vectors it binds more than 50 parameters when many of the question's words score: 55-59 for
      bench.nl_latency's questions at 100,000 memories, nearly half the hybrid ones, each parsed again
      in about 0.5 ms on a slow machine (ad hoc). Each filter a request sets binds one more (ten in all).

    Both raised for the process, to PSYCOPG_CACHED_STATEMENT_BYTES and PSYCOPG_CACHED_STATEMENT_PARAMS,
    past the largest of those shapes. A multi-row INSERT small enough to be cached now costs one entry of
    the LRU. Where a psycopg release no longer has the settings, nothing changes, and
    test_psycopg_keeps_memory_querys_statements_converted says so."""
    from psycopg import _queries

    raised = {
        "MAX_CACHED_STATEMENT_LENGTH": PSYCOPG_CACHED_STATEMENT_BYTES,
        "MAX_CACHED_STATEMENT_PARAMS": PSYCOPG_CACHED_STATEMENT_PARAMS,
    }
    for name, wanted in raised.items():
        limit = getattr(_queries, name, None)
        if limit is not None and limit < wanted:
            setattr(_queries, name, wanted)


def _keep_statistics(engine: Engine) -> Callable[[], None]:
    """SQLite keeps no statistics unless ANALYZE runs, and without them its planner guesses: for
    memory.query on an agent serving one user it walked all of the user's memories along their recency
    index instead of looking the few matches up by id (a bench.peers question, 2,500 memories: 133,000
    virtual-machine steps hybrid, 92,000 with statistics; lexical 91,000 and 50,000). SQLite's advice for
    connections that live long: PRAGMA optimize from time to time, which analyzes the tables this
    connection used whose statistics are missing or stale. Here: when a connection goes back to the
    pool, at most every OPTIMIZE_SECONDS per process (the first that long after start-up), or sooner
    once the process has committed OPTIMIZE_WRITES write transactions since the last time (a fresh
    database filling fast, as an import or a new deployment does, gets statistics within its first
    thousand changes rather than after a minute of questions planned blind); giving up at once rather
    than waiting for a writer's lock (a later turn tries again). Returns what the engine calls when a
    write transaction commits."""
    state = {"last": time.monotonic(), "writes": 0}

    @event.listens_for(engine, "checkin")
    def _optimize(dbapi_conn, record):
        now = time.monotonic()
        if dbapi_conn is None:
            return
        if now - state["last"] < OPTIMIZE_SECONDS and state["writes"] < OPTIMIZE_WRITES:
            return
        state["last"], state["writes"] = now, 0
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute("PRAGMA busy_timeout=0")
            cursor.execute("PRAGMA optimize")
        except sqlite3.Error as error:  # busy, or read-only: statistics can wait
            log.info("sqlite: PRAGMA optimize skipped (%s)", error)
        finally:
            cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            cursor.close()

    def write_committed() -> None:
        state["writes"] += 1

    return write_committed


@contextmanager
def guard_privilege(kind: str) -> Iterator[None]:
    """Open the database's constitutional guard for the statements in the block (migration 0008).

    `kind` is "admin" (an admin edits or unprotects a constitutional memory) or "timemachine" (a
    rollback restores exactly what the audit log recorded). Outside such a block, every UPDATE of a
    constitutional row's content, type or tags, and any clearing of its flag, is refused by the
    database itself, whoever sends it. Transaction-local on PostgreSQL; on SQLite, per connection and
    reset at commit or rollback. On an error the enclosing SAVEPOINT or transaction rolls the
    setting back with everything else.
    """
    if kind not in ("admin", "timemachine"):
        raise ValueError(f"unknown guard privilege {kind!r}")
    _set_guard(kind)
    try:
        yield
    except BaseException:
        if db.session.get_bind().dialect.name == "sqlite":  # not transactional there: reset by hand
            _set_guard("")
        raise
    _set_guard("")


def _set_guard(value: str) -> None:
    connection = db.session.connection()
    if connection.dialect.name == "sqlite":
        connection.connection.info["guard"]["value"] = value
    else:
        connection.execute(
            text("SELECT set_config(:name, :value, true)"), {"name": GUARD_SETTING, "value": value}
        )


def binary_rows(stmt: Select) -> list[Any]:
    """The rows of `stmt`, in the session's transaction. With psycopg they come in binary format:
    bytea columns (vectors) arrive as raw bytes rather than hex text, several times faster for
    large agents."""
    connection = db.session.connection()
    if connection.dialect.name != "postgresql" or connection.dialect.driver != "psycopg":
        return list(db.session.execute(stmt).all())
    compiled = stmt.compile(dialect=connection.dialect, compile_kwargs={"render_postcompile": True})
    raw: Any = connection.connection.dbapi_connection  # psycopg's Connection: cursor(binary=True)
    with raw.cursor(binary=True) as cursor:
        cursor.execute(str(compiled), compiled.params)
        return list(cursor.fetchall())
