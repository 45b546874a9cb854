"""The context block in a LangGraph graph's system prompt (docs/how-to/langgraph.md): a graph whose model node
builds its input with ContextPrompt gets the agent's block as its first message, unchanged turns cost a
304, and a new core memory is in the next turn's prompt."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from memconsole_client import AsyncClient, Client
from memconsole_client.langgraph_context import ContextPrompt, acontext_message
from models.changes import mutations
from tests.integrations import aio

DOC = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "langgraph.md"


def _remember(live_console, agent_id: int, content: str) -> int:
    with live_console.app.app_context():
        return mutations.create_memory(agent_id, content, actor="admin:test").id


def _graph(prompt: ContextPrompt, seen: list):
    def model(state: MessagesState):
        messages = prompt(state)
        seen.append(messages)  # what the chat model would be sent
        return {"messages": [AIMessage(content="noted")]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_edge(START, "model")
    graph.add_edge("model", END)
    return graph.compile()


def test_a_graphs_system_prompt_holds_the_context_block_and_follows_its_changes(live_console):
    agent_id, token = live_console.agent(role="supervisor")
    _remember(live_console, agent_id, "The user is called Ada.")
    seen: list = []
    with Client(live_console.base_url, token) as client:
        graph = _graph(ContextPrompt(client, instructions="You are Ada's assistant."), seen)
        graph.invoke({"messages": [HumanMessage(content="Hello")]})
        block = client.context(format="text")
        graph.invoke({"messages": [HumanMessage(content="Again")]})
        assert client.context_changed is False  # the second turn's block came from the kept copy
        _remember(live_console, agent_id, "The user prefers short answers.")
        graph.invoke({"messages": [HumanMessage(content="And now?")]})

    first, second, third = (messages[0] for messages in seen)
    assert all(isinstance(m, SystemMessage) for m in (first, second, third))
    assert first.content == "You are Ada's assistant.\n\n" + block
    assert second.content == first.content
    assert "The user prefers short answers." in third.content
    # The memories already there are a byte-identical prefix of the new prompt.
    assert third.content.startswith(first.content.split("## Budget")[0])
    assert [type(m) for m in seen[0]] == [SystemMessage, HumanMessage]


def test_an_async_graph_builds_the_message_with_acontext_message(live_console):
    agent_id, token = live_console.agent(role="supervisor")
    memory_id = _remember(live_console, agent_id, "The user lives by the sea.")

    async def scenario():
        async with AsyncClient(live_console.base_url, token) as client:
            return await acontext_message(client)

    message = aio.run(scenario())
    assert isinstance(message, SystemMessage) and f"#{memory_id}" in message.content


def test_the_context_prompt_example_in_the_docs_runs_as_written(live_console, tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    example = next(b for b in blocks if "ContextPrompt(memory" in b)
    script = tmp_path / "context_example.py"
    script.write_text(example)
    agent_id, token = live_console.agent(role="supervisor")
    _remember(live_console, agent_id, "The user is called Ada.")
    _remember(live_console, agent_id, "The user prefers short answers.")
    env = {"MEMCONSOLE_URL": live_console.base_url, "MEMCONSOLE_TOKEN": token, "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        "2 memories in my system prompt (new block)",
        "2 memories in my system prompt (kept block)",
    ]
