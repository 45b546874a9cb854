"""LangGraph's long-term store on an agent's memories (docs/how-to/langgraph.md).

Each (namespace, key) item IS a memory: `langgraph_store_items` maps the pair to the memory that
holds the value, and every put and delete goes through the one write path (models/changes/write.py), so it is audited,
reversible in the Time Machine, refused on constitutional or audio/somatic/voice memories and
bound by the caller's category allowlist. The memory's text is the value: `{"content": "..."}`
is stored as that text (LangMem's shape, and what refinement and memory.query read best); any
other value as its compact JSON. An item whose memory was deleted (by refinement, an admin or
a TTL expiry) is gone from the store; one whose text was rewritten returns the new text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Index, Integer, String, delete, or_, select
from sqlalchemy.orm import Mapped, mapped_column

from models.changes import rules, write
from models.db import LIKE_ESCAPE, Model, atomic, db, like_pattern, utcnow
from models.errors import ValidationFailed
from models.memories import writing
from models.memories.memory import AgentMemory
from models.retrieval.matching import query_terms

NAMESPACE_SEPARATOR = "."  # LangGraph refuses "." inside namespace labels, so joining is unambiguous
TEXT, JSON_VALUE = "text", "json"
MAX_SCAN = 5000  # items examined by one search: a namespace prefix this large should be narrowed
STORE_ACTOR = rules.AGENT_ACTOR


class StoreItem(Model):
    __tablename__ = "langgraph_store_items"
    __table_args__ = (
        Index("uq_langgraph_store_items_key", "agent_id", "namespace", "key", unique=True),
        Index("ix_langgraph_store_items_memory", "memory_id"),  # a purge's cascade finds its mapping
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id", ondelete="CASCADE"), nullable=False)
    namespace: Mapped[str] = mapped_column(String(1024), nullable=False)
    key: Mapped[str] = mapped_column(String(512), nullable=False)
    # A purged memory takes its mapping with it.
    memory_id: Mapped[int] = mapped_column(
        ForeignKey("agent_memories.id", ondelete="CASCADE"), nullable=False
    )
    value_format: Mapped[str] = mapped_column(String(8), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, default=utcnow)


@dataclass
class Found:
    namespace: list[str]
    key: str
    value: dict[str, Any]
    memory: AgentMemory
    created_at: datetime
    score: float | None = None


def join_namespace(namespace: Sequence[str]) -> str:
    if not namespace or any(not label or NAMESPACE_SEPARATOR in label for label in namespace):
        raise ValidationFailed(
            "namespace labels must be non-empty and contain no '.'", field="namespace", rule="namespace"
        )
    return NAMESPACE_SEPARATOR.join(namespace)


def split_namespace(namespace: str) -> list[str]:
    return namespace.split(NAMESPACE_SEPARATOR)


def value_to_text(value: Mapping[str, Any]) -> tuple[str, str]:
    """The memory text for a value and the format that reads it back."""
    if set(value) == {"content"} and isinstance(value["content"], str):
        return value["content"], TEXT
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
    ), JSON_VALUE


def text_to_value(text: str, value_format: str) -> dict[str, Any]:
    """Back from the memory text; a JSON value someone rewrote as prose comes back as its text."""
    if value_format == JSON_VALUE:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"content": text}


def _active(agent_id: int, categories: Sequence[str]):
    return (
        select(StoreItem, AgentMemory)
        .join(AgentMemory, AgentMemory.id == StoreItem.memory_id)
        .where(
            StoreItem.agent_id == agent_id,
            AgentMemory.agent_id == agent_id,
            AgentMemory.deleted_at.is_(None),
            AgentMemory.category.in_(list(categories)),
        )
    )


def _found(item: StoreItem, memory: AgentMemory, score: float | None = None) -> Found:
    return Found(
        namespace=split_namespace(item.namespace),
        key=item.key,
        value=text_to_value(memory.content, item.value_format),
        memory=memory,
        created_at=item.created_at,
        score=score,
    )


def _mapping(agent_id: int, namespace: str, key: str) -> StoreItem | None:
    return db.session.scalar(
        select(StoreItem).where(
            StoreItem.agent_id == agent_id, StoreItem.namespace == namespace, StoreItem.key == key
        )
    )


def get_item(agent_id: int, namespace: Sequence[str], key: str, categories: Sequence[str]) -> Found | None:
    row = db.session.execute(
        _active(agent_id, categories).where(
            StoreItem.namespace == join_namespace(namespace), StoreItem.key == key
        )
    ).first()
    return _found(*row) if row else None


def put_item(
    agent_id: int,
    namespace: Sequence[str],
    key: str,
    value: Mapping[str, Any],
    *,
    category: str,
    memory_type: str,
    check_category,
) -> Found:
    """Create or update the item's memory through the one write path (actor `agent`), which refuses a
    locked memory and a category outside the allowlist (`check_category` raises); putting the value it
    already has changes nothing."""
    joined = join_namespace(namespace)
    text, value_format = value_to_text(value)
    content = writing.check_content(memory_type, text)  # to compare with what the memory holds
    with atomic():
        item = _mapping(agent_id, joined, key)
        memory = db.session.get(AgentMemory, item.memory_id) if item else None
        if item is not None and memory is not None and memory.deleted_at is None:
            changes: dict[str, Any] = {}
            if memory.content != content:
                changes["content"] = content
            if memory.memory_type != memory_type:
                changes["memory_type"] = memory_type
            if changes:
                written = write.change(
                    agent_id, memory.id, actor=STORE_ACTOR, allowed=check_category, **changes
                ).memory
                memory = written if written is not None else memory
            else:  # nothing to write; answering with the item is a read, within the allowlist
                check_category([memory.category])
            item.value_format = value_format
        else:
            memory = write.save(
                agent_id, content, actor=STORE_ACTOR, memory_type=memory_type, category=category,
                allowed=check_category,
            ).memory  # fmt: skip
            if memory is None:  # a store item never declares a user-context field, so it is never held
                raise ValidationFailed("the store cannot write a user-context field's memory")
            if item is None:
                item = StoreItem(agent_id=agent_id, namespace=joined, key=key, memory_id=memory.id)
                db.session.add(item)
            else:  # the key's previous memory was deleted: the new one takes its place
                item.memory_id = memory.id
                item.created_at = utcnow()
            item.value_format = value_format
        db.session.flush()
    return _found(item, memory)


def delete_item(agent_id: int, namespace: Sequence[str], key: str, *, check_category) -> int | None:
    """Soft-delete the item's memory (restorable, audited) and drop the mapping; the memory id, or
    None when there was no such item (deleting nothing is not an error, as in LangGraph)."""
    joined = join_namespace(namespace)
    with atomic():
        item = _mapping(agent_id, joined, key)
        if item is None:
            return None
        memory = db.session.get(AgentMemory, item.memory_id)
        memory_id = item.memory_id
        if memory is not None and memory.deleted_at is None:
            write.remove(
                agent_id, [memory.id], actor=STORE_ACTOR, reason="langgraph store", allowed=check_category
            )
        db.session.execute(delete(StoreItem).where(StoreItem.id == item.id))
    return memory_id


_OPS = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}


def matches(value: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """LangGraph's store filter: equality per key, or an operator object ($eq, $ne, $gt, ...)."""
    for name, expected in wanted.items():
        actual = value.get(name)
        if isinstance(expected, dict) and expected and all(k in _OPS for k in expected):
            for op, operand in expected.items():
                try:
                    if not _OPS[op](actual, operand):
                        return False
                except TypeError:
                    return False
        elif actual != expected:
            return False
    return True


