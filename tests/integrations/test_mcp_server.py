"""memconsole-mcp, launched over stdio by the official MCP client (mcp.ClientSession), against a running
console: the tools are listed with their schemas, a saved memory is found by memory_query, and API
refusals come back as tool errors carrying the API's message."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from models.changes import mutations
from tests.integrations import aio

SERVER = Path(sys.executable).with_name("memconsole-mcp")
TOOLS = {
    "memory_query",
    "memory_save",
    "memory_update",
    "memory_delete",
    "memory_history",
    "memory_categories",
}


async def _session_run(base_url: str, token: str, scenario):
    params = StdioServerParameters(
        command=str(SERVER), env={"MEMCONSOLE_URL": base_url, "MEMCONSOLE_TOKEN": token}
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await scenario(session)


def _payload(result) -> dict:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def test_the_mcp_client_lists_the_tools_saves_a_memory_and_finds_it(live_console):
    _, token = live_console.agent(role="supervisor")

    async def scenario(session: ClientSession):
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        saved = _payload(
            await session.call_tool(
                "memory_save",
                {"content": "The user drinks green tea every morning.", "category": "preferences"},
            )
        )
        found = _payload(await session.call_tool("memory_query", {"query": "green tea"}))
        updated = _payload(
            await session.call_tool(
                "memory_update",
                {"memory_id": saved["memory"]["id"], "content": "The user drinks jasmine tea every morning."},
            )
        )
        history = _payload(await session.call_tool("memory_history", {"memory_id": saved["memory"]["id"]}))
        deleted = _payload(await session.call_tool("memory_delete", {"memory_id": saved["memory"]["id"]}))
        return tools, saved, found, updated, history, deleted

    tools, saved, found, updated, history, deleted = aio.run(
        _session_run(live_console.base_url, token, scenario)
    )
    assert set(tools) >= TOOLS
    for name in TOOLS:
        assert tools[name].description and tools[name].input_schema["type"] == "object"
    assert tools["memory_save"].input_schema["required"] == ["content", "category"]
    assert "description" in tools["memory_save"].input_schema["properties"]["content"]
    memory_id = saved["memory"]["id"]
    assert [r["id"] for r in found["results"]] == [memory_id]
    assert "green tea" in found["results"][0]["text"]
    assert updated["memory"]["content"] == "The user drinks jasmine tea every morning."
    assert [e["event"] for e in history["events"]] == ["UPDATE", "ADD"]
    assert deleted["id"] == memory_id


def test_api_refusals_come_back_as_tool_errors_with_the_apis_message(live_console):
    agent_id, token = live_console.agent(role="supervisor")
    with live_console.app.app_context():
        locked = mutations.create_memory(
            agent_id,
            "The user is a vegetarian.",
            actor="admin:1",
            category="preferences",
            constitutional=True,
        ).id

    async def scenario(session: ClientSession):
        outside = await session.call_tool(
            "memory_save", {"content": "The user reads sci-fi.", "category": "knowledge"}
        )
        constitutional = await session.call_tool("memory_delete", {"memory_id": locked})
        missing = await session.call_tool("memory_history", {"memory_id": 999_999})
        return outside, constitutional, missing

    outside, constitutional, missing = aio.run(_session_run(live_console.base_url, token, scenario))
    # The SDK prefixes "Error executing tool <name>: "; the API's code and message follow.
    assert outside.is_error and "category_not_allowed: " in outside.content[0].text
    assert "knowledge" in outside.content[0].text
    assert constitutional.is_error and "constitutional: " in constitutional.content[0].text
    assert f"#{locked}" in constitutional.content[0].text
    assert missing.is_error and "not_found: " in missing.content[0].text


def test_the_server_speaks_streamable_http_with_a_flag(live_console):
    import os
    import socket
    import subprocess
    import time

    from mcp.client.streamable_http import streamable_http_client

    _, token = live_console.agent(role="supervisor")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "MEMCONSOLE_URL": live_console.base_url, "MEMCONSOLE_TOKEN": token}
    proc = subprocess.Popen([str(SERVER), "--http", "--port", str(port)], env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, "memconsole-mcp --http exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "memconsole-mcp --http did not listen"
                time.sleep(0.2)

        async def scenario():
            async with (
                streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                names = {tool.name for tool in (await session.list_tools()).tools}
                categories = _payload(await session.call_tool("memory_categories", {}))
                return names, categories

        names, categories = aio.run(scenario())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert set(names) >= TOOLS and "preferences" in categories["categories"]


def test_the_server_refuses_to_start_without_its_settings():
    import subprocess

    done = subprocess.run(
        [str(SERVER)], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "MEMCONSOLE_URL and MEMCONSOLE_TOKEN" in done.stderr
