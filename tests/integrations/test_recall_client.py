"""Recall when unsure, from the client, a LangGraph node and the MCP tool, against a running console:
memory.query runs only below the threshold, every turn is noted, the client counts turns and recalls,
and GET /agent reports the share of turns that recalled."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.graph import StateGraph
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memconsole_client import AsyncClient, Client
from memconsole_client.langgraph_recall import RecallNode
from tests.integrations import aio

MCP_SERVER = Path(sys.executable).with_name("memconsole-mcp")
TEA = "The user drinks green tea every morning."
BULLET = f"[preferences] {TEA}"  # a bullet names its category


def _week(client: Client, turns: int) -> dict[str, Any]:
    """GET /agent's 7-day recall figure once the console has written the noted turns (they are buffered
    and written within seconds)."""
    deadline = time.monotonic() + 15
    while True:
        week = {r.window: r for r in client.get_agent().recall}["last_7d"]
        if week.turns >= turns or time.monotonic() > deadline:
            return week.model_dump()
        time.sleep(0.3)


@pytest.fixture
def agent_client(live_console):
    _, token = live_console.agent(role="supervisor")
    with Client(live_console.base_url, token) as client:
        client.save_memory(TEA, category="preferences")
        yield client


def test_recall_queries_only_below_the_threshold_and_counts_every_turn(agent_client):
    sure = agent_client.recall("green tea", confidence=0.9, threshold=0.3)
    assert not sure.recalled and sure.result is None and sure.texts == []
    unsure = agent_client.recall("green tea", confidence=0.1, threshold=0.3)
    assert unsure.recalled and unsure.texts == [BULLET]
    assert len(unsure.result.results) <= 3  # §11's shape: top_k 3 within a small budget
    for _ in range(8):
        agent_client.recall("green tea", confidence=0.8)
    counts = agent_client.recall_counts
    assert (counts.turns, counts.recalls, counts.share) == (10, 1, 0.1)
    assert _week(agent_client, 10) == {"window": "last_7d", "turns": 10, "recalled": 1, "share": 0.1}


def test_a_confidence_outside_zero_to_one_is_refused_before_any_request(agent_client):
    for bad in (1.5, -0.1, True, "high"):
        with pytest.raises(ValueError, match="confidence must be a number from 0 to 1"):
            agent_client.recall("tea", confidence=bad)
    with pytest.raises(ValueError, match="threshold"):
        agent_client.recall("tea", confidence=0.5, threshold=2)
    assert agent_client.recall_counts.turns == 0
    assert _week(agent_client, 0)["turns"] == 0


def test_the_async_client_recalls_and_counts_the_same_way(live_console, agent_client):
    async def turns():
        async with AsyncClient(live_console.base_url, agent_client._headers["Authorization"][7:]) as client:
            skipped = await client.recall("green tea", confidence=0.5, threshold=0.4)
            recalled = await client.recall("green tea", confidence=0.2, threshold=0.4)
            return skipped, recalled, client.recall_counts

    skipped, recalled, counts = aio.run(turns())
    assert not skipped.recalled and recalled.texts == [BULLET] and (counts.turns, counts.recalls) == (2, 1)


class State(TypedDict):
    question: str
    confidence: float
    recall: dict


def test_a_graphs_recall_node_queries_only_when_the_state_is_unsure(agent_client):
    builder = StateGraph(State)
    builder.add_node("recall", RecallNode(agent_client, threshold=0.5, query_key="question"))
    builder.add_edge("__start__", "recall")
    builder.add_edge("recall", "__end__")
    graph = builder.compile()

    confident = graph.invoke({"question": "green tea", "confidence": 0.9})["recall"]
    unsure = graph.invoke({"question": "green tea", "confidence": 0.2})["recall"]

    assert confident == {"recalled": False, "memories": [], "turns": 1, "recalls": 0, "share": 0.0}
    assert unsure == {"recalled": True, "memories": [BULLET], "turns": 2, "recalls": 1, "share": 0.5}


def test_the_mcp_query_tool_with_a_confidence_recalls_only_when_unsure(live_console):
    _, token = live_console.agent(role="supervisor")
    with Client(live_console.base_url, token) as client:
        client.save_memory(TEA, category="preferences")
    params = StdioServerParameters(
        command=str(MCP_SERVER), env={"MEMCONSOLE_URL": live_console.base_url, "MEMCONSOLE_TOKEN": token}
    )

    async def scenario():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            sure = await session.call_tool("memory_query", {"query": "green tea", "confidence": 0.9})
            unsure = await session.call_tool("memory_query", {"query": "green tea", "confidence": 0.1})
            plain = await session.call_tool("memory_query", {"query": "green tea"})
            bad = await session.call_tool("memory_query", {"query": "tea", "confidence": 3})
            return tools, *(json.loads(r.content[0].text) for r in (sure, unsure, plain)), bad

    tools, sure, unsure, plain, bad = aio.run(scenario())
    properties = tools["memory_query"].input_schema["properties"]
    assert {"confidence", "recall_threshold"} <= set(properties)
    assert sure == {"results": [], "recalled": False, "turns": 1, "recalls": 0, "share": 0.0}
    assert unsure["recalled"] and [r["text"] for r in unsure["results"]] == [BULLET] and unsure["turns"] == 2
    assert "recalled" not in plain and [r["text"] for r in plain["results"]] == [BULLET]
    assert bad.is_error
    with Client(live_console.base_url, token) as client:
        assert _week(client, 2)["turns"] == 2  # the plain query is not a noted turn
