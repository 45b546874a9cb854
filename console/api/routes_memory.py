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
from models import AgentMemory, NotFound, db
from models.changes import rules, write
from models.history import memory_history as history

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


def _allowlist() -> write.Allowlist:
    """The caller's category allowlist, which the write module checks on the rows it changes."""
    return functools.partial(category_config().check, current_agent().role)


def _proposed(patch) -> tuple[PatchProposed, int]:
    until = f"at most until {patch.expires_at:%Y-%m-%d %H:%M} UTC"
    if patch.policy == "consent":
        message = (
            f"{patch.field} is a sensitive field: the change is held as patch {patch.id} until the user consents "
            f"(ask them; then POST /api/v1/patches/{patch.id}/confirm with the turn of their answer), {until}"
        )
    else:
        message = (
            f"{patch.field} is a user-context field: the change is held as patch {patch.id} until a second "
            f"independent signal corroborates it (a mention in another thread, the user's acknowledgement: "
            f"user_ack or POST /api/v1/patches/{patch.id}/confirm, or a confident insight), {until}"
        )
    return PatchProposed(message=message, patch=patch_out(patch)), 202


# ----- writes: each translates the request and calls the one write module (models/changes/write.py) -----


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
    a 422 whose `rule` names it. Saved through the one write path, audited, as actor `agent`. A memory
    that sets a user-context field (`field`) follows the consent policy: 201 once applied, else 202 with the
    held patch."""
    agent = current_agent()
    fields = body.model_dump(
        include={"memory_type", "category", "importance", "pinned", "tags", "user_id", "thread_id", "run_id",
                 "actor_id", "role", "constitutional"}
    )  # fmt: skip
    written = write.save(
        agent.id, body.content, actor=AGENT, field=body.field, user_ack=body.user_ack, turn=body.turn_id,
        allowed=_allowlist(), **fields,
    )  # fmt: skip
    if written.memory is None:
        return _proposed(written.patch)
    _link_soon(written.memory)
    return MemoryWritten(memory=memory_out(written.memory), rev=memory_rev(agent.id, written.memory)), 201


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
    changes = body.model_dump(exclude_unset=True, exclude={"field", "user_ack", "turn_id"})
    written = write.change(
        agent.id, memory_id, actor=AGENT, field=body.field, user_ack=body.user_ack, turn=body.turn_id,
        allowed=_allowlist(), **changes,
    )  # fmt: skip
    if written.memory is None:
        return _proposed(written.patch)
    if "content" in changes or "memory_type" in changes:
        _link_soon(written.memory)
    return MemoryWritten(memory=memory_out(written.memory), rev=memory_rev(agent.id, written.memory))


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
    are refused (409), and so is a deletion that would take your core memory below your retention threshold
    within the guard's window (409 `retention_guard`: docs/explanation/governance.md, "Retention guard")."""
    agent = current_agent()
    (memory,) = write.remove(agent.id, [memory_id], actor=AGENT, reason="agent api", allowed=_allowlist())
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
    """Brings back a memory you, a refinement session, a job or an admin soft-deleted, through the one write
    path (audited as `restore`; the thread's delta shows it as `restored`). Refused: a TTL-expired memory past
    its purge date (409 `purge_due`), one tagged audio, somatic or voice (409 `immutable`), an active one (422),
    a category outside your allowlist (403). A purged memory, or another agent's, is not found."""
    agent = current_agent()
    memory = write.restore(agent.id, memory_id, actor=AGENT, allowed=_allowlist())
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
