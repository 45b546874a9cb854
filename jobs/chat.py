"""The chat types every model speaks here: a `Turn` with its `ToolCall`s, and the `ChatModel` protocol.

The openai SDK's model (`jobs/llm.py`) and the built-in offline refiner (`jobs/offline.py`) both answer
with a `Turn`, so the refinement loop, its tools and its guards are identical for either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

OFFLINE_LABEL = "offline"


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str


@dataclass
class Turn:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    def as_message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


class ChatModel(Protocol):
    label: str

    def turn(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        max_tokens: int | None = None,
    ) -> Turn: ...
