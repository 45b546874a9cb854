"""The memory rows the mutation path changes: locked, read, written and snapshotted with Core statements.

Shared by every module that writes `agent_memories` row by row (`mutations.py`, `ttl.py`, the Time
Machine; `dedup.py` is set-based): each loads its rows here, locked before their "before" state is read
(docs/explanation/architecture.md, "Transactions"), writes them here, and hands its caller ORM objects made
here.

The mutation path works on plain dicts of every column, with statements built once and bound at
execution, and hands its callers ORM objects only at the end (`as_objects`), without a query: loading
objects and the unit-of-work flush would cost a tool call more than its statements do.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from sqlalchemy import Select, bindparam, literal_column, select, update
from sqlalchemy.orm import make_transient_to_detached

from models.agents.agent import Agent
from models.db import db, refresh_loaded, utcnow
from models.errors import NotFound, ValidationFailed
from models.history.audit import (
    AuditContent,
    file_content,
    insert_many,
    insert_one,
    latest_contents,
    newest_content_columns,
    remember_content_ref,
    snapshot_values,
    text_sha,
)
from models.memories.memory import AgentMemory, content_fields

MEMORIES = AgentMemory.__table__
COLUMNS = tuple(column.name for column in MEMORIES.c)  # every column of the row, content included
_UPDATE = update(MEMORIES).where(MEMORIES.c.id.in_(bindparam("locked_ids", expanding=True)))
_INSERT = insert_one(MEMORIES)
AGENTS = Agent.__table__
_LOCK_AGENT = select(AGENTS.c.id).where(AGENTS.c.id == bindparam("agent_id")).with_for_update(key_share=True)
Row = dict[str, Any]  # one memory: column name -> value


def _check_id(memory_id: Any) -> None:
    if isinstance(memory_id, bool) or not isinstance(memory_id, int):
        raise ValidationFailed(f"memory id must be an integer, not {type(memory_id).__name__}")


def lock_rows(agent_id: int, memory_ids: list[int]) -> dict[int, Row]:
    """These memories of this agent, row-locked for the transaction and read fresh.

    The lock comes first and the snapshot is taken from what it returns, so a change committed by
    someone else meanwhile is seen, never overwritten (the statement autoflushes whatever the caller's
    session held pending, and `as_objects` later refreshes the caller's stale copies). PostgreSQL
    locks the agent's row first (`_locked_agent`), then the memory rows, ids in order, so two writers
    cannot deadlock; SQLite's write lock is already held (`atomic()` begins write transactions
    IMMEDIATE).
    """
    postgres = db.session.get_bind().dialect.name == "postgresql"
    rows = db.session.execute(_lock_statement(postgres), {"ids": memory_ids, "agent_id": agent_id}).all()
    found: dict[int, Row] = {}
    moved: list[int] = []
    width = len(COLUMNS)
    for row in rows:
        memory = dict(zip(COLUMNS, row, strict=False))
        content_id, sha, *versions = row[width:]
        found[memory["id"]] = memory
        if versions and versions[0] != versions[1]:
            moved.append(memory["id"])  # committed by another writer while we waited for its lock
        else:
            remember_content_ref(memory["id"], content_id, sha)  # the before-snapshot reads no more
    # PostgreSQL (READ COMMITTED): when the lock had to wait, FOR UPDATE returns the newest row version
    # but evaluates the statement's subqueries — the newest text reference above — in the snapshot
    # taken before the wait. A row whose version moved meanwhile has its reference read again, in a
    # statement of its own (a fresh snapshot); the uncontended path stays one statement.
    for memory_id, (content_id, sha) in (latest_contents(moved) if moved else {}).items():
        remember_content_ref(memory_id, content_id, sha)
    return found


@functools.cache
def _lock_statement(postgres: bool) -> Select:
    """The locking read, built once per dialect (every tool call locks its rows through here, and building
    the statement costs more than running it); the ids and the agent are bound at execution. Every column, then the
    newest filed text's reference, then (PostgreSQL) the row versions."""
    owner = _locked_agent() if postgres else bindparam("agent_id")
    return (
        select(*MEMORIES.c, *newest_content_columns(), *(_version_columns() if postgres else ()))
        .where(MEMORIES.c.id.in_(bindparam("ids", expanding=True)), MEMORIES.c.agent_id == owner)
        .order_by(MEMORIES.c.id)
        .with_for_update(of=MEMORIES)
    )


