"""The tools a refinement session's model may call: their argument models, from which both the
validation of a call and the tool definitions offered to the model (`tool_specs`) are made, and which of
them mutate.

The toolbox (`toolbox.py`) dispatches a call by name to its handler after validating the arguments here;
the session loop (`jobs/refinement.py`) offers `tool_specs()` to the model.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from models.memories.fields import Content
from models.parsing import MAX_ID

MAX_IDS_PER_CALL = 10
MAX_SUMMARY_CHARS = 2000

MemoryId = Annotated[int, Field(ge=1, le=MAX_ID)]


class ToolArgs(BaseModel):
    """The arguments of one tool: its docstring is the tool's description and its JSON schema the tool's
    parameters (`tool_specs`); the toolbox validates every call against it. Unknown arguments are refused."""

    model_config = ConfigDict(extra="forbid")


class SearchArgs(ToolArgs):
    """Find your active core memories containing a keyword (case-insensitive), optionally by origin date."""

    query: str = Field(min_length=1, max_length=200, description="Keyword or phrase; % and _ are literal.")
    since: str | None = Field(
        default=None, description="Origin date from (YYYY-MM-DD or ISO 8601), inclusive."
    )
    until: str | None = Field(
        default=None, description="Origin date until (YYYY-MM-DD or ISO 8601), inclusive."
    )


class ConsolidateArgs(ToolArgs):
    """Replace two or more memories that carry the same specific fact by one; keeps the earliest date."""

    ids: list[MemoryId] = Field(
        min_length=2, max_length=MAX_IDS_PER_CALL, description="Ids of the memories that carry the same fact."
    )
    new_content: Content = Field(description="The one memory replacing them.")


class UpdateArgs(ToolArgs):
    """Tighten the phrasing of one memory without changing its meaning."""

    id: MemoryId
    content: Content = Field(description="The new wording.")


class DeleteArgs(ToolArgs):
    """Delete a memory that is an exact duplicate of another (rare). Pass `id` or `ids`, not both."""

    id: MemoryId | None = None
    ids: list[MemoryId] | None = Field(default=None, min_length=1, max_length=MAX_IDS_PER_CALL)


class ProtectArgs(ToolArgs):
    """Mark a memory constitutional: it can never be deleted or consolidated afterwards."""

    id: MemoryId


class CompleteArgs(ToolArgs):
    """End the session with a brief summary. Zero operations is a good outcome."""

    summary: str = Field(min_length=1, max_length=MAX_SUMMARY_CHARS)

    @field_validator("summary")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("summary is empty")
        return value.strip()


class NextPageArgs(ToolArgs):
    """Move to the next page of your ledger (offered only when your ledger comes in pages). The next page
    replaces this one in your prompt; operations already applied stay, and the limits count for the whole
    session."""


TOOL_ARGS: dict[str, type[ToolArgs]] = {
    "search_memories": SearchArgs,
    "consolidate_memories": ConsolidateArgs,
    "update_memory": UpdateArgs,
    "delete_memory": DeleteArgs,
    "protect_memory": ProtectArgs,
    "complete_refinement": CompleteArgs,
    "next_page": NextPageArgs,
}
# Offered to the model only when the session's ledger is paged (docs/explanation/refinement.md, "Large
# ledgers").
PAGED_ONLY = frozenset({"next_page"})
MUTATING = frozenset({"consolidate_memories", "update_memory", "delete_memory", "protect_memory"})
# Operations that cannot change the active core tokens or count: the breaker has nothing to check.
RETENTION_NEUTRAL = frozenset({"protect_memory"})


def tool_specs(paged: bool = False) -> list[dict[str, Any]]:
    """The OpenAI function tools, generated from the same models that validate the calls; `next_page`
    only when the ledger comes in pages."""
    specs = []
    for name, model in TOOL_ARGS.items():
        if name in PAGED_ONLY and not paged:
            continue
        schema = model.model_json_schema()
        schema.pop("title", None)
        schema.pop("description", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        specs.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": (model.__doc__ or "").strip(),
                    "parameters": schema,
                },
            }
        )
    return specs
