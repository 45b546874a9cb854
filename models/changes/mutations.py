"""The one mutation path: every change to a memory row, each written with its audit record.

Views, the agent API, the refinement tools and the jobs call these functions; nothing else
writes `agent_memories`. Each function runs in `atomic()`, so the row change and its audit
record commit together or not at all, and each call shares one `op_id` across its records,
which is the unit the Time Machine rolls back.

Actors: ``agent`` (the agent itself, through its API or a refinement session), ``admin:<id>``
(a human in the console or on the CLI) and ``system:<job>`` (a scheduled job). Agents and jobs
are "agent paths": they can never delete, consolidate or purge a constitutional memory, nor
touch a memory tagged audio, somatic or voice.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, and_, bindparam, delete, func, literal_column, select, tuple_, update
from sqlalchemy.orm import make_transient_to_detached

from models.agents import quotas
from models.agents.agent import Agent
from models.db import atomic, db, guard_privilege, refresh_loaded, utcnow
from models.errors import ConstitutionalLocked, ImmutableMemory, NotFound, ValidationFailed
from models.history.audit import (
    CHUNK,
    AuditContent,
    file_content,
    insert_one,
    latest_content_refs,
    latest_contents,
    new_op_id,
    newest_content_columns,
    remember_content_ref,
    snapshot_values,
    write_audit,
    write_audits,
)
from models.memories.fields import MAX_CONTENT_CHARS, MAX_TAG_CHARS, MAX_TAGS, SCOPING_FIELDS, check_field
from models.memories.memory import (
    IMMUTABLE_TAGS,
    SNAPSHOT_FIELDS,
    AgentMemory,
    content_fields,
    immutable_tags,
)

AGENT_ACTOR = "agent"
EDITABLE_FIELDS = ("content", "tags", "category", "importance", "pinned", "memory_type") + SCOPING_FIELDS


def is_agent_path(actor: str) -> bool:
    """Agents and scheduled jobs act for the agent; only admins are not bound by the agent locks."""
    return actor == AGENT_ACTOR or actor.startswith("system:")


def is_admin(actor: str) -> bool:
    return actor.startswith("admin:")


def _check_actor(actor: str) -> None:
    if not (actor == AGENT_ACTOR or is_admin(actor) or actor.startswith("system:")):
        raise ValidationFailed(f"unknown actor {actor!r}")


# ----- validation: every rule raises ValidationFailed before anything is written -----


def clean_content(content: Any) -> str:
    """Content as stored: text, stripped, non-empty, at most 10,000 characters."""
    if not isinstance(content, str):
        raise ValidationFailed("content must be a string", field="content")
    content = content.strip()
    if not content:
        raise ValidationFailed("content is empty", field="content")
    if len(content) > MAX_CONTENT_CHARS:
        raise ValidationFailed(
            f"content is {len(content):,} characters; the limit is {MAX_CONTENT_CHARS:,}", field="content"
        )
    if "\x00" in content:
        raise ValidationFailed("content contains a NUL character", field="content")
    return content


def clean_tags(tags: Any) -> list[str]:
    if tags is None:
        return []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ValidationFailed("tags must be a list of strings", field="tags")
    cleaned: list[str] = []
    for tag in tags:
        tag = tag.strip()
        if not tag or len(tag) > MAX_TAG_CHARS:
            raise ValidationFailed(f"each tag must be 1-{MAX_TAG_CHARS} characters", field="tags")
        if tag not in cleaned:
            cleaned.append(tag)
    if len(cleaned) > MAX_TAGS:
        raise ValidationFailed(f"at most {MAX_TAGS} tags", field="tags")
    return cleaned


def _clean_fields(fields: dict[str, Any]) -> dict[str, Any]:
    unknown = set(fields) - set(EDITABLE_FIELDS)
    if unknown:
        raise ValidationFailed(f"unknown field(s): {', '.join(sorted(unknown))}")
    cleaned = dict(fields)
    if "content" in cleaned:
        cleaned["content"] = clean_content(cleaned["content"])
    if "tags" in cleaned:
        cleaned["tags"] = clean_tags(cleaned["tags"])
    for (
        name,
        value,
    ) in cleaned.items():  # the field rules (models/memories/fields.py): the columns' limits too
        check_field(name, value)
    return cleaned


def _require_agent(agent_id: int) -> Agent:
    agent = db.session.get(Agent, agent_id)
    if agent is None:
        raise NotFound(f"agent {agent_id} not found")
    return agent


def _check_id(memory_id: Any) -> None:
    if isinstance(memory_id, bool) or not isinstance(memory_id, int):
        raise ValidationFailed(f"memory id must be an integer, not {type(memory_id).__name__}")


# ----- rows: read, written and snapshotted with Core statements -----
# A tool call's cost was the ORM's (loading objects, the unit-of-work flush), not the database's: the
# mutation path works on plain dicts of every column, with statements built once and bound at execution,
# and hands its callers ORM objects only at the end (`_as_objects`), without a query.

MEMORIES = AgentMemory.__table__
COLUMNS = tuple(column.name for column in MEMORIES.c)  # every column of the row, content included
_UPDATE = update(MEMORIES).where(MEMORIES.c.id.in_(bindparam("locked_ids", expanding=True)))
_INSERT = insert_one(MEMORIES)
Row = dict[str, Any]  # one memory: column name -> value


def _locked(agent_id: int, memory_ids: list[int]) -> dict[int, Row]:
    """These memories of this agent, row-locked for the transaction and read fresh.

    The lock comes first and the snapshot is taken from what it returns, so a change committed by
    someone else meanwhile is seen, never overwritten (the statement autoflushes whatever the caller's
    session held pending, and `_as_objects` later refreshes the caller's stale copies). PostgreSQL
    waits on the row lock (ids in order, so two writers cannot deadlock); SQLite's write lock is
    already held (`atomic()` begins write transactions IMMEDIATE).
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
    """The locking read, built once per dialect (building it cost more than running it: every tool call
    locks its rows through here); the ids and the agent are bound at execution. Every column, then the
    newest filed text's reference, then (PostgreSQL) the row versions."""
    return (
        select(*MEMORIES.c, *newest_content_columns(), *(_version_columns() if postgres else ()))
        .where(
            MEMORIES.c.id.in_(bindparam("ids", expanding=True)), MEMORIES.c.agent_id == bindparam("agent_id")
        )
        .order_by(MEMORIES.c.id)
        .with_for_update(of=MEMORIES)
    )


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


def _load(agent_id: int, memory_id: Any, *, active: bool | None = True) -> Row:
    """One memory of this agent, locked and fresh (see `_locked`)."""
    _check_id(memory_id)
    memory = _locked(agent_id, [memory_id]).get(memory_id)
    # Another agent's memory is reported exactly like a missing one (isolation: no existence oracle).
    if memory is None:
        raise NotFound(f"memory #{memory_id} not found")
    if active is True and memory["deleted_at"] is not None:
        raise NotFound(f"memory #{memory_id} is deleted")
    if active is False and memory["deleted_at"] is None:
        raise ValidationFailed(f"memory #{memory_id} is not deleted")
    return memory


def _load_many(agent_id: int, memory_ids: Any, *, minimum: int = 1) -> list[Row]:
    """Several active memories of this agent, all locked in one statement, in the order given."""
    if not isinstance(memory_ids, list | tuple) or not memory_ids:
        raise ValidationFailed("ids must be a non-empty list of memory ids")
    for memory_id in memory_ids:
        _check_id(memory_id)
    if len(set(memory_ids)) != len(memory_ids):
        raise ValidationFailed("ids contain duplicates")
    if len(memory_ids) < minimum:
        raise ValidationFailed(f"at least {minimum} distinct ids are required")
    found = _locked(agent_id, list(memory_ids))
    for memory_id in memory_ids:
        memory = found.get(memory_id)
        if memory is None:
            raise NotFound(f"memory #{memory_id} not found")
        if memory["deleted_at"] is not None:
            raise NotFound(f"memory #{memory_id} is deleted")
    return [found[memory_id] for memory_id in memory_ids]


def _write(memories: list[Row], values: dict[str, Any]) -> None:
    """Set the same column values on these locked rows: one UPDATE (the columns it sets are the keys
    given, bound at execution), and on the dicts the after-snapshots are taken from."""
    db.session.execute(_UPDATE, {"locked_ids": [m["id"] for m in memories], **values})
    for memory in memories:
        memory.update(values)


def _snapshot(memory: Row, *, new: bool = False) -> dict[str, Any]:
    """Every column as JSON, the content by reference into audit_contents (filed if it is new)."""
    return snapshot_values(
        memory, file_content(memory["id"], memory["content"], memory["token_estimate"], new=new)
    )


def _as_objects(memories: list[Row]) -> list[AgentMemory]:
    """The ORM objects the mutation functions return, made without a query: the session's own copy of
    a row (a caller loaded it earlier) takes the values written, as a fresh load would; a row the
    session does not hold gets a new persistent object, clean, with nothing left to flush."""
    objects = []
    for memory in memories:
        obj = refresh_loaded(AgentMemory, memory["id"], memory)
        if obj is None:
            obj = AgentMemory(**memory)
            make_transient_to_detached(obj)
            db.session.add(obj)
        objects.append(obj)
    return objects


def _guard_agent_locks(actor: str, memories: Iterable[Row], verb: str) -> None:
    """Constitutional and immutable-tag locks for agent paths, checked before anything changes."""
    memories = list(memories)
    if is_agent_path(actor):
        locked = [m["id"] for m in memories if m["constitutional"]]
        if locked:
            raise ConstitutionalLocked(
                f"cannot {verb} constitutional memor{'y' if len(locked) == 1 else 'ies'}: "
                + ", ".join(f"#{i}" for i in locked),
                ids=locked,
            )
        immutable = [m["id"] for m in memories if immutable_tags(m["tags"])]
        if immutable:
            raise ImmutableMemory(
                f"cannot {verb} memories tagged audio, somatic or voice: "
                + ", ".join(f"#{i}" for i in immutable),
                ids=immutable,
            )


def _refuse_constitutional(memories: list[Row], message: str) -> None:
    """Constitutional rows are refused to every actor, admins included, for deletion and consolidation."""
    locked = [m["id"] for m in memories if m["constitutional"]]
    if locked:
        raise ConstitutionalLocked(message + ", ".join(f"#{i}" for i in locked), ids=locked)


# ----- the mutations -----


def create_memory(
    agent_id: int,
    content: str,
    *,
    actor: str,
    memory_type: str = "core",
    session_id: int | None = None,
    created_at: datetime | None = None,
    tags: list[str] | None = None,
    category: str | None = None,
    importance: int | None = None,
    pinned: bool = False,
    constitutional: bool = False,
    action: str = "create",
    data: dict | None = None,
    op_id: str | None = None,
    **scoping: Any,
) -> AgentMemory:
    """Create a memory and its audit record. `created_at` is the origin date (import, consolidation)."""
    if session_id is None:  # the per-agent quota (models/agents/quotas.py); a session's journal is exempt
        quotas.check_memory_count(agent_id)
    _check_actor(actor)
    fields = _clean_fields(
        {
            "content": content,
            "memory_type": memory_type,
            "tags": tags,
            "category": category,
            "importance": importance,
            "pinned": pinned,
            **scoping,
        }
    )
    if not isinstance(constitutional, bool):
        raise ValidationFailed("constitutional must be true or false", field="constitutional")
    if constitutional and is_agent_path(actor) and (actor != AGENT_ACTOR or session_id is None):
        raise ConstitutionalLocked("agents may mark memories constitutional only inside a refinement session")
    with atomic():
        _require_agent(agent_id)
        memory = _insert(agent_id, fields, constitutional=constitutional, created_at=created_at)
        write_audit(
            op_id=op_id or new_op_id(), actor=actor, action=action, agent_id=agent_id, memory_id=memory["id"],
            session_id=session_id, before=None, after=_snapshot(memory, new=True), data=data,
        )  # fmt: skip
    return _as_objects([memory])[0]


def _insert(
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


# What "constitutional" freezes: agents and jobs can never change these on a locked memory; an admin can,
# through this path, audited (and the database refuses anyone else: migration 0008).
FROZEN_FIELDS = frozenset({"content", "memory_type", "tags"})


def update_memory(
    agent_id: int, memory_id: int, *, actor: str, session_id: int | None = None, **changes: Any
) -> AgentMemory:
    """Change content and/or metadata of an active memory.

    A constitutional memory's content, type and tags are frozen for agent paths (`agent`,
    `system:*`), inside a refinement session too; only an admin may edit them. Agent paths never
    touch an immutable-tagged memory. Empty content is refused for everyone.
    """
    _check_actor(actor)
    if not changes:
        raise ValidationFailed("nothing to update")
    fields = _clean_fields(changes)
    with atomic():
        memory = _load(agent_id, memory_id)
        frozen = memory["constitutional"] and bool(FROZEN_FIELDS & set(fields))
        if is_agent_path(actor):
            tags = immutable_tags(memory["tags"])
            if tags:
                raise ImmutableMemory(
                    f"memory #{memory_id} is tagged {', '.join(sorted(tags))} and cannot be changed"
                )
            if frozen:
                raise ConstitutionalLocked(
                    f"memory #{memory_id} is constitutional: its content, type and tags cannot be changed "
                    "by an agent or a job; only an admin can edit it",
                    ids=[memory_id],
                )
        before = _snapshot(memory)
        values = {name: value for name, value in fields.items() if name != "content"}
        if "content" in fields:
            values.update(content_fields(fields["content"]))
        values["updated_at"] = utcnow()
        with guard_privilege("admin") if frozen else nullcontext():  # the database guard sees the admin
            _write([memory], values)
        write_audit(
            op_id=new_op_id(), actor=actor, action="update", agent_id=agent_id, memory_id=memory_id,
            session_id=session_id, before=before, after=_snapshot(memory), data={"fields": sorted(fields)},
        )  # fmt: skip
    return _as_objects([memory])[0]


def soft_delete_memories(
    agent_id: int,
    memory_ids: Sequence[int],
    *,
    actor: str,
    session_id: int | None = None,
    reason: str | None = None,
) -> list[AgentMemory]:
    """Soft-delete one or several memories, all or nothing. Constitutional rows are refused to everyone:
    an admin must clear the flag first (itself audited)."""
    _check_actor(actor)
    with atomic():
        memories = _load_many(agent_id, list(memory_ids))
        _guard_agent_locks(actor, memories, "delete")
        _refuse_constitutional(
            memories, "constitutional memories cannot be deleted; an admin must clear the flag first: "
        )
        op_id, now = new_op_id(), utcnow()
        befores = [_snapshot(m) for m in memories]
        _write(memories, {"deleted_at": now, "updated_at": now})
        write_audits(
            [
                {
                    "op_id": op_id, "actor": actor, "action": "delete", "agent_id": agent_id, "memory_id": m["id"],
                    "session_id": session_id, "before": before, "after": _snapshot(m),
                    "data": {"reason": reason} if reason else {},
                }
                for m, before in zip(memories, befores, strict=True)
            ]
        )  # fmt: skip
    return _as_objects(memories)


def restore_memory(agent_id: int, memory_id: int, *, actor: str) -> AgentMemory:
    """Bring a soft-deleted memory back (clears any pending purge)."""
    _check_actor(actor)
    with atomic():
        memory = _load(agent_id, memory_id, active=False)
        before = _snapshot(memory)
        _write([memory], {"deleted_at": None, "purge_at": None, "updated_at": utcnow()})
        write_audit(
            op_id=new_op_id(), actor=actor, action="restore", agent_id=agent_id, memory_id=memory_id,
            before=before, after=_snapshot(memory),
        )  # fmt: skip
    return _as_objects([memory])[0]


def consolidate_memories(
    agent_id: int,
    memory_ids: Sequence[int],
    new_content: str,
    *,
    actor: str,
    session_id: int | None = None,
    require_type: str | None = "core",
) -> AgentMemory:
    """Replace two or more active memories of one type (core unless the caller says otherwise) by one, atomically.

    The new memory keeps the earliest origin date of the set; the sources are soft-deleted in the
    same transaction, and the audit records link them both ways.
    """
    _check_actor(actor)
    content = clean_content(new_content)
    with atomic():
        sources = _load_many(agent_id, list(memory_ids), minimum=2)
        types = {m["memory_type"] for m in sources}
        if require_type is not None and types != {require_type}:
            wrong = [m["id"] for m in sources if m["memory_type"] != require_type]
            raise ValidationFailed(
                f"only {require_type} memories can be consolidated here: "
                + ", ".join(f"#{i}" for i in wrong),
                ids=wrong,
            )
        if len(types) != 1:
            raise ValidationFailed("memories of different types cannot be consolidated")
        _guard_agent_locks(actor, sources, "consolidate")
        _refuse_constitutional(sources, "constitutional memories cannot be consolidated: ")
        tags: list[str] = []
        for source in sources:
            tags.extend(t for t in source["tags"] or [] if t not in tags)
        importances = [m["importance"] for m in sources if m["importance"] is not None]
        categories = {m["category"] for m in sources}
        fields = {
            "content": content,
            "memory_type": types.pop(),
            "tags": tags[:MAX_TAGS],
            "category": categories.pop() if len(categories) == 1 else None,
            "importance": max(importances) if importances else None,
            "pinned": any(m["pinned"] for m in sources),
        }
        merged = _insert(agent_id, fields, created_at=min(m["created_at"] for m in sources))
        befores = [_snapshot(m) for m in sources]
        now = utcnow()
        _write(sources, {"deleted_at": now, "updated_at": now})
        # One multi-row INSERT: the merged memory's record first, then each source's, linked both ways.
        record = {"op_id": new_op_id(), "actor": actor, "agent_id": agent_id, "session_id": session_id}
        write_audits(
            [
                {
                    **record, "action": "consolidate", "memory_id": merged["id"], "before": None,
                    "after": _snapshot(merged, new=True), "data": {"merged_from": [m["id"] for m in sources]},
                },
                *(
                    {
                        **record, "action": "consolidate_source", "memory_id": m["id"], "before": before,
                        "after": _snapshot(m), "data": {"merged_into": merged["id"]},
                    }
                    for m, before in zip(sources, befores, strict=True)
                ),
            ]
        )  # fmt: skip
    return _as_objects([merged])[0]


def set_constitutional(
    agent_id: int, memory_id: int, value: bool, *, actor: str, session_id: int | None = None
) -> AgentMemory:
    """Protect (lock) or unprotect a memory.

    Agents may protect only inside a refinement session; only an admin may clear the flag.
    """
    _check_actor(actor)
    if not isinstance(value, bool):
        raise ValidationFailed("constitutional must be true or false")
    if value and is_agent_path(actor) and (actor != AGENT_ACTOR or session_id is None):
        raise ConstitutionalLocked("agents may protect memories only inside a refinement session")
    if not value and not is_admin(actor):
        raise ConstitutionalLocked("only an admin can clear the constitutional flag")
    with atomic():
        memory = _load(agent_id, memory_id)
        if memory["constitutional"] != value:
            before = _snapshot(memory)
            with nullcontext() if value else guard_privilege("admin"):  # clearing the flag is the admin's
                _write([memory], {"constitutional": value, "updated_at": utcnow()})
            write_audit(
                op_id=new_op_id(), actor=actor, action="protect" if value else "unprotect", agent_id=agent_id,
                memory_id=memory_id, session_id=session_id, before=before, after=_snapshot(memory),
            )  # fmt: skip
    return _as_objects([memory])[0]


def dedup_for_agent(
    agent_id: int, *, actor: str = "system:dedup", session_id: int | None = None
) -> list[int]:
    """Content-blind exact-duplicate removal for one agent's active core memories (see
    `dedup_for_agents`). Returns the ids soft-deleted."""
    return dedup_for_agents([agent_id], actor=actor, session_id=session_id).get(agent_id, [])


def dedup_for_agents(
    agent_ids: Sequence[int], *, actor: str = "system:dedup", session_id: int | None = None
) -> dict[int, list[int]]:
    """Content-blind exact-duplicate removal for these agents' active core memories, in one transaction.

    One set-based query picks every non-constitutional row whose content_hash matches an earlier
    active core row of the same agent (earliest origin date wins, id breaks ties); those are
    soft-deleted and audited, one op_id per agent (each agent's dedup is rolled back on its own). The
    content column is never loaded, so no text is compared or even read in Python. Set-based
    throughout (one locking SELECT, one query for the content references, one UPDATE and multi-row
    audit INSERTs per 5,000 rows), so its cost is a few round trips for the whole batch, not a few per
    row or per agent. Running it again finds nothing more to do. Returns {agent id: ids removed}.
    """
    agent_ids = list(dict.fromkeys(agent_ids))
    if not agent_ids:
        return {}
    table = AgentMemory.__table__
    active_core = and_(
        table.c.agent_id.in_(agent_ids), table.c.memory_type == "core", table.c.deleted_at.is_(None)
    )
    # The (agent, hash) groups holding more than one active core row: an aggregate over the partial
    # index of active core hashes, so rows without a twin cost nothing more.
    groups = (
        select(table.c.agent_id, table.c.content_hash)
        .where(active_core)
        .group_by(table.c.agent_id, table.c.content_hash)
        .having(func.count() > 1)
    )
    in_groups = and_(active_core, tuple_(table.c.agent_id, table.c.content_hash).in_(groups))
    with atomic():
        # Lock every row of those groups, keepers included, before deciding anything: a keeper cannot
        # be deleted under us while its twin is soft-deleted as a duplicate.
        if not db.session.execute(select(table.c.id).where(in_groups).with_for_update()).first():
            return {}
        rank = func.row_number().over(
            partition_by=(table.c.agent_id, table.c.content_hash), order_by=(table.c.created_at, table.c.id)
        )
        ranked = select(*(table.c[field] for field in SNAPSHOT_FIELDS), rank.label("rank")).where(in_groups)
        # Every row after the earliest of its group (earliest origin date wins, id breaks ties), never
        # a constitutional one; every snapshot column is read, never `content`.
        rows = [
            r
            for r in db.session.execute(ranked).mappings().all()
            if r["rank"] > 1 and not r["constitutional"]
        ]
        rows.sort(key=lambda r: r["id"])
        # Memories tagged audio, somatic or voice are immutable for every agent path, dedup included.
        duplicates = [r for r in rows if not {str(t).lower() for t in (r["tags"] or [])} & IMMUTABLE_TAGS]
        removed: dict[int, list[int]] = {}
        for row in duplicates:
            removed.setdefault(row["agent_id"], []).append(row["id"])
        if not duplicates:
            return {}
        ids = [r["id"] for r in duplicates]
        ops, now = {agent: new_op_id() for agent in removed}, utcnow()
        refs = latest_content_refs(ids)
        for start in range(0, len(ids), CHUNK):
            db.session.execute(
                update(table)
                .where(table.c.id.in_(ids[start : start + CHUNK]))
                .values(deleted_at=now, updated_at=now)
            )
        audits = []
        for row in duplicates:
            before = snapshot_values(row, refs[row["id"]])
            audits.append(
                {
                    "op_id": ops[row["agent_id"]], "actor": actor, "action": "dedup", "agent_id": row["agent_id"],
                    "memory_id": row["id"], "session_id": session_id, "before": before,
                    "after": {**before, "deleted_at": now.isoformat(), "updated_at": now.isoformat()},
                    "data": {"content_hash": row["content_hash"]},
                }
            )  # fmt: skip
        write_audits(audits)
        db.session.expire_all()  # ORM copies of these rows are stale now
    return removed


PURGE_GRACE = timedelta(days=30)


def _guard_purgeable(memory: Row) -> None:
    """TTL lifecycle applies only to non-core, non-journal, non-pinned, non-constitutional memories
    with no immutable tag."""
    if memory["constitutional"]:
        raise ConstitutionalLocked(f"memory #{memory['id']} is constitutional and can never be purged")
    tags = immutable_tags(memory["tags"])
    if tags:
        raise ImmutableMemory(
            f"memory #{memory['id']} is tagged {', '.join(sorted(tags))} and never expires",
            ids=[memory["id"]],
        )
    if memory["memory_type"] in ("core", "journal"):
        raise ValidationFailed(
            f"memory #{memory['id']} is a {memory['memory_type']} memory; those are never purged"
        )
    if memory["pinned"]:
        raise ValidationFailed(f"memory #{memory['id']} is pinned and cannot expire")


def expire_memory(
    agent_id: int,
    memory_id: int,
    *,
    actor: str = "system:ttl",
    grace: timedelta = PURGE_GRACE,
    now: datetime | None = None,
) -> AgentMemory:
    """TTL step one: soft-delete with a purge date; restorable until then."""
    _check_actor(actor)
    with atomic():
        memory = _load(agent_id, memory_id)
        _guard_purgeable(memory)
        before = _snapshot(memory)
        now = now or utcnow()
        _write([memory], {"deleted_at": now, "updated_at": now, "purge_at": now + grace})
        write_audit(
            op_id=new_op_id(), actor=actor, action="ttl_expire", agent_id=agent_id, memory_id=memory_id,
            before=before, after=_snapshot(memory),
        )  # fmt: skip
    return _as_objects([memory])[0]


def purge_memory(
    agent_id: int, memory_id: int, *, actor: str = "system:ttl", now: datetime | None = None
) -> None:
    """TTL step two: remove an expired row for good and redact its text from its history.

    The audit trail keeps a tombstone (content hash and token count); the text itself is blanked
    in `audit_contents`, which is the only redaction the database triggers allow.
    """
    _check_actor(actor)
    with atomic():
        memory = _load(agent_id, memory_id, active=False)
        _guard_purgeable(memory)
        if memory["purge_at"] is None or memory["purge_at"] > (now or utcnow()):
            raise ValidationFailed(f"memory #{memory_id} is not due for purge")
        before = _snapshot(memory)
        tombstone = {"content_hash": memory["content_hash"], "token_estimate": memory["token_estimate"]}
        db.session.execute(delete(MEMORIES).where(MEMORIES.c.id == memory_id))
        # The session's copy, if it holds one, keeps the row's last values and leaves the session, as
        # after an ORM delete: nothing may flush it again.
        held = refresh_loaded(AgentMemory, memory_id, memory)
        if held is not None:
            db.session.expunge(held)
        db.session.execute(
            update(AuditContent)
            .where(AuditContent.memory_id == memory_id, AuditContent.content.is_not(None))
            .values(content=None, redacted_at=utcnow())
        )
        write_audit(
            op_id=new_op_id(),
            actor=actor,
            action="purge",
            agent_id=agent_id,
            memory_id=memory_id,
            before=before,
            after=None,
            data={"tombstone": tombstone, "content_redacted": True},
        )
