"""The one mutation path: every change to a memory row, each written with its audit record.

Views, the agent API, the refinement tools and the jobs call these functions (and the TTL lifecycle in
`ttl.py`, the exact-duplicate removal in `dedup.py`); nothing else writes `agent_memories`. Each function
runs in `atomic()`, so the row change and its audit record commit together or not at all, and each call
shares one `op_id` across its records, which is the unit the Time Machine rolls back.

Actors: ``agent`` (the agent itself, through its API or a refinement session), ``admin:<id>``
(a human in the console or on the CLI) and ``system:<job>`` (a scheduled job). Agents and jobs
are "agent paths": they can never delete, consolidate or purge a constitutional memory, nor
touch a memory tagged audio, somatic or voice. Those rules live in `rules.py`; the rows are locked,
read, written and snapshotted by `rows.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from datetime import datetime
from typing import Any

from models.agents import quotas
from models.changes.records import record_change, record_changes
from models.changes.rows import as_objects, insert_row, load_row, load_rows, snapshot_row, write_rows
from models.changes.rules import (
    check_actor,
    check_may_protect,
    clean_content,
    clean_fields,
    guard_agent_locks,
    guard_update,
    is_admin,
    merged_scope,
    refuse_constitutional,
    require_agent,
)
from models.db import atomic, guard_privilege, utcnow
from models.errors import ConstitutionalLocked, DomainError, ValidationFailed
from models.history.audit import new_op_id
from models.memories.fields import MAX_TAGS
from models.memories.memory import AgentMemory, content_fields


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
    check_actor(actor)
    fields = clean_fields(
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
    if constitutional:
        check_may_protect(actor, session_id)
    with atomic():
        require_agent(agent_id)
        memory = insert_row(agent_id, fields, constitutional=constitutional, created_at=created_at)
        record_change(
            op_id=op_id or new_op_id(), actor=actor, action=action, agent_id=agent_id, memory_id=memory["id"],
            session_id=session_id, before=None, after=snapshot_row(memory, new=True), data=data,
        )  # fmt: skip
    return as_objects([memory])[0]


def update_memory(
    agent_id: int,
    memory_id: int,
    *,
    actor: str,
    session_id: int | None = None,
    allowed: Callable[[list[str | None]], None] | None = None,
    **changes: Any,
) -> AgentMemory:
    """Change content and/or metadata of an active memory.

    A constitutional memory's content, type and tags are frozen for agent paths (`agent`,
    `system:*`), inside a refinement session too; only an admin may edit them. Agent paths never
    touch an immutable-tagged memory. Empty content is refused for everyone.
    """
    check_actor(actor)
    if not changes:
        raise ValidationFailed("nothing to update")
    fields = clean_fields(changes)
    with atomic():
        memory = load_row(agent_id, memory_id)
        return apply_update(agent_id, memory, fields, actor=actor, session_id=session_id, allowed=allowed)


def apply_update(
    agent_id: int,
    memory: dict[str, Any],
    fields: dict[str, Any],
    *,
    actor: str,
    session_id: int | None = None,
    allowed: Callable[[list[str | None]], None] | None = None,
) -> AgentMemory:
    """The update of a row its caller locked in this transaction (`rows.load_row`), with cleaned fields:
    the locks and the allowlist on the locked row, then the change and its records."""
    frozen = guard_update(actor, memory, fields)
    if allowed is not None:  # the caller's category allowlist, on the row as locked
        allowed([memory["category"], fields.get("category", memory["category"])])
    before = snapshot_row(memory)
    values = {name: value for name, value in fields.items() if name != "content"}
    if "content" in fields:
        values.update(content_fields(fields["content"]))
    values["updated_at"] = utcnow()
    with guard_privilege("admin") if frozen else nullcontext():  # the database guard sees the admin
        write_rows([memory], values)
    record_change(
        op_id=new_op_id(), actor=actor, action="update", agent_id=agent_id, memory_id=memory["id"],
        session_id=session_id, before=before, after=snapshot_row(memory), data={"fields": sorted(fields)},
    )  # fmt: skip
    return as_objects([memory])[0]


def soft_delete_memories(
    agent_id: int,
    memory_ids: Sequence[int],
    *,
    actor: str,
    session_id: int | None = None,
    reason: str | None = None,
    allowed: Callable[[list[str | None]], None] | None = None,
    guard: Callable[[int, list[dict[str, Any]]], None] | None = None,
) -> list[AgentMemory]:
    """Soft-delete one or several memories, all or nothing. Constitutional rows are refused to everyone:
    an admin must clear the flag first (itself audited). `allowed` is the caller's category allowlist,
    `guard` the retention guard (`write.remove` passes them), both checked on the locked rows."""
    check_actor(actor)
    with atomic():
        memories = load_rows(agent_id, list(memory_ids))
        guard_agent_locks(actor, memories, "delete")
        refuse_constitutional(
            memories, "constitutional memories cannot be deleted; an admin must clear the flag first: "
        )
        if allowed is not None:
            allowed([m["category"] for m in memories])
        if guard is not None:
            guard(agent_id, memories)
        op_id, now = new_op_id(), utcnow()
        befores = [snapshot_row(m) for m in memories]
        write_rows(memories, {"deleted_at": now, "updated_at": now})
        record_changes(
            [
                {
                    "op_id": op_id, "actor": actor, "action": "delete", "agent_id": agent_id, "memory_id": m["id"],
                    "session_id": session_id, "before": before, "after": snapshot_row(m),
                    "data": {"reason": reason} if reason else {},
                }
                for m, before in zip(memories, befores, strict=True)
            ]
        )  # fmt: skip
    return as_objects(memories)


class PurgeDue(DomainError):
    """The memory's TTL grace period is over: it is no longer restorable."""

    code = "purge_due"
    http_status = 409