def _locked_agent() -> Any:
    """PostgreSQL: the agent's id, read with the agent row locked FOR NO KEY UPDATE (the lock the counter
    trigger of migrations 0005/0021 takes when the write changes the agent's figures), as an InitPlan
    that runs before the first memory row is locked. Every writer of an agent's memories thus takes the
    agent row first and its memory rows after, and the trigger finds the agent row already held: two
    writers of different memories of one agent queue on the agent instead of each holding a memory row
    while waiting for the agent row behind the other (a deadlock PostgreSQL broke by aborting one)."""
    return (
        select(AGENTS.c.id)
        .where(AGENTS.c.id == bindparam("agent_id"))
        .with_for_update(key_share=True)
        .scalar_subquery()
    )


def lock_agents(agent_ids: Select) -> None:
    """`lock_agent` for the agents a statement names, in id order (two such writers cannot deadlock), for a
    set-based write over several agents' memories (dedup). PostgreSQL only, like `lock_agent`."""
    if db.session.get_bind().dialect.name == "postgresql":
        db.session.execute(
            select(AGENTS.c.id)
            .where(AGENTS.c.id.in_(agent_ids))
            .order_by(AGENTS.c.id)
            .with_for_update(key_share=True)
        )


def lock_agent(agent_id: int) -> None:
    """Take the agent row's write lock now, before any memory row, for a write that changes an agent's
    memories without `lock_rows` first (which takes it itself). PostgreSQL only: SQLite's writer lock,
    taken when `atomic()` began, already serialises every writer."""
    if db.session.get_bind().dialect.name == "postgresql":
        db.session.execute(_LOCK_AGENT, {"agent_id": agent_id})


def _version_columns() -> tuple:
    """PostgreSQL: the locked row version's xmin, and the xmin the statement's snapshot saw."""
    seen = MEMORIES.alias("seen")
    return (
        literal_column("agent_memories.xmin::text").label("locked_version"),
        select(literal_column("seen.xmin::text"))
        .select_from(seen)
        .where(seen.c.id == MEMORIES.c.id)
        .scalar_subquery()
        .label("snapshot_version"),
    )


def load_row(agent_id: int, memory_id: Any, *, active: bool | None = True) -> Row:
    """One memory of this agent, locked and fresh (see `lock_rows`)."""
    _check_id(memory_id)
    memory = lock_rows(agent_id, [memory_id]).get(memory_id)
    # Another agent's memory is reported exactly like a missing one (isolation: no existence oracle).
    if memory is None:
        raise NotFound(f"memory #{memory_id} not found")
    if active is True and memory["deleted_at"] is not None:
        raise NotFound(f"memory #{memory_id} is deleted")
    if active is False and memory["deleted_at"] is None:
        raise ValidationFailed(f"memory #{memory_id} is not deleted")
    return memory


def load_rows(agent_id: int, memory_ids: Any, *, minimum: int = 1) -> list[Row]:
    """Several active memories of this agent, all locked in one statement, in the order given."""
    if not isinstance(memory_ids, list | tuple) or not memory_ids:
        raise ValidationFailed("ids must be a non-empty list of memory ids")
    for memory_id in memory_ids:
        _check_id(memory_id)
    if len(set(memory_ids)) != len(memory_ids):
        raise ValidationFailed("ids contain duplicates")
    if len(memory_ids) < minimum:
        raise ValidationFailed(f"at least {minimum} distinct ids are required")
    found = lock_rows(agent_id, list(memory_ids))
    for memory_id in memory_ids:
        memory = found.get(memory_id)
        if memory is None:
            raise NotFound(f"memory #{memory_id} not found")
        if memory["deleted_at"] is not None:
            raise NotFound(f"memory #{memory_id} is deleted")
    return [found[memory_id] for memory_id in memory_ids]


