"""The rules every write obeys, each stated once: who the actor is, which fields may change and how they
are cleaned, the constitutional and immutable-tag locks, what scope a merged memory keeps.

Each check raises a domain error (`ValidationFailed`, `ConstitutionalLocked`, `ImmutableMemory`,
`NotFound`) and changes nothing. The one write module (`write.py`) runs them in order for every actor;
the row-level steps under it (`mutations.py`, `ttl.py`, `dedup.py`), the agent settings and the Time
Machine call the ones that need the locked rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from models.agents.agent import Agent
from models.db import db
from models.errors import ConstitutionalLocked, ImmutableMemory, NotFound, ValidationFailed
from models.memories.fields import MAX_CONTENT_CHARS, MAX_TAG_CHARS, MAX_TAGS, SCOPING_FIELDS, check_field
from models.memories.memory import immutable_tags

AGENT_ACTOR = "agent"
EDITABLE_FIELDS = ("content", "tags", "category", "importance", "pinned", "memory_type") + SCOPING_FIELDS


def is_agent_path(actor: str) -> bool:
    """Agents and scheduled jobs act for the agent; only admins are not bound by the agent locks."""
    return actor == AGENT_ACTOR or actor.startswith("system:")


def is_admin(actor: str) -> bool:
    """A human in the console or on the CLI (`admin:<id>`): the one actor who may edit or unlock a
    constitutional memory."""
    return actor.startswith("admin:")


def check_may_protect(actor: str, session_id: int | None) -> None:
    """Marking a memory constitutional: an admin always; the agent only inside a refinement session (the
    supervised place where it decides what defines it); a job never."""
    if is_agent_path(actor) and (actor != AGENT_ACTOR or session_id is None):
        raise ConstitutionalLocked("agents may mark memories constitutional only inside a refinement session")


def check_actor(actor: str) -> None:
    """Refuse an actor that is none of `agent`, `admin:<id>`, `system:<job>`: every audited change names
    one (the mutations, the agent settings and the Time Machine check it first)."""
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
    """Tags as stored: strings, stripped, de-duplicated in order, each and all within the field rules'
    limits. None is no tags."""
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


def clean_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """The editable fields of a create or an update, cleaned and checked against the field rules; an
    unknown field is refused."""
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


def require_agent(agent_id: int) -> Agent:
    """The agent a change belongs to (the mutations and the agent settings need it to exist)."""
    agent = db.session.get(Agent, agent_id)
    if agent is None:
        raise NotFound(f"agent {agent_id} not found")
    return agent


# ----- the locks: constitutional and immutable-tag memories -----

# What "constitutional" freezes: agents and jobs can never change these on a locked memory; an admin can,
# through this path, audited (and the database refuses anyone else: migration 0008).
FROZEN_FIELDS = frozenset({"content", "memory_type", "tags"})


def guard_agent_locks(actor: str, memories: Iterable[Mapping[str, Any]], verb: str) -> None:
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


def same_scope(a: Any, b: Any) -> bool:
    """May these two memories be paired for a merge? Only within one user (see `merged_scope`, which
    refuses any other merge): the daily consolidation pairs by it."""
    return bool(a.user_id == b.user_id)


def merged_scope(sources: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The scope a merged memory keeps, and the values it could not keep.

    A merge never joins two users' memories (an unscoped memory and a user's are two users too): the
    merged fact would vanish from one user's view and could appear in another's. The other scope fields
    (thread, run, actor, role) are kept where every source shares them; where the sources differ the
    merged memory belongs to the user as a whole (the field is empty), and the sources' values are
    returned so the audit record keeps them (a rollback restores each source exactly from its own
    snapshot).
    """
    users = {m["user_id"] for m in sources}
    if len(users) > 1:
        ids = [m["id"] for m in sources]
        raise ValidationFailed(
            "memories of different users cannot be consolidated: "
            + ", ".join(f"#{m['id']} (user {m['user_id'] or 'none'})" for m in sources),
            ids=ids,
        )
    scope: dict[str, Any] = {"user_id": users.pop()}
    dropped: dict[str, list[Any]] = {}
    for name in SCOPING_FIELDS:
        if name == "user_id":
            continue
        values = [m[name] for m in sources]
        if len(set(values)) == 1:
            scope[name] = values[0]
        else:
            scope[name], dropped[name] = None, values
    return scope, dropped


def refuse_constitutional(memories: Sequence[Mapping[str, Any]], message: str) -> None:
    """Constitutional rows are refused to every actor, admins included, for deletion and consolidation."""
    locked = [m["id"] for m in memories if m["constitutional"]]
    if locked:
        raise ConstitutionalLocked(message + ", ".join(f"#{i}" for i in locked), ids=locked)


def guard_update(actor: str, memory: Mapping[str, Any], fields: Iterable[str]) -> bool:
    """May this actor change these fields of this memory? Agent paths (`agent`, `system:*`) change nothing
    of a constitutional memory (inside a refinement session too) and never touch an immutable-tagged one;
    an admin may. Returns whether the change touches frozen fields, which the database guard lets through
    only under the admin's privilege."""
    frozen = bool(memory["constitutional"]) and bool(FROZEN_FIELDS & set(fields))
    guard_agent_locks(actor, [memory], "change")
    return frozen
