"""Typed answers of the agent API (its OpenAPI document at /api/v1/openapi.json is the reference).

Models ignore fields they do not know, so a newer server does not break an older client.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Memory(Model):
    id: int
    memory_type: str
    content: str
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    importance: int | None = None
    pinned: bool = False
    constitutional: bool = False
    user_id: str | None = None
    thread_id: str | None = None
    run_id: str | None = None
    actor_id: str | None = None
    role: str | None = None
    token_estimate: int = 0
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime | None = None


class MemoryWritten(Model):
    memory: Memory
    rev: int | None = None


class MemoryDeleted(Model):
    id: int
    deleted_at: datetime
    rev: int | None = None


class Patch(Model):
    id: int
    op: str
    field: str
    memory_id: int | None = None
    status: str
    changes: dict[str, Any] | None = None
    created_at: datetime
    expires_at: datetime
    decided_at: datetime | None = None
    decided_by: str | None = None
    result_memory_id: int | None = None


class PatchProposed(Model):
    """202: a sensitive user-context field, held until the user consents."""

    status: Literal["proposed"] = "proposed"
    message: str
    patch: Patch


class PatchDecided(Model):
    patch: Patch
    memory: Memory | None = None
    rev: int | None = None


class Bullet(Model):
    id: int
    category: str
    text: str


class RelatedBullet(Bullet):
    related_to: int
    strength: float


class FullResult(Model):
    id: int
    category: str | None = None
    memory_type: str
    content: str
    tags: list[str] = Field(default_factory=list)
    importance: int | None = None
    pinned: bool = False
    user_id: str | None = None
    thread_id: str | None = None
    run_id: str | None = None
    actor_id: str | None = None
    role: str | None = None
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime | None = None
    relevance: float | None = None
    match: float | None = None
    score: float
    tokens: int


class Delta(Model):
    since_rev: int
    rev: int
    changes: int
    header: str
    bullets: list[str]


class QueryResult(Model):
    return_: Literal["bullets", "full"] = Field(alias="return")
    results: list[FullResult | Bullet]
    tokens_used: int
    budget_tokens: int
    omitted: int
    thread_id: str | None = None
    rev: int | None = None
    delta: Delta | None = None
    related: list[RelatedBullet] = Field(default_factory=list)


class MemoryState(Model):
    content: str | None = None
    redacted: bool = False
    memory_type: str | None = None
    category: str | None = None
    tags: list[str] | None = None
    importance: int | None = None
    pinned: bool | None = None
    constitutional: bool | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    deleted_at: datetime | None = None


class HistoryEvent(Model):
    id: int
    event: str
    action: str
    actor: str
    session_id: int | None = None
    ts: datetime
    old: MemoryState | None = None
    new: MemoryState | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class History(Model):
    memory_id: int
    events: list[HistoryEvent]
    more: bool


class RestorableMemory(Model):
    id: int
    memory_type: str
    category: str | None = None
    state: Literal["deleted", "expired"]
    deleted_at: datetime
    purge_at: datetime | None = None  # None: deleted, never purged
    content: str
    token_estimate: int


class RestorableList(Model):
    memories: list[RestorableMemory]
    next_cursor: str | None = None


class ExportLine(Model):
    type: Literal["memory", "summary"]
    memory: Memory | None = None
    deleted: bool | None = None
    deleted_at: datetime | None = None
    history: list[HistoryEvent] | None = None
    user_id: str | None = None
    memories: int | None = None


class ExtractionQueued(Model):
    job_id: str
    min_turn_chars: int


class RecallShare(Model):
    """Turns the agent noted in a window (POST /turns) and how many recalled; share is null without turns."""

    window: str
    turns: int
    recalled: int
    share: float | None = None


class TurnNoted(Model):
    recalled: bool
    noted: bool


class AgentInfo(Model):
    id: int
    name: str
    role: str | None = None
    active: bool
    core_token_budget: int
    core_token_usage: int
    min_retention: float
    mechanic_preconsent: bool
    has_refinement_prompt: bool
    last_refinement_at: datetime | None = None
    categories: list[str]
    recall: list[RecallShare] = Field(default_factory=list)


class RefinementPrompt(Model):
    refinement_prompt: str | None = None
    is_default: bool
    max_chars: int


class Preconsent(Model):
    mechanic_preconsent: bool


class Grant(Model):
    id: int
    purpose: str
    scope: str
    memory_ids: list[int] = Field(default_factory=list)
    duration_minutes: int
    status: str
    requested_at: datetime
    decided_at: datetime | None = None
    decided_by: str | None = None
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    seconds_left: int = 0


class SupervisorCheckpoint(Model):
    thread_id: str
    user_id: str
    checkpoint_data: dict[str, Any]
    size_bytes: int
    created_at: datetime
    updated_at: datetime


class StoreItem(Model):
    namespace: list[str]
    key: str
    value: dict[str, Any]
    memory_id: int
    category: str | None = None
    memory_type: str
    created_at: datetime
    updated_at: datetime
    score: float | None = None


class StoreResult(Model):
    op: Literal["get", "put", "search", "list_namespaces"]
    item: StoreItem | None = None
    items: list[StoreItem] | None = None
    namespaces: list[list[str]] | None = None
    deleted_memory_id: int | None = None


class ContextMemory(Model):
    id: int
    memory_type: str  # core, journal, or any type in `always`
    content: str
    origin_date: datetime
    tokens: int
    tags: list[str] = Field(default_factory=list)
    category: str | None = None
    constitutional: bool = False


class ContextUsage(Model):
    core_tokens: int
    core_count: int
    budget_tokens: int
    over_budget: bool
    last_refinement_at: datetime | None = None


class ContextPage(Model):
    max_tokens: int | None = None
    tokens: int
    memories: int
    total_memories: int
    next_cursor: str | None = None


class ContextBlock(Model):
    """GET /context as JSON: your core memories, then the journal window's, oldest first; `etag` is the
    response's ETag (what the client sends back as If-None-Match)."""

    agent: str
    core: list[ContextMemory]
    always: list[ContextMemory] = Field(default_factory=list)  # your `context: all` categories' memories
    journal: list[ContextMemory]
    journal_days: int
    thread_id: str | None = None
    rev: int | None = None
    delta: Delta | None = None
    usage: ContextUsage
    page: ContextPage
    etag: str | None = None
