"""The one write module: every change of a memory, by every actor, enters here.

Callers — the agent API, LangGraph's store, the refinement tools, every job (extraction, daily
consolidation, insights, reflection), the CLI's import and the console — translate their input into
these calls and map the domain errors they raise; none of them checks a rule of its own. Every call
runs the same steps, in this order:

1. the actor (`rules.check_actor`);
2. the writing rules of the memory's type (`models/memories/writing.py`), for agent paths (an admin's
   words are the admin's own);
3. cleaning and the field rules (`rules.clean_fields`); a declared user-context field becomes its
   `field:<name>` tag;
4. the locks (`rules.guard_agent_locks` / `rules.guard_update`) and the caller's category allowlist,
   before anything is filed or written;
5. consent routing: a write that sets a user-context field is held as a patch (`patches.py`) until the
   consent policy applies it;
6. the retention guard on an agent's own deletions outside a session (`retention.py`);
7. the row change with its quota, audit record, change log and events, in one transaction
   (`mutations.py`, over `rows.py`).

The row-level steps under this module (`mutations.py`, `ttl.py`, `dedup.py`, the Time Machine) are called directly only by the jobs that own a whole policy (TTL, exact duplicates, rollback),
which have no input to translate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from models.changes import mutations, patches, retention
from models.changes.patch_tables import ProposedPatch
from models.changes.rows import load_row
from models.changes.rules import check_actor, check_may_protect, clean_fields, guard_update, is_agent_path
from models.db import atomic, db
from models.errors import ValidationFailed
from models.history import events
from models.memories.memory import AgentMemory
from models.memories.writing import check_content

# The caller's category allowlist: raises CategoryNotAllowed for categories outside it (the agent API and
# LangGraph's store pass their agent's; jobs and admins pass none).
Allowlist = Callable[[Iterable[str | None]], None]


@dataclass(frozen=True)
class Written:
    """What a create or update did: the memory written, or the patch that holds it (never both None)."""

    memory: AgentMemory | None
    patch: ProposedPatch | None = None


def _words(actor: str, memory_type: Any, content: Any) -> Any:
    """Step 2: the writing rules of the type for agent paths (normalised text back); an admin's as given.
    A value of the wrong kind passes through for the field rules to refuse by name."""
    if is_agent_path(actor) and isinstance(content, str) and isinstance(memory_type, str):
        return check_content(memory_type, content)
    return content


def _with_field(tags: Any, field: str | None) -> Any:
    """Step 3: a declared user-context field is the memory's `field:<name>` tag."""
    if not field:
        return tags
    if tags is not None and not isinstance(tags, list):
        return tags  # clean_fields refuses it with the field named
    return list(tags or []) + [patches.FIELD_TAG_PREFIX + field]


def _signals(thread_id: str | None, user_ack: bool) -> list[tuple[str, str]]:
    """The consent signals a write carries (docs/explanation/governance.md, "Consent"): itself, a mention in
    its thread (one per thread; a write with no thread is one thread), and the user's chat acknowledgement if
    it relays one."""
    return [("mention", thread_id or "")] + ([("chat_ack", "")] if user_ack else [])


def save(
    agent_id: int,
    content: Any,
    *,
    actor: str,
    memory_type: str = "core",
    field: str | None = None,
    user_ack: bool = False,
    turn: str | None = None,
    allowed: Allowlist | None = None,
    constitutional: bool = False,
    session_id: int | None = None,
    action: str = "create",
    created_at: datetime | None = None,
    data: dict | None = None,
    **fields: Any,
) -> Written:
    """Create a memory, or hold it as a patch when it sets a user-context field. `user_ack`: the write relays
    the user's chat acknowledgement (a consent signal); `turn` names the user turn it came from."""
    check_actor(actor)
    note = _classify(agent_id, actor, session_id, memory_type, fields)
    try:
        text = _words(actor, memory_type, content)
        tags = _with_field(fields.pop("tags", None), field)
        cleaned = clean_fields({"content": text, "memory_type": memory_type, "tags": tags, **fields})
        if constitutional:
            check_may_protect(actor, session_id)
        if allowed is not None:
            allowed([cleaned.get("category")])
    except ValidationFailed:
        note("error")
        raise
    context = patches.context_field(cleaned["tags"])
    if context:
        patch, memory = patches.write_context(
            agent_id,
            "create",
            context,
            cleaned,
            actor=actor,
            turn=turn,
            signals=_signals(cleaned.get("thread_id"), user_ack),
        )
        if memory is None:
            note("skipped")  # held for the user's consent or a second signal
            events.note(
                agent_id, "create", "skipped", user_id=cleaned.get("user_id"), thread_id=cleaned.get("thread_id"),
                category=cleaned.get("category"),
            )  # fmt: skip
            return Written(None, patch)
        note("ok")
        return Written(memory, patch)
    text = cleaned.pop("content")
    memory = mutations.create_memory(
        agent_id, text, actor=actor, session_id=session_id, constitutional=constitutional, action=action,
        created_at=created_at, data=data, **cleaned,
    )  # fmt: skip
    note("ok")
    return Written(memory)


