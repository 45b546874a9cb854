"""The agent's context block in a LangGraph graph's system prompt (extra `memconsole-client[langgraph]`;
docs/how-to/langgraph.md, "The context block in the system prompt").

`context_message(client)` is a `SystemMessage` holding the block's text (GET /context?format=text): every
core memory, this week's journals, the budget line. `ContextPrompt(client)` is the same as a graph's
prompt: called with the graph state before each model call, it puts that message (after your own
instructions, if any) before the state's messages. The client keeps the block's ETag, so each turn
costs a 304 until a memory changes, and the unchanged text stays a byte-identical prefix for the model
provider's prompt cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AnyMessage, SystemMessage

from .client import AsyncClient, Client


def _message(block: str, instructions: str | None) -> SystemMessage:
    # Your own instructions first: they change least, so they lead the cacheable prefix.
    return SystemMessage(content=f"{instructions}\n\n{block}" if instructions else block)


def context_message(
    client: Client,
    *,
    instructions: str | None = None,
    thread_id: str | None = None,
    since_rev: int | None = None,
) -> SystemMessage:
    """A SystemMessage of your instructions (if any) and the context block, fetched with its ETag."""
    block = client.context(format="text", thread_id=thread_id, since_rev=since_rev)
    return _message(block, instructions)


async def acontext_message(
    client: AsyncClient,
    *,
    instructions: str | None = None,
    thread_id: str | None = None,
    since_rev: int | None = None,
) -> SystemMessage:
    """`context_message` for an AsyncClient."""
    block = await client.context(format="text", thread_id=thread_id, since_rev=since_rev)
    return _message(block, instructions)


class ContextPrompt:
    """A graph's prompt: `ContextPrompt(client)(state)` is [the context SystemMessage, *state messages].

    Pass it as `prompt=` to `langgraph.prebuilt.create_react_agent`, or call it in your own model node.
    `state` is a mapping with `messages`, or a list of messages."""

    def __init__(self, client: Client, *, instructions: str | None = None) -> None:
        self.client = client
        self.instructions = instructions

    def __call__(self, state: Any) -> list[AnyMessage]:
        messages: Sequence[AnyMessage] = state["messages"] if isinstance(state, dict) else state
        return [context_message(self.client, instructions=self.instructions), *messages]