def write_rows(memories: list[Row], values: dict[str, Any]) -> None:
    """Set the same column values on these locked rows: one UPDATE (the columns it sets are the keys
    given, bound at execution), and on the dicts the after-snapshots are taken from."""
    if not memories:
        return
    db.session.execute(_UPDATE, {"locked_ids": [m["id"] for m in memories], **values})
    for memory in memories:
        memory.update(values)


def snapshot_row(memory: Row, *, new: bool = False) -> dict[str, Any]:
    """Every column as JSON, the content by reference into audit_contents (filed if it is new)."""
    return snapshot_values(
        memory, file_content(memory["id"], memory["content"], memory["token_estimate"], new=new)
    )


def as_objects(memories: list[Row]) -> list[AgentMemory]:
    """The ORM objects the mutation functions return, made without a query: each memory as this write
    left it. The session's own copy of a row (a caller loaded it earlier) takes the values written, as a
    fresh load would; what is returned is a detached copy of its own, which the commit does not expire:
    read after the commit (an API answer is), it still shows this write, not a row another writer has
    changed since."""
    objects = []
    for memory in memories:
        refresh_loaded(AgentMemory, memory["id"], memory)
        obj = AgentMemory(**memory)
        make_transient_to_detached(obj)
        objects.append(obj)
    return objects


def insert_row(
    agent_id: int, fields: dict[str, Any], *, constitutional: bool = False, created_at: datetime | None = None
) -> Row:
    """The new row, every column given (create and consolidate share it); its audit record is the caller's."""
    now = utcnow()
    memory: Row = dict.fromkeys(COLUMNS)
    memory.update(
        {k: v for k, v in fields.items() if k != "content"},
        **content_fields(fields["content"]),
        agent_id=agent_id,
        constitutional=constitutional,
        created_at=created_at or now,
        updated_at=now,
    )
    del memory["id"]
    memory["id"] = db.session.execute(_INSERT, memory).scalar_one()
    return memory


def read_rows(agent_id: int, memory_ids: list[int]) -> dict[int, Row]:
    """These memories of this agent as they are, unlocked (a preview: nothing will be written)."""
    stmt = select(MEMORIES).where(MEMORIES.c.id.in_(memory_ids), MEMORIES.c.agent_id == agent_id)
    return {row["id"]: dict(row) for row in db.session.execute(stmt).mappings()}


def write_each(changes: list[tuple[Row, dict[str, Any]]]) -> None:
    """Set each locked row's own values (the same columns for all): one executemany UPDATE, and on the
    dicts; the session's loaded copies, if any, see the values as a fresh load would."""
    if not changes:
        return
    names = sorted(changes[0][1])
    stmt = (
        update(MEMORIES)
        .where(MEMORIES.c.id == bindparam("row_id"))
        .values({name: bindparam(f"new_{name}") for name in names})
    )
    db.session.execute(
        stmt, [{"row_id": row["id"], **{f"new_{n}": values[n] for n in names}} for row, values in changes]
    )
    for row, values in changes:
        row.update(values)
        refresh_loaded(AgentMemory, row["id"], values)


def file_texts(memories: list[Row]) -> list[int]:
    """File these rows' current texts as their newest audit_contents rows, in one multi-row INSERT; the
    new rows' ids, in order (the set-based `file_content`, for the Time Machine's many rows)."""
    if not memories:
        return []
    values = [
        {
            "memory_id": m["id"],
            "sha256": text_sha(m["content"]),
            "content": m["content"],
            "token_estimate": m["token_estimate"],
        }
        for m in memories
    ]
    ids = list(db.session.scalars(insert_many(AuditContent.__table__), values).all())
    for value, content_id in zip(values, ids, strict=True):
        remember_content_ref(value["memory_id"], content_id, value["sha256"])
    return ids
