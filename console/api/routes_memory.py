"""Memory writes (docs/spec/003-memory-system.md §9, §10), history (§8) and the per-user export."""

from __future__ import annotations

import functools
import json
import logging

from flask import Response, stream_with_context
from redis.exceptions import RedisError
from sqlalchemy import select

from infra.queues import get_rq
from jobs.embeddings import semantic_configured
from jobs.relations import LINKED_TYPES, embed_written, link_related
from models import AgentMemory, ConstitutionalLocked, ImmutableMemory, NotFound, ValidationFailed, db
from models.changes import mutations, patches, rules
from models.changes.restore import restore_deleted
from models.history import events
from models.history import memory_history as history
from models.memories import writing

from .auth import category_config, current_agent
from .blueprint import api
from .convert import history_event_out, memory_out, memory_rev, patch_out
from .schemas import (
    ExportArgs,
    ExportLine,
    HistoryArgs,
    HistoryOut,
    MemoryCreate,
    MemoryDeleted,
    MemoryOut,
    MemoryUpdate,
    MemoryWritten,
    PatchProposed,
)

AGENT = rules.AGENT_ACTOR
log = logging.getLogger(__name__)


def _link_soon(memory: AgentMemory) -> None:
    """docs/spec/003-memory-system.md §2's write path: link a new or changed semantic memory to its neighbours. Done by a
    maintenance worker straight after the commit, so the request never pays for the embedding; if the
    queue is unreachable the every-10-minutes catch-up job links it instead. With a real embedder, any other
    memory gets its vector for memory.query's dense ranking the same way (`flask embeddings backfill`
    catches up what a down queue missed)."""
    if memory.memory_type in LINKED_TYPES:
        job = link_related  # it stores the vector too
    elif semantic_configured():
        job = embed_written
    else:
        return
    try:
        get_rq().enqueue(job, memory.agent_id, [memory.id], queue="maintenance")
    except (RedisError, OSError) as error:
        log.warning(
            "relations: could not enqueue linking of memory %s (%s); the catch-up job will",
            memory.id,
            type(error).__name__,
        )


def _own(memory_id: int) -> AgentMemory:
    """One of the caller's active memories; anything else (missing, another agent's, deleted) is 404."""
    memory = db.session.scalar(
        select(AgentMemory).where(
            AgentMemory.id == memory_id,
            AgentMemory.agent_id == current_agent().id,
            AgentMemory.deleted_at.is_(None),
        )
    )
    if memory is None:
        raise NotFound(f"memory #{memory_id} not found")
    return memory


def _writable(memory: AgentMemory, verb: str) -> None:
    """Locks first (a constitutional memory is refused as such, whatever its category), then the allowlist."""
    if memory.constitutional:
        raise ConstitutionalLocked(
            f"memory #{memory.id} is constitutional; agents cannot {verb} it through the API"
        )
    if memory.immutable_tags:
        raise ImmutableMemory(f"memory #{memory.id} is tagged {', '.join(sorted(memory.immutable_tags))}")
    category_config().check(current_agent().role, [memory.category])


def _signals(body, thread_id: str | None = None) -> list[tuple[str, str]]:
    """This write as consent signals: a mention (one per thread), plus the user's chat acknowledgement."""
    thread = getattr(body, "thread_id", None) or thread_id or ""
    return [("mention", thread)] + ([("chat_ack", "")] if body.user_ack else [])


def _proposed(patch) -> tuple[PatchProposed, int]:
    until = f"at most until {patch.expires_at:%Y-%m-%d %H:%M} UTC"
    if patch.policy == "consent":
        message = (
            f"{patch.field} is a sensitive field: the change is held as patch {patch.id} until the user consents "
            f"(POST /api/v1/patches/{patch.id}/confirm), {until}"
        )
    else:
        message = (
            f"{patch.field} is a user-context field: the change is held as patch {patch.id} until a second "
            f"independent signal corroborates it (a mention in another thread, the user's acknowledgement: "
            f"user_ack or POST /api/v1/patches/{patch.id}/confirm, or a confident insight), {until}"
        )
    return PatchProposed(message=message, patch=patch_out(patch)), 202


# ----- writes -----


