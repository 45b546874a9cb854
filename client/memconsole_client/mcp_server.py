"""`memconsole-mcp`: the agent's governed memory as MCP tools (extra `memconsole-client[mcp]`).

Configured by MEMCONSOLE_URL and MEMCONSOLE_TOKEN (the agent's API token); stdio by default,
streamable HTTP with `--http` (docs/how-to/mcp.md). Every tool calls the agent API, so writes go
through the console's audited mutation path with the agent's allowlist and locks; a refusal comes
back as a tool error carrying the API's code and message (which never quote memory content).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from .client import AsyncClient
from .errors import ApiError, TransportError
from .recall import DEFAULT_RECALL_THRESHOLD

INSTRUCTIONS = (
    "Long-term memory for this agent, governed by the memory console: every write is audited and "
    "reversible, constitutional memories are locked, and each agent may use only its allowed categories "
    "(memory_categories lists them). Search with memory_query before saving, to avoid duplicates. "
    "memory_context (also the resource memory://context) returns your core memories as a prompt block."
)

MemoryId = Annotated[
    int, Field(ge=1, description="The memory's id, as memory_query or memory_save returned it.")
]
Category = Annotated[
    str,
    Field(description="One of your allowed categories (memory_categories lists them), e.g. 'preferences'."),
]


def _dump(model: Any) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def build_server(base_url: str, token: str) -> MCPServer:
    """The MCP server and its tools, talking to the console at `base_url` with the agent's `token`."""
    state: dict[str, AsyncClient] = {}

    @asynccontextmanager
    async def lifespan(server: MCPServer) -> AsyncIterator[None]:
        state["client"] = AsyncClient(base_url, token)
        try:
            yield
        finally:
            await state.pop("client").aclose()

    server = MCPServer("memconsole", instructions=INSTRUCTIONS, lifespan=lifespan, log_level="WARNING")

    async def call(method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return await getattr(state["client"], method)(*args, **kwargs)
        except ApiError as error:
            raise ToolError(f"{error.code}: {error.message}") from None
        except TransportError as error:
            raise ToolError(f"the memory console did not answer ({error})") from None

    @server.tool()
    async def memory_query(
        query: Annotated[
            str, Field(max_length=1000, description="Words to search for; empty for the most recent.")
        ] = "",
        categories: Annotated[
            list[str] | None, Field(description="Limit to these categories; default: all you may read.")
        ] = None,
        top_k: Annotated[int, Field(ge=1, le=50, description="How many memories to return at most.")] = 5,
        user_id: Annotated[str | None, Field(description="Only memories about this user.")] = None,
        full: Annotated[
            bool, Field(description="Return full records (type, tags, dates) instead of bullets.")
        ] = False,
        confidence: Annotated[
            float | None,
            Field(
                ge=0,
                le=1,
                description="How sure you are (0-1) that you can answer without recalling. With it, the "
                "search runs only when confidence is below recall_threshold, and the turn is counted for "
                "the share of turns that recall (aim: under 10%).",
            ),
        ] = None,
        recall_threshold: Annotated[
            float, Field(ge=0, le=1, description="Recall when confidence is below this.")
        ] = DEFAULT_RECALL_THRESHOLD,
    ) -> dict[str, Any]:
        """Search your long-term memory: ranked by relevance to the query words, recency and importance.
        Returns `results` (id, category, text or full record) within a token budget. Given `confidence`,
        searches only when unsure and says whether it `recalled`, with this session's turn counts."""
        filters = {"user_id": user_id} if user_id else None
        if confidence is not None:
            turn = await call(
                "recall",
                query,
                confidence=confidence,
                threshold=recall_threshold,
                user_id=user_id,
                categories=categories,
                top_k=top_k,
                filters=filters,
                return_="full" if full else None,
            )
            counts = {
                "recalled": turn.recalled,
                "turns": turn.turns,
                "recalls": turn.recalls,
                "share": turn.share,
            }
            return {**(_dump(turn.result) if turn.result else {"results": []}), **counts}
        result = await call(
            "query",
            query,
            categories=categories,
            top_k=top_k,
            filters=filters,
            return_="full" if full else None,
        )
        return _dump(result)

    @server.tool()
    async def memory_save(
        content: Annotated[
            str,
            Field(
                min_length=1,
                max_length=10_000,
                description="The fact to remember. Semantic memories: 1-2 sentences, third person, no I/you.",
            ),
        ],
        category: Category,
        memory_type: Annotated[
            str, Field(description="semantic (facts, default), episodic (what happened), core, procedural.")
        ] = "semantic",
        importance: Annotated[
            int | None, Field(ge=1, le=5, description="1 (trivial) to 5 (essential).")
        ] = None,
        tags: Annotated[list[str] | None, Field(description="Optional short labels.")] = None,
        user_id: Annotated[str | None, Field(description="The user this memory is about.")] = None,
    ) -> dict[str, Any]:
        """Save a new memory. Returns the saved memory (with its id), or a `proposed` patch when it sets a
        sensitive user field that waits for the user's consent."""
        result = await call(
            "save_memory",
            content,
            category=category,
            memory_type=memory_type,
            importance=importance,
            tags=tags,
            user_id=user_id,
        )
        return _dump(result)

    @server.tool()
    async def memory_update(
        memory_id: MemoryId,
        content: Annotated[
            str | None, Field(max_length=10_000, description="New text, if it changes.")
        ] = None,
        category: Annotated[str | None, Field(description="New category, if it changes.")] = None,
        importance: Annotated[
            int | None, Field(ge=1, le=5, description="New importance, if it changes.")
        ] = None,
        tags: Annotated[
            list[str] | None, Field(description="New tags (replacing the old), if they change.")
        ] = None,
    ) -> dict[str, Any]:
        """Change one of your memories (audited; the previous version stays in its history). Constitutional
        memories cannot be changed."""
        changes = {
            k: v
            for k, v in {
                "content": content,
                "category": category,
                "importance": importance,
                "tags": tags,
            }.items()
            if v is not None
        }
        if not changes:
            raise ToolError("invalid: give at least one of content, category, importance, tags")
        return _dump(await call("update_memory", memory_id, **changes))

    @server.tool()
    async def memory_delete(memory_id: MemoryId) -> dict[str, Any]:
        """Delete one of your memories (a soft delete: audited and reversible by an admin). Constitutional
        memories cannot be deleted."""
        return _dump(await call("delete_memory", memory_id))

    @server.tool()
    async def memory_history(
        memory_id: MemoryId,
        limit: Annotated[int, Field(ge=1, le=200, description="How many events, newest first.")] = 20,
    ) -> dict[str, Any]:
        """The audited history of one of your memories: every change (ADD, UPDATE, DELETE, MERGE, ...) with
        who made it, when, and the state before and after."""
        return _dump(await call("memory_history", memory_id, limit=limit))

    @server.resource(
        "memory://context",
        name="memory_context",
        title="Your memory context block",
        description="Every core memory of yours and this week's journals, oldest first, then your core "
        "tokens against your budget: the text to hold in your system prompt (GET /api/v1/context).",
        mime_type="text/plain",
    )
    async def memory_context_resource() -> str:
        return await call("context", format="text")

    @server.tool()
    async def memory_context(
        thread_id: Annotated[
            str | None, Field(description="The conversation thread: its revision is shown.")
        ] = None,
        since_rev: Annotated[
            int | None,
            Field(ge=0, description="The thread revision you last saw (with thread_id): what changed since."),
        ] = None,
    ) -> dict[str, Any]:
        """Your whole memory context block: every core memory, this week's journals, your core tokens
        against your budget and when you were last refined, as `text` to hold in your system prompt.
        `changed` is false when it is the same block as the previous call returned."""
        text = await call("context", format="text", thread_id=thread_id, since_rev=since_rev)
        return {"text": text, "changed": bool(state["client"].context_changed)}

    @server.tool()
    async def memory_categories() -> dict[str, Any]:
        """The categories you may read and write, and your memory budget."""
        agent = await call("get_agent")
        return {
            "categories": agent.categories,
            "core_token_budget": agent.core_token_budget,
            "core_token_usage": agent.core_token_usage,
        }

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="memconsole-mcp",
        description="MCP server for an agent's memory in the memory console. "
        "Needs MEMCONSOLE_URL (the console's address) and MEMCONSOLE_TOKEN (the agent's API token).",
    )
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    parser.add_argument("--path", default="/mcp", help="HTTP path of the endpoint (default /mcp)")
    args = parser.parse_args(argv)
    base_url, token = os.environ.get("MEMCONSOLE_URL"), os.environ.get("MEMCONSOLE_TOKEN")
    if not base_url or not token:
        print("memconsole-mcp: set MEMCONSOLE_URL and MEMCONSOLE_TOKEN", file=sys.stderr)
        raise SystemExit(2)
    server = build_server(base_url, token)
    if args.http:
        server.run("streamable-http", host=args.host, port=args.port, streamable_http_path=args.path)
    else:
        server.run()


if __name__ == "__main__":
    main()
