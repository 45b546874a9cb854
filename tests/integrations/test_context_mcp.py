"""The context block in memconsole-mcp, through the official MCP client over stdio: the resource
memory://context and the tool memory_context return the block's text; the tool says whether it changed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from models.changes import mutations
from tests.integrations import aio

SERVER = Path(sys.executable).with_name("memconsole-mcp")


def test_the_mcp_resource_and_tool_return_the_context_block(live_console):
    agent_id, token = live_console.agent(role="supervisor")
    with live_console.app.app_context():
        memory_id = mutations.create_memory(agent_id, "The user is called Ada.", actor="admin:test").id

    async def scenario():
        params = StdioServerParameters(
            command=str(SERVER), env={"MEMCONSOLE_URL": live_console.base_url, "MEMCONSOLE_TOKEN": token}
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            resources = [str(r.uri) for r in (await session.list_resources()).resources]
            first = await session.call_tool("memory_context", {})
            second = await session.call_tool("memory_context", {})
            read_back = await session.read_resource("memory://context")
            return resources, read_back, first, second

    resources, read_back, first, second = aio.run(scenario())
    assert "memory://context" in resources
    text = read_back.contents[0].text
    assert text.startswith("## Core memories\n") and f"#{memory_id}" in text
    assert "The user is called Ada." in text and "## Budget" in text
    assert not first.is_error and not second.is_error
    first_payload, second_payload = (json.loads(r.content[0].text) for r in (first, second))
    assert first_payload == {"text": text, "changed": True}
    assert second_payload == {"text": text, "changed": False}