@api.route(
    "/memory",
    "POST",
    summary="Save a memory (sensitive user-context fields wait for consent)",
    tag="memory",
    body=MemoryCreate,
    responses={201: MemoryWritten, 202: PatchProposed},
    errors=(403, 409),
)
def create_memory(body: MemoryCreate):
    """Content is normalised and checked against the writing rules of its type (docs/spec/003-memory-system.md §9); a violation is
    a 422 whose `rule` names it. Saved through the one mutation path, audited, as actor `agent`. A memory
    that sets a user-context field (`field`) follows the consent policy: 201 once applied, else 202 with the
    held patch."""
    agent = current_agent()
    category_config().check(agent.role, [body.category])
    if body.constitutional:
        raise ConstitutionalLocked("agents may mark memories constitutional only inside a refinement session")
    # The hot path's classify step (docs/spec/003-memory-system.md §14): the writing rules, then whether the write applies now
    # (ok) or waits for the user's consent (skipped); a write the rules refuse is an error.
    classified = functools.partial(
        events.note, agent.id, "classify", node=events.node_for(AGENT, None, body.memory_type),
        user_id=body.user_id, thread_id=body.thread_id, category=body.category,
    )  # fmt: skip
    try:
        content = rules.clean_content(writing.check_content(body.memory_type, body.content))
    except ValidationFailed:
        classified("error")
        raise
    tags = rules.clean_tags(body.tags + ([patches.FIELD_TAG_PREFIX + body.field] if body.field else []))
    fields = body.model_dump(
        include={
            "memory_type",
            "category",
            "importance",
            "pinned",
            "user_id",
            "thread_id",
            "run_id",
            "actor_id",
            "role",
        }
    )
    fields["tags"] = tags
    field = patches.context_field(tags)
    if field:
        patch, memory = patches.write_context(
            agent.id, "create", field, {"content": content, **fields}, signals=_signals(body)
        )
        if memory is None:
            classified("skipped")  # held for the user's consent
            events.note(
                agent.id,
                "create",
                "skipped",
                user_id=body.user_id,
                thread_id=body.thread_id,
                category=body.category,
            )
            return _proposed(patch)
    else:
        memory = mutations.create_memory(agent.id, content, actor=AGENT, **fields)
    classified("ok")
    _link_soon(memory)
    return MemoryWritten(memory=memory_out(memory), rev=memory_rev(agent.id, memory)), 201


@api.route(
    "/memory/<int:memory_id>",
    "GET",
    summary="Read one of your active memories",
    tag="memory",
    responses={200: MemoryOut},
    errors=(403,),
)
def get_memory(memory_id: int):
    """Soft-deleted memories are not found here (their text appears only in history and the export)."""
    memory = _own(memory_id)
    category_config().check(current_agent().role, [memory.category])
    return memory_out(memory)


@api.route(
    "/memory/<int:memory_id>",
    "PATCH",
    summary="Update one of your memories",
    tag="memory",
    body=MemoryUpdate,
    responses={200: MemoryWritten, 202: PatchProposed},
    errors=(403, 409),
)
def update_memory(memory_id: int, body: MemoryUpdate):
    """Constitutional and audio/somatic/voice-tagged memories are refused (409). A memory tagged with a
    sensitive field, or a change that would tag one, is held for consent (202); a change to the content or
    tags of a benign user-context field's memory is held until a second signal corroborates it (202)."""
    agent = current_agent()
    memory = _own(memory_id)
    _writable(memory, "update")
    changes = body.model_dump(exclude_unset=True)
    field = changes.pop("field", None)
    changes.pop("user_ack", None)
    if "category" in changes:
        category_config().check(agent.role, [changes["category"]])
    if field:
        changes["tags"] = list(changes.get("tags", memory.tags or [])) + [patches.FIELD_TAG_PREFIX + field]
    if "tags" in changes:
        changes["tags"] = rules.clean_tags(changes["tags"])
    if "content" in changes or "memory_type" in changes:
        checked = writing.check_content(
            changes.get("memory_type", memory.memory_type), changes.get("content", memory.content)
        )
        if "content" in changes:
            changes["content"] = rules.clean_content(checked)
    field = patches.context_field(list(memory.tags or []) + list(changes.get("tags", [])))
    # A sensitive field's memory is held whatever changes; a benign one when its value (content or
    # field tags) changes — its importance or pinning is not a user-context change.
    if field and (field in patches.SENSITIVE_FIELDS or {"content", "tags"} & set(changes)):
        signals = _signals(body, memory.thread_id)
        patch, written = patches.write_context(
            agent.id, "update", field, changes, memory_id=memory.id, signals=signals
        )
        if written is None:
            events.note(agent.id, "update", "skipped", memory_id=memory.id, category=memory.category)
            return _proposed(patch)
        memory = written
    else:
        memory = mutations.update_memory(agent.id, memory.id, actor=AGENT, **changes)
    if "content" in changes or "memory_type" in changes:
        _link_soon(memory)
    return MemoryWritten(memory=memory_out(memory), rev=memory_rev(agent.id, memory))