def _prefix_clause(prefix: str):
    return or_(
        StoreItem.namespace == prefix,
        StoreItem.namespace.like(
            like_pattern(prefix, before="", after=NAMESPACE_SEPARATOR + "%"), escape=LIKE_ESCAPE
        ),
    )


def search_items(
    agent_id: int,
    namespace_prefix: Sequence[str],
    categories: Sequence[str],
    *,
    query: str | None = None,
    filter: Mapping[str, Any] | None = None,
    limit: int = 10,
    offset: int = 0,
) -> list[Found]:
    """Items under the prefix, filtered by value. With a query, only items sharing a word with it, best
    first (the share of the query's words found in the text); without, the latest updated first."""
    stmt = _active(agent_id, categories)
    if namespace_prefix:
        stmt = stmt.where(_prefix_clause(join_namespace(namespace_prefix)))
    stmt = stmt.order_by(AgentMemory.updated_at.desc(), StoreItem.id.desc()).limit(MAX_SCAN)
    terms = query_terms(query)
    found = []
    for item, memory in db.session.execute(stmt):
        hit = _found(item, memory)
        if filter and not matches(hit.value, filter):
            continue
        if terms:
            words = set(query_terms_all(memory.content))
            hit.score = sum(t in words for t in terms) / len(terms)
            if not hit.score:
                continue
        found.append(hit)
    if terms:
        found.sort(key=lambda f: -(f.score or 0.0))  # stable: recency breaks ties
    return found[offset : offset + limit]


def query_terms_all(text: str) -> list[str]:
    """Every word of a memory's text, by the same rule as query words."""
    return re.findall(r"[^\W_]+", text.lower())


def _label_match(labels: Sequence[str], pattern: Sequence[str]) -> bool:
    return len(labels) >= len(pattern) and all(
        p == "*" or p == label for label, p in zip(labels, pattern, strict=False)
    )


def list_namespaces(
    agent_id: int,
    categories: Sequence[str],
    *,
    prefix: Sequence[str] | None = None,
    suffix: Sequence[str] | None = None,
    max_depth: int | None = None,
    limit: int = 100,
    offset: int = 0,
) -> list[list[str]]:
    """Distinct namespaces holding live items, sorted; `*` in a prefix or suffix matches any label,
    and `max_depth` truncates deeper namespaces to that many labels (LangGraph's semantics)."""
    stmt = (
        select(StoreItem.namespace)
        .join(AgentMemory, AgentMemory.id == StoreItem.memory_id)
        .where(
            StoreItem.agent_id == agent_id,
            AgentMemory.deleted_at.is_(None),
            AgentMemory.category.in_(list(categories)),
        )
        .distinct()
    )
    result = set()
    for (joined,) in db.session.execute(stmt):
        labels = split_namespace(joined)
        if prefix and not _label_match(labels, prefix):
            continue
        if suffix and not _label_match(labels[::-1], list(suffix)[::-1]):
            continue
        result.add(tuple(labels[:max_depth] if max_depth is not None else labels))
    return [list(ns) for ns in sorted(result)][offset : offset + limit]