def restore_memory(
    agent_id: int,
    memory_id: int,
    *,
    actor: str,
    now: datetime | None = None,
    allowed: Callable[[list[str | None]], None] | None = None,
) -> AgentMemory:
    """Bring a soft-deleted memory back (clears any pending purge), checked on the row locked for the write.

    A TTL-expired memory is restorable only until its `purge_at` (docs/reference/jobs.md); past it the
    purge is due and its text about to be redacted, so the restore is refused (409 `purge_due`) rather than
    racing the purge job. The agent locks hold: an agent or a job never restores an audio/somatic/voice
    memory an admin deleted (a constitutional memory cannot be deleted at all). Another agent's id, a
    purged id and an id that never existed are all "not found"; an active memory is "not deleted".
    `allowed` is the caller's category allowlist, checked on the locked row."""
    check_actor(actor)
    with atomic():
        memory = load_row(agent_id, memory_id, active=False)
        if allowed is not None:
            allowed([memory["category"]])
        purge_at = memory["purge_at"]
        if purge_at is not None and purge_at <= (now or utcnow()):
            raise PurgeDue(
                f"memory #{memory_id} passed its purge date ({purge_at:%Y-%m-%d %H:%M} UTC) and is no longer "
                "restorable",
                ids=[memory_id],
            )
        guard_agent_locks(actor, [memory], "restore")
        before = snapshot_row(memory)
        write_rows([memory], {"deleted_at": None, "purge_at": None, "updated_at": utcnow()})
        record_change(
            op_id=new_op_id(), actor=actor, action="restore", agent_id=agent_id, memory_id=memory_id,
            before=before, after=snapshot_row(memory),
        )  # fmt: skip
    return as_objects([memory])[0]


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

    The new memory keeps the earliest origin date of the set and the scope its sources share
    (`rules.merged_scope`: never two users'); the sources are soft-deleted in the same transaction, and
    the audit records link them both ways.
    """
    check_actor(actor)
    content = clean_content(new_content)
    with atomic():
        sources = load_rows(agent_id, list(memory_ids), minimum=2)
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
        guard_agent_locks(actor, sources, "consolidate")
        refuse_constitutional(sources, "constitutional memories cannot be consolidated: ")
        tags: list[str] = []
        for source in sources:
            tags.extend(t for t in source["tags"] or [] if t not in tags)
        scope, scope_dropped = merged_scope(sources)
        importances = [m["importance"] for m in sources if m["importance"] is not None]
        categories = {m["category"] for m in sources}
        fields = {
            "content": content,
            "memory_type": types.pop(),
            "tags": tags[:MAX_TAGS],
            "category": categories.pop() if len(categories) == 1 else None,
            "importance": max(importances) if importances else None,
            "pinned": any(m["pinned"] for m in sources),
            **scope,
        }
        merged = insert_row(agent_id, fields, created_at=min(m["created_at"] for m in sources))
        befores = [snapshot_row(m) for m in sources]
        now = utcnow()
        write_rows(sources, {"deleted_at": now, "updated_at": now})
        # One multi-row INSERT: the merged memory's record first, then each source's, linked both ways.
        record = {"op_id": new_op_id(), "actor": actor, "agent_id": agent_id, "session_id": session_id}
        record_changes(
            [
                {
                    **record, "action": "consolidate", "memory_id": merged["id"], "before": None,
                    "after": snapshot_row(merged, new=True),
                    "data": {"merged_from": [m["id"] for m in sources], **({"scope_dropped": scope_dropped} if scope_dropped else {})},
                },
                *(
                    {
                        **record, "action": "consolidate_source", "memory_id": m["id"], "before": before,
                        "after": snapshot_row(m), "data": {"merged_into": merged["id"]},
                    }
                    for m, before in zip(sources, befores, strict=True)
                ),
            ]
        )  # fmt: skip
    return as_objects([merged])[0]


def set_constitutional(
    agent_id: int, memory_id: int, value: bool, *, actor: str, session_id: int | None = None
) -> AgentMemory:
    """Protect (lock) or unprotect a memory.

    Agents may protect only inside a refinement session; only an admin may clear the flag.
    """
    check_actor(actor)
    if not isinstance(value, bool):
        raise ValidationFailed("constitutional must be true or false")
    if value:
        check_may_protect(actor, session_id)
    if not value and not is_admin(actor):
        raise ConstitutionalLocked("only an admin can clear the constitutional flag")
    with atomic():
        memory = load_row(agent_id, memory_id)
        if memory["constitutional"] != value:
            before = snapshot_row(memory)
            with nullcontext() if value else guard_privilege("admin"):  # clearing the flag is the admin's
                write_rows([memory], {"constitutional": value, "updated_at": utcnow()})
            record_change(
                op_id=new_op_id(), actor=actor, action="protect" if value else "unprotect", agent_id=agent_id,
                memory_id=memory_id, session_id=session_id, before=before, after=snapshot_row(memory),
            )  # fmt: skip
    return as_objects([memory])[0]
