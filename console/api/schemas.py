"""Request and response models of the agent API: they validate every request and they are the
OpenAPI document's schemas (console/api/spec.py generates it from them).

Requests are strict (no coercion: "5" is not 5, 1 is not true) and forbid unknown fields; strings
refuse NUL characters, which neither database stores.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
    model_validator,
)

from models.changes.agent_settings import MAX_REFINEMENT_PROMPT_CHARS
from models.memories.fields import (  # the memory fields' rules, shared with the columns and every other path
    SCOPE_ID,
    CategoryName,
    Content,
    Ident,
    Importance,
    MemoryType,
    Role,
    Tags,
    UtcTime,
)
from models.parsing import MAX_ID, NO_NUL  # the one rule for ids, text and times


def _utc(value: datetime) -> str:
    return value.replace(tzinfo=UTC).isoformat().replace("+00:00", "Z")


# Stored times are naive UTC; on the wire they are RFC 3339 with a Z.
UtcDatetime = Annotated[
    datetime,
    PlainSerializer(_utc, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}, mode="serialization"),
]
FieldName = Annotated[str, Field(min_length=1, max_length=48, pattern=r"^[a-z][a-z0-9_]*$")]
MemoryId = Annotated[int, Field(ge=1, le=MAX_ID)]


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class QueryArgs(BaseModel):
    """Query-string parameters: text by nature, so numbers are parsed from it."""

    model_config = ConfigDict(extra="forbid")


class Response(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class ErrorOut(BaseModel):
    """Every error: a stable code and a message that never quotes memory content."""

    model_config = ConfigDict(extra="allow")

    error: str = Field(description="Machine-readable code, e.g. invalid, not_found, category_not_allowed.")
    message: str


# ----- memory.query -----


class QueryFilters(Request):
    """Optional filters, all applied in SQL. `agent_id` may only name the caller (403 otherwise)."""

    user_id: Ident | None = None
    agent_id: Ident | MemoryId | None = None
    run_id: Ident | None = None
    actor_id: Ident | None = None
    role: Role | None = None
    thread_id: Ident | None = None
    category: CategoryName | None = None
    pinned: bool | None = None
    importance_min: Importance | None = None
    importance_max: Importance | None = None
    updated_after: UtcTime | date | None = Field(
        default=None,
        description="Inclusive; a date means 00:00 UTC; any offset (clamped to years 1-9999 in UTC).",
    )
    updated_before: UtcTime | date | None = Field(
        default=None,
        description="Exclusive; a date means 00:00 UTC; any offset (clamped to years 1-9999 in UTC).",
    )


class MemoryQuery(Request):
    """docs/spec/003-memory-system.md §6. Categories default to the caller's whole allowlist and its uncategorised memories;
    naming one outside the allowlist is a 403."""

    agent: Annotated[str, Field(min_length=1, max_length=120, pattern=NO_NUL)] | None = Field(
        default=None, description="Optional: the caller's name or role; anything else is a 403."
    )
    query: Annotated[str, Field(max_length=1000, pattern=NO_NUL)] = Field(
        default="",
        description="Words to search for (any of them; more matches rank higher). Empty: by recency.",
    )
    categories: Annotated[list[CategoryName], Field(max_length=32)] | None = Field(
        default=None,
        description="Default: your whole allowlist plus your uncategorised memories. `uncategorized` names "
        "those memories (always yours to read); any other name outside your allowlist is a 403.",
    )
    filters: QueryFilters | None = None
    top_k: Annotated[int, Field(ge=1, le=50)] = 5
    return_: Literal["bullets", "full"] = Field(default="bullets", alias="return")
    budget_tokens: Annotated[int, Field(ge=1, le=32_000)] = 512
    threshold: Annotated[float, Field(ge=0.0, le=1.0)] | None = Field(
        default=None,
        description="Only results whose `match` reaches this: an absolute score, independent of the other "
        "results, so a question nothing answers well returns nothing. `match` is the share of the question's "
        "word weight the memory holds (1.0: every word; rare words weigh more), or, with a real embedder, its "
        "cosine similarity when that is higher. With the local MiniLM, 0.45 keeps 99% of the labelled set's "
        "answers and drops every off-topic question; lexically no value separates them as well "
        '(docs/reference/api.md, "`threshold` is absolute").',
    )
    relative_threshold: Annotated[float, Field(ge=0.0, le=1.0)] | None = Field(
        default=None,
        description="Drop results whose `relevance` (relative: 1.0 = this answer's best match, whatever it "
        "matched) is below this.",
    )
    thread_id: Ident | None = Field(
        default=None, description="The conversation thread, for the delta header."
    )
    since_rev: Annotated[int, Field(ge=0, le=2**53)] | None = Field(
        default=None,
        description="The thread revision last seen; the answer then starts with what changed since.",
    )
    related: Annotated[int, Field(ge=0, le=2)] = Field(
        default=2,
        description="How many related bullets (memories linked to the results, docs/spec/003-memory-system.md §2) to add; 0 for none.",
    )


class Bullet(Response):
    id: int
    category: str | None = Field(description="Null for one of your uncategorised memories.")
    text: str = Field(
        description="`[category] text`; `[uncategorized] text` for a memory without a category."
    )


class RelatedBullet(Bullet):
    related_to: int = Field(description="The result this memory is linked to.")
    strength: float = Field(description="The link's strength (cosine similarity when it was made).")


class FullResult(Response):
    id: int
    category: str | None
    memory_type: str
    content: str
    tags: list[str]
    importance: int | None
    pinned: bool
    user_id: str | None
    thread_id: str | None
    run_id: str | None
    actor_id: str | None
    role: str | None
    created_at: UtcDatetime
    updated_at: UtcDatetime
    last_accessed_at: UtcDatetime | None
    relevance: float | None = Field(
        description="Relative: 1.0 for the best match of this answer; null for a memory a second hop let in "
        "(found through a name, a code, an event or a span of days, not ranked by the question)."
    )
    match: float | None = Field(
        description="Absolute, what `threshold` compares: the share of the question's word weight this "
        "memory matches (or its cosine similarity, with a real embedder, when higher); null without words, "
        "and for a memory a second hop let in."
    )
    score: float
    tokens: int


class DeltaOut(Response):
    since_rev: int
    rev: int
    changes: int = Field(description="Changes since `since_rev` in your categories; at most 3 are shown.")
    header: str
    bullets: list[str]


class QueryOut(Response):
    return_: Literal["bullets", "full"] = Field(alias="return")
    results: list[Bullet | FullResult]
    tokens_used: int = Field(
        description="Estimated tokens of the header and results returned; <= budget_tokens."
    )
    budget_tokens: int
    omitted: int = Field(description="Ranked results left out to stay within the budget.")
    thread_id: str | None
    rev: int | None = Field(description="The thread's current revision, when a thread_id was given.")
    delta: DeltaOut | None
    related: list[RelatedBullet] = Field(
        default_factory=list,
        description="Up to `related` memories linked to the results, within your allowlist and the budget.",
    )


# ----- memories -----


class MemoryCreate(Request):
    """A new memory. Content is checked against docs/spec/003-memory-system.md §9 for its type (422 naming the rule)."""

    content: Content
    memory_type: MemoryType = "semantic"
    category: CategoryName
    importance: Importance | None = None
    pinned: bool = False
    tags: Tags = Field(default_factory=list)
    field: FieldName | None = Field(
        default=None,
        description="The user-context field this memory sets (tagged field:<name>). Sensitive fields "
        "(preferred_name, pronouns, city, language) are held as a proposed patch until the user consents; "
        "other fields until two independent signals corroborate the same value.",
    )
    user_ack: bool = Field(
        default=False,
        description="The user explicitly acknowledged this in the chat: a second signal for a benign "
        "user-context field (a sensitive field still waits for POST /patches/{id}/confirm).",
    )
    constitutional: bool = Field(default=False, description="Agents may not set it through the API (409).")
    turn_id: Ident | None = Field(
        default=None,
        description="Your identifier of the user turn this write came from (a message id). A held patch's "
        "consent must then come from another turn.",
    )
    user_id: Ident | None = None
    thread_id: Ident | None = None
    run_id: Ident | None = None
    actor_id: Ident | None = None
    role: Role | None = None


class ProcedureCreate(Request):
    """A workflow as 1-12 steps in the imperative mood; saved as "Title:\n1. Step.\n2. Step." (docs/spec/003-memory-system.md §12)."""

    title: Annotated[str, Field(min_length=1, max_length=200, pattern=NO_NUL)]
    steps: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=200, pattern=NO_NUL)]],
        Field(min_length=1, max_length=12),
    ]
    user_id: Ident | None = None
    thread_id: Ident | None = None
    run_id: Ident | None = None


class TurnForExtraction(Request):
    """One conversation turn longer than 400 characters (docs/spec/003-memory-system.md §13's trigger)."""

    turn: Annotated[str, Field(min_length=401, max_length=8000, pattern=NO_NUL)]
    user_id: Ident | None = None
    thread_id: Ident | None = None


class ExtractionQueued(Response):
    job_id: str = Field(description="The background job; its facts appear in your memory when it has run.")
    min_turn_chars: int


class MemoryUpdate(Request):
    """Fields to change; omitted fields stay. Scoping ids and importance may be set to null."""

    content: Content = None  # type: ignore[assignment]
    memory_type: MemoryType = None  # type: ignore[assignment]
    category: CategoryName = None  # type: ignore[assignment]
    importance: Importance | None = None
    pinned: bool = None  # type: ignore[assignment]
    tags: Tags = None  # type: ignore[assignment]
    field: FieldName | None = None
    user_ack: bool = Field(
        default=False, description="As on create: a signal for a benign user-context field."
    )
    turn_id: Ident | None = Field(
        default=None,
        description="Your identifier of the user turn this write came from (a message id). A held patch's "
        "consent must then come from another turn.",
    )
    user_id: Ident | None = None
    thread_id: Ident | None = None
    run_id: Ident | None = None
    actor_id: Ident | None = None
    role: Role | None = None

    @model_validator(mode="after")
    def _something(self) -> MemoryUpdate:
        if not self.model_fields_set - {"field", "user_ack", "turn_id"}:
            raise ValueError("nothing to update")
        return self


class MemoryOut(Response):
    id: int
    memory_type: str
    content: str
    category: str | None
    tags: list[str]
    importance: int | None
    pinned: bool
    constitutional: bool
    user_id: str | None
    thread_id: str | None
    run_id: str | None
    actor_id: str | None
    role: str | None
    token_estimate: int
    created_at: UtcDatetime
    updated_at: UtcDatetime
    last_accessed_at: UtcDatetime | None


class MemoryWritten(Response):
    memory: MemoryOut
    rev: int | None = Field(
        description="The memory's thread revision after this write (null without a thread)."
    )


class MemoryDeleted(Response):
    id: int
    deleted_at: UtcDatetime
    rev: int | None


class PatchOut(Response):
    id: int
    op: Literal["create", "update"]
    field: str
    policy: Literal["consent", "signals"] = Field(
        description="consent: a sensitive field, applied on the user's consent; signals: applied when two "
        "independent signals agree."
    )
    signals: list[Literal["mention", "chat_ack", "ui", "tom"]] = Field(
        description="The independent signals recorded so far (a mention counts once per thread)."
    )
    memory_id: int | None
    status: Literal["pending", "confirmed", "rejected", "expired", "stale"]
    changes: dict[str, Any] | None = Field(description="The held write while pending; emptied once decided.")
    created_at: UtcDatetime
    expires_at: UtcDatetime
    decided_at: UtcDatetime | None
    decided_by: str | None
    result_memory_id: int | None


class PatchProposed(Response):
    status: Literal["proposed"] = "proposed"
    message: str
    patch: PatchOut


class PatchList(Response):
    patches: list[PatchOut]


class PatchListArgs(QueryArgs):
    status: Literal["pending", "confirmed", "rejected", "expired", "stale"] | None = None


class ConfirmPatch(Request):
    source: Literal["chat_ack", "ui"] = Field(
        default="chat_ack",
        description="How the user consented: an explicit acknowledgement in chat, or a UI.",
    )
    user_turn: Ident = Field(
        description="Your identifier of the user's turn (chat message or UI event) that gave the "
        "acknowledgement; it must not be the turn the write came from (409 consent_same_turn)."
    )


class PatchDecided(Response):
    patch: PatchOut
    memory: MemoryOut | None
    rev: int | None


# ----- history and export -----


class HistoryArgs(QueryArgs):
    limit: Annotated[int, Field(ge=1, le=200)] = 50


class MemoryState(Response):
    content: str | None = Field(description="The text at that point; null when redacted by a TTL purge.")
    redacted: bool
    memory_type: str | None
    category: str | None
    tags: list[str] | None
    importance: int | None
    pinned: bool | None
    constitutional: bool | None
    user_id: str | None
    thread_id: str | None
    run_id: str | None
    actor_id: str | None
    role: str | None
    content_hash: str | None
    token_estimate: int | None
    created_at: UtcDatetime | None
    updated_at: UtcDatetime | None
    deleted_at: UtcDatetime | None
    purge_at: UtcDatetime | None


class HistoryEventOut(Response):
    id: int
    event: str = Field(
        description="ADD, UPDATE, DELETE, MERGE, RESTORE, ROLLBACK or TTL (docs/spec/003-memory-system.md §8)."
    )
    action: str
    actor: str
    session_id: int | None
    ts: UtcDatetime
    old: MemoryState | None
    new: MemoryState | None
    meta: dict[str, Any]


class HistoryOut(Response):
    memory_id: int
    events: list[HistoryEventOut]
    more: bool


class ExportArgs(QueryArgs):
    user_id: Ident


class ExportLine(Response):
    """One line of the JSON-lines export: a memory with its history, then a closing summary line."""

    type: Literal["memory", "summary"]
    memory: MemoryOut | None = None
    deleted: bool | None = None
    deleted_at: UtcDatetime | None = None
    history: list[HistoryEventOut] | None = None
    user_id: str | None = None
    memories: int | None = None


# ----- the agent's own settings -----


class EventCountOut(Response):
    node: Literal["hotpath", "context", "episodic", "worker", "console"] = Field(
        description="Where it happened: hotpath (your API calls), context (memory.query with since_rev), "
        "episodic (your writes of episodic memories), worker (sessions and jobs), console (an admin)."
    )
    op: str = Field(
        description="classify, search, create, update, merge, delete, restore, rollback, ttl or link."
    )
    last_24h: int
    last_7d: int


class AgentOut(Response):
    id: int
    name: str
    role: str | None
    active: bool
    core_token_budget: int
    core_token_usage: int
    min_retention: float
    mechanic_preconsent: bool
    has_refinement_prompt: bool
    last_refinement_at: UtcDatetime | None = Field(
        description="When your last refinement session ended; null if none has run."
    )
    categories: list[str] = Field(
        description="The categories your role may read and write; your uncategorised memories are yours as well."
    )
    events: list[EventCountOut] = Field(
        description="Operational events on your memory (docs/spec/003-memory-system.md §14) by node and op, over the last 24 hours "
        "and 7 days; content-free."
    )
    recall: list[RecallShareOut] = Field(
        default_factory=list,
        description="The turns you noted (POST /turns) over the last 24 hours and 7 days and how many recalled "
        "(docs/spec/003-memory-system.md §11 wants under 10%).",
    )


class RefinementPromptOut(Response):
    refinement_prompt: str | None
    is_default: bool = Field(
        description="True when no prompt of your own is set (the conservative default applies)."
    )
    max_chars: int = MAX_REFINEMENT_PROMPT_CHARS


class RefinementPromptIn(Request):
    refinement_prompt: (
        Annotated[str, Field(max_length=MAX_REFINEMENT_PROMPT_CHARS, pattern=NO_NUL)] | None
    ) = Field(description="Your own refinement instructions; null or blank restores the default.")


class PreconsentIn(Request):
    preconsent: bool


class PreconsentOut(Response):
    mechanic_preconsent: bool


class GrantOut(Response):
    id: int
    purpose: str
    scope: Literal["all", "ids"]
    memory_ids: list[int]
    duration_minutes: int
    status: Literal["pending", "active", "declined", "revoked", "expired"]
    requested_at: UtcDatetime
    decided_at: UtcDatetime | None
    decided_by: str | None
    expires_at: UtcDatetime | None
    revoked_at: UtcDatetime | None
    seconds_left: int


class GrantList(Response):
    grants: list[GrantOut]


# ----- checkpoints -----


def _finite_json(value: dict[str, Any]) -> dict[str, Any]:
    """Only what JSON can carry: 1e400 parses as infinity, which neither database stores as JSON."""
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        raise ValueError("checkpoint_data must not contain infinite numbers") from None
    return value


OptionalUser = Annotated[str, Field(max_length=SCOPE_ID.max_length, pattern=NO_NUL)]  # "" for none


class CheckpointIn(Request):
    user_id: OptionalUser = Field(default="", description="The user the thread belongs to ('' for none).")
    checkpoint_data: Annotated[dict[str, Any], AfterValidator(_finite_json)] = Field(
        description="Any JSON object up to 1 MiB (compact encoding)."
    )


class CheckpointArgs(QueryArgs):
    user_id: OptionalUser = ""


class CheckpointOut(Response):
    thread_id: str
    user_id: str
    checkpoint_data: dict[str, Any]
    size_bytes: int
    created_at: UtcDatetime
    updated_at: UtcDatetime


# ----- the context block -----


class ContextArgs(QueryArgs):
    format: Literal["json", "text"] = Field(
        default="json",
        description='`text`: the block as it goes into a system prompt (text/plain; docs/reference/api.md, "Context block").',
    )
    max_tokens: Annotated[int, Field(ge=1, le=100_000_000)] | None = Field(
        default=None,
        description="Page the block: the memories' tokens on one page sum to at most this (a larger memory "
        "has a page of its own). Default: no cap, one page.",
    )
    cursor: Annotated[str, Field(min_length=1, max_length=400, pattern=r"^[A-Za-z0-9_-]+$")] | None = Field(
        default=None, description="`page.next_cursor` of the previous page."
    )
    thread_id: Ident | None = Field(
        default=None,
        description="The conversation thread: its revision, and the delta header with since_rev.",
    )
    since_rev: Annotated[int, Field(ge=0, le=2**53)] | None = Field(
        default=None,
        description="The thread revision last seen (needs thread_id): the block then ends with "
        "what changed since (docs/spec/003-memory-system.md §1).",
    )


class ContextMemory(Response):
    id: int
    memory_type: str = Field(
        description="core or journal in their sections; any type in `always` (a `context: all` category)."
    )
    content: str
    origin_date: UtcDatetime = Field(
        description="When the memory was first made (a consolidation keeps its sources' earliest)."
    )
    tokens: int
    tags: list[str]
    category: str | None
    constitutional: bool = Field(description="Locked: no agent path may change or delete it.")


class ContextUsage(Response):
    core_tokens: int = Field(
        description="Tokens of all your active core memories (what the budget measures)."
    )
    core_count: int
    budget_tokens: int
    over_budget: bool = Field(description="core_tokens > budget_tokens: a refinement session is due.")
    last_refinement_at: UtcDatetime | None


class ContextPage(Response):
    max_tokens: int | None
    tokens: int = Field(description="The tokens of this page's memories.")
    memories: int = Field(description="Memories on this page.")
    total_memories: int = Field(description="Memories in the whole block.")
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")


class ContextOut(Response):
    """Your prompt block: every active core memory, then every other active memory of your categories
    configured `context: all`, then the journals of the last `journal_days` days, each section oldest
    origin date first (id breaks ties)."""

    agent: str
    core: list[ContextMemory]
    always: list[ContextMemory] = Field(
        description="Every other active memory of your categories configured `context: all`, whatever its "
        "type (neither core nor journal: those are in their sections)."
    )
    journal: list[ContextMemory]
    journal_days: int
    thread_id: str | None
    rev: int | None = Field(description="The thread's current revision, when thread_id was given.")
    delta: DeltaOut | None = Field(description="What changed in the thread since `since_rev`, when asked.")
    usage: ContextUsage
    page: ContextPage


class TurnIn(Request):
    """One of your turns, for the recall figures: whether it called memory.query because you were unsure."""

    recalled: bool = Field(
        description="True when this turn recalled (called memory.query); false when it went on without."
    )
    thread_id: Ident | None = None
    user_id: Ident | None = None


class TurnNoted(Response):
    recalled: bool
    noted: bool = Field(
        description="Always true: the turn is counted in GET /agent's `recall` within seconds."
    )


class RecallShareOut(Response):
    window: Literal["last_24h", "last_7d"]
    turns: int = Field(description="Turns you noted in the window.")
    recalled: int = Field(description="Of those, turns that recalled.")
    share: float | None = Field(description="recalled / turns; null when no turn was noted.")


# ----- what can still be restored -----


class RestorableArgs(QueryArgs):
    limit: Annotated[int, Field(ge=1, le=200)] = 50
    cursor: Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_-]+$")] | None = Field(
        default=None, description="`next_cursor` of the previous page."
    )


class RestorableMemory(Response):
    id: int
    memory_type: str
    category: str | None
    state: Literal["deleted", "expired"] = Field(
        description="deleted: by you, a refinement session, a job or an admin; expired: by the TTL lifecycle."
    )
    deleted_at: UtcDatetime = Field(description="When it was deleted or expired.")
    purge_at: UtcDatetime | None = Field(
        description="When an expired memory is purged for good (restorable until then); null for a deleted "
        "one, which is never purged."
    )
    content: str = Field(description="Your memory's text (it is yours: no one else's token reaches it).")
    token_estimate: int


class RestorableOut(Response):
    memories: list[RestorableMemory] = Field(description="The most recently deleted first.")
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")