@api.route(
    "/memory/<int:memory_id>",
    "DELETE",
    summary="Soft-delete one of your memories",
    tag="memory",
    responses={200: MemoryDeleted},
    errors=(403, 409),
)
def delete_memory(memory_id: int):
    """Restorable with `POST /memory/<id>/restore` and reversible in the Time Machine; constitutional memories
    are refused (409)."""
    agent = current_agent()
    memory = _own(memory_id)
    _writable(memory, "delete")
    (memory,) = mutations.soft_delete_memories(agent.id, [memory.id], actor=AGENT, reason="agent api")
    return MemoryDeleted(id=memory.id, deleted_at=memory.deleted_at, rev=memory_rev(agent.id, memory))


@api.route(
    "/memory/<int:memory_id>/restore",
    "POST",
    summary="Restore one of your soft-deleted memories",
    tag="memory",
    responses={200: MemoryWritten},
    errors=(403, 409),
)
def restore_memory(memory_id: int):
    """Brings back a memory you, a refinement session, a job or an admin soft-deleted, through the one mutation
    path (audited as `restore`; the thread's delta shows it as `restored`). Refused: a TTL-expired memory past
    its purge date (409 `purge_due`), one tagged audio, somatic or voice (409 `immutable`), an active one (422),
    a category outside your allowlist (403). A purged memory, or another agent's, is not found."""
    agent = current_agent()
    category = db.session.scalar(
        select(AgentMemory.category).where(
            AgentMemory.id == memory_id, AgentMemory.agent_id == agent.id, AgentMemory.deleted_at.is_not(None)
        )
    )
    category_config().check(agent.role, [category])
    memory = restore_deleted(agent.id, memory_id, actor=AGENT)
    _link_soon(memory)
    return MemoryWritten(memory=memory_out(memory), rev=memory_rev(agent.id, memory))


# ----- history and export -----


@api.route(
    "/memory/<int:memory_id>/history",
    "GET",
    summary="A memory's history (docs/spec/003-memory-system.md §8), newest first",
    tag="memory",
    args=HistoryArgs,
    responses={200: HistoryOut},
    errors=(403,),
)
def memory_history(memory_id: int, args: HistoryArgs):
    """Every audited change with the state before and after, text included (your own memory); text removed
    by a TTL purge shows as `redacted`. Works for deleted and purged memories too."""
    agent = current_agent()
    found, more = history.memory_history(agent.id, memory_id, limit=args.limit)
    category_config().check(agent.role, [history.last_known_category(agent.id, memory_id)])
    return HistoryOut(memory_id=memory_id, events=[history_event_out(e) for e in found], more=more)


@api.route(
    "/export",
    "GET",
    summary="Export everything you hold about one user (JSON lines)",
    tag="memory",
    args=ExportArgs,
    responses={200: ExportLine},
    media_type="application/x-ndjson",
)
def export_user(args: ExportArgs):
    """One line per memory about `user_id` in your categories or without one — active and soft-deleted (flagged) — with
    its history, oldest event first; the last line is a summary. Streamed."""
    agent_id, user_id = current_agent().id, args.user_id
    categories = category_config().readable_for(current_agent().role)  # uncategorised ones are yours too

    def lines():
        count = 0
        for item in history.export_user(agent_id, user_id, categories):
            memory = item["memory"]
            line = ExportLine(
                type="memory",
                memory=memory_out(memory),
                deleted=item["deleted"],
                deleted_at=memory.deleted_at,
                history=[history_event_out(e) for e in item["history"]],
            )
            count += 1
            yield line.model_dump_json(by_alias=True) + "\n"
        yield (
            json.dumps({"type": "summary", "user_id": user_id, "memories": count}, separators=(",", ":"))
            + "\n"
        )

    return Response(stream_with_context(lines()), mimetype="application/x-ndjson")
