"""An agent's memories as the console lists them: filtered, searched by id, content hash or tag, and
sorted, with the content column deferred and raise-loaded: never read (docs/explanation/architecture.md,
"Privacy: who may read memory text")."""

from __future__ import annotations

from sqlalchemy import ColumnElement, TextClause, bindparam, or_, select, text
from sqlalchemy.orm import defer

from models.db import db, like_pattern
from models.memories.memory import AgentMemory
from models.parsing import parse_id
from models.readmodels.common import OrderKey, memory_filter, page_of

MEMORY_STATES = ("active", "deleted", "all")
MEMORY_SORTS = ("created", "updated", "tokens", "id")


def _tag_contains(needle: str) -> TextClause:
    """SQL: one of the row's tags contains `needle` (case-insensitive), on either engine."""
    pattern = like_pattern(needle.lower())  # ESCAPE '\\' below is LIKE_ESCAPE
    if db.engine.dialect.name == "postgresql":
        sql = (
            "EXISTS (SELECT 1 FROM json_array_elements_text(agent_memories.tags::json) AS t(value) "
            "WHERE lower(t.value) LIKE :tag_pattern ESCAPE '\\')"
        )
    else:
        sql = (
            "EXISTS (SELECT 1 FROM json_each(agent_memories.tags) AS t "
            "WHERE lower(t.value) LIKE :tag_pattern ESCAPE '\\')"
        )
    return text(sql).bindparams(bindparam("tag_pattern", pattern))


def memory_search(search: str | None) -> ColumnElement[bool] | None:
    """The memories list's search box: an id (`123` or `#123`), a content-hash prefix (hex, 4+
    characters) or part of a tag. Any of them matches. Never the content: it is not searched."""
    search = (search or "").strip()[:64]
    if not search:
        return None
    needle = search.lstrip("#")
    options: list[ColumnElement[bool] | TextClause] = []
    memory_id = parse_id(needle)  # models/parsing.py: only ids the column can hold
    if memory_id is not None:
        options.append(AgentMemory.id == memory_id)
    lowered = needle.lower()
    if len(lowered) >= 4 and all(c in "0123456789abcdef" for c in lowered):
        options.append(AgentMemory.content_hash.like(lowered + "%"))
    if not search.startswith("#"):
        options.append(_tag_contains(needle))
    return or_(*options) if options else AgentMemory.id.is_(None)


def memory_page(
    agent_id: int,
    *,
    state: str = "active",
    memory_type: str | None = None,
    page: int = 1,
    per_page: int = 100,
    search: str | None = None,
    locked: bool = False,
    sort: str = "created",
    descending: bool = True,
) -> tuple[list[AgentMemory], int]:
    """One page of an agent's memories, metadata only (content deferred and raise-loaded): filtered,
    searched (`memory_search`) and sorted (created, updated, tokens or id; newest first by default)."""
    criteria = memory_filter(agent_id, state, memory_type)
    condition = memory_search(search)
    if condition is not None:
        criteria.append(condition)
    if locked:
        criteria.append(AgentMemory.constitutional.is_(True))
    keys: dict[str, OrderKey] = {
        "created": AgentMemory.created_at,
        "updated": AgentMemory.updated_at,
        "tokens": AgentMemory.token_estimate,
        "id": AgentMemory.id,
    }
    key = keys.get(sort, AgentMemory.created_at)
    order = [key.desc(), AgentMemory.id.desc()] if descending else [key.asc(), AgentMemory.id.asc()]
    return page_of(
        AgentMemory, criteria, order, page, per_page, options=[defer(AgentMemory.content, raiseload=True)]
    )


def memory_metadata(agent_id: int, memory_id: int) -> AgentMemory | None:
    """One memory row of this agent, content deferred and raise-loaded."""
    return db.session.scalar(
        select(AgentMemory)
        .options(defer(AgentMemory.content, raiseload=True))
        .where(AgentMemory.agent_id == agent_id, AgentMemory.id == memory_id)
    )