def _classify(agent_id: int, actor: str, session_id: int | None, memory_type: str, fields: dict) -> Callable:
    """The classify step of docs/spec/003-memory-system.md §14, as an event: applied (ok), held (skipped)
    or refused by a rule (error)."""

    def note(status: str) -> None:
        events.note(
            agent_id, "classify", status, node=events.node_for(actor, session_id, memory_type),
            user_id=fields.get("user_id"), thread_id=fields.get("thread_id"), category=fields.get("category"),
        )  # fmt: skip

    return note


def change(
    agent_id: int,
    memory_id: Any,
    *,
    actor: str,
    field: str | None = None,
    user_ack: bool = False,
    turn: str | None = None,
    allowed: Allowlist | None = None,
    session_id: int | None = None,
    **changes: Any,
) -> Written:
    """Update an active memory, or hold the update as a patch when it changes a user-context field's value
    (its content or field tags; a sensitive field's memory is held whatever changes). The row is locked
    and read once, and every step after reads it as locked."""
    check_actor(actor)
    if not changes and not field:
        raise ValidationFailed("nothing to update")
    with atomic():
        current = load_row(agent_id, memory_id)  # another agent's, a deleted or a missing one: not found
        guard_update(actor, current, changes)
        if allowed is not None:
            allowed([current["category"], changes.get("category", current["category"])])
        if field:
            changes["tags"] = _with_field(changes.get("tags", current["tags"] or []), field)
        if "content" in changes or "memory_type" in changes:  # the words must suit the type they end up with
            text = _words(
                actor,
                changes.get("memory_type", current["memory_type"]),
                changes.get("content", current["content"]),
            )
            if "content" in changes:
                changes["content"] = text
        cleaned = clean_fields(changes)
        context = patches.context_field(list(current["tags"] or []) + list(cleaned.get("tags") or []))
        if context and (context in patches.SENSITIVE_FIELDS or {"content", "tags"} & set(cleaned)):
            patch, memory = patches.write_context(
                agent_id, "update", context, cleaned, memory_id=current["id"], actor=actor, turn=turn,
                signals=_signals(cleaned.get("thread_id") or current["thread_id"], user_ack),
            )  # fmt: skip
            if memory is None:
                events.note(
                    agent_id, "update", "skipped", memory_id=current["id"], category=current["category"]
                )
            return Written(memory, patch)
        return Written(mutations.apply_update(agent_id, current, cleaned, actor=actor, session_id=session_id))


def remove(
    agent_id: int,
    memory_ids: Sequence[int],
    *,
    actor: str,
    session_id: int | None = None,
    reason: str | None = None,
    allowed: Allowlist | None = None,
) -> list[AgentMemory]:
    """Soft-delete one or several memories, all or nothing; restorable and reversible. An agent's own
    deletions outside a session are bound by the retention guard."""
    check_actor(actor)
    return mutations.soft_delete_memories(
        agent_id, memory_ids, actor=actor, session_id=session_id, reason=reason, allowed=allowed,
        guard=retention.guard_deletion if retention.applies(actor, session_id) else None,
    )  # fmt: skip


def restore(agent_id: int, memory_id: Any, *, actor: str, allowed: Allowlist | None = None) -> AgentMemory:
    """Bring back a soft-deleted memory, within its purge date and the locks (`mutations.restore_memory`)."""
    check_actor(actor)
    return mutations.restore_memory(agent_id, memory_id, actor=actor, allowed=allowed)


def merge(
    agent_id: int,
    memory_ids: Sequence[int],
    new_content: Any,
    *,
    actor: str,
    session_id: int | None = None,
    require_type: str | None = "core",
) -> AgentMemory:
    """Consolidate two or more memories of one type into one, keeping the scope they share
    (`rules.merged_scope`)."""
    check_actor(actor)
    memory_type = require_type or _one_type(agent_id, memory_ids)
    content = _words(actor, memory_type, new_content) if memory_type else new_content
    return mutations.consolidate_memories(
        agent_id, memory_ids, content, actor=actor, session_id=session_id, require_type=require_type
    )


def _one_type(agent_id: int, memory_ids: Sequence[int]) -> str | None:
    """The type the sources share, for the writing rules (None when they differ: the mutation refuses it)."""
    if not isinstance(memory_ids, list | tuple):
        return None
    ids = [i for i in memory_ids if isinstance(i, int) and not isinstance(i, bool)]
    types = set(
        db.session.scalars(
            select(AgentMemory.memory_type).where(AgentMemory.id.in_(ids), AgentMemory.agent_id == agent_id)
        )
    )
    return types.pop() if len(types) == 1 else None


def protect(
    agent_id: int, memory_id: Any, value: bool, *, actor: str, session_id: int | None = None
) -> AgentMemory:
    """Lock (constitutional) or unlock a memory: agents lock only inside a session, only an admin unlocks."""
    check_actor(actor)
    return mutations.set_constitutional(agent_id, memory_id, value, actor=actor, session_id=session_id)
