"""ConsoleCheckpointSaver against a running console: LangGraph's own conformance suite, a compiled
graph resuming a thread, token scoping and paging."""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, TypedDict

import httpx
import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import BASE_CAPABILITIES
from langgraph.graph import END, START, StateGraph

from memconsole_client import langgraph as client_langgraph
from memconsole_client.langgraph import ConsoleCheckpointSaver
from models import LangGraphBlob, LangGraphCheckpoint, db
from tests.integrations import aio


@pytest.fixture(scope="module")
def conformance_report(live_console):
    """One run of LangGraph's conformance suite; every capability gets a fresh agent (a fresh token),
    so the suites' reused thread names never meet."""

    @checkpointer_test(name="ConsoleCheckpointSaver")
    async def console_saver():
        _, token = live_console.agent()
        saver = ConsoleCheckpointSaver(base_url=live_console.base_url, token=token)
        yield saver
        await saver.aclose()

    return aio.run(validate(console_saver))


def test_langgraph_conformance_suite_passes_every_base_capability(conformance_report):
    results = conformance_report.results
    for capability in BASE_CAPABILITIES:
        result = results[capability.value]
        assert result.detected, f"{capability.value} not implemented"
        assert result.passed, f"{capability.value}: {result.failures}"
        assert result.tests_passed > 0


def test_copy_thread_and_prune_pass_their_conformance_suites_too(conformance_report):
    for name in ("copy_thread", "prune"):
        result = conformance_report.results[name]
        assert result.detected and result.passed, f"{name}: {result.failures}"


class State(TypedDict):
    turns: Annotated[list[str], operator.add]


def _graph(saver):
    def reply(state: State) -> dict:
        return {"turns": [f"reply to {state['turns'][-1]}"]}

    builder = StateGraph(State)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=saver)


def test_a_compiled_graph_resumes_a_threads_state_across_two_invocations(live_console):
    _, token = live_console.agent()
    config = {"configurable": {"thread_id": f"chat-{uuid.uuid4().hex[:6]}"}}
    first = ConsoleCheckpointSaver(base_url=live_console.base_url, token=token)
    assert _graph(first).invoke({"turns": ["hello"]}, config)["turns"] == ["hello", "reply to hello"]
    first.close()
    # A new saver (a restarted agent process) picks the thread up from the server.
    second = ConsoleCheckpointSaver(base_url=live_console.base_url, token=token)
    result = _graph(second).invoke({"turns": ["again"]}, config)
    assert result["turns"] == ["hello", "reply to hello", "again", "reply to again"]
    history = list(second.list(config))
    assert len(history) >= 4 and [t.metadata["step"] for t in history] == sorted(
        (t.metadata["step"] for t in history), reverse=True
    )
    assert all(t.parent_config for t in history[:-1]) and history[-1].parent_config is None
    second.close()


def test_the_async_graph_api_resumes_a_thread_too(live_console):
    _, token = live_console.agent()
    config = {"configurable": {"thread_id": "async-thread"}}
    saver = ConsoleCheckpointSaver(base_url=live_console.base_url, token=token)

    async def twice():
        graph = _graph(saver)
        async with saver:
            await graph.ainvoke({"turns": ["one"]}, config)
            return await graph.ainvoke({"turns": ["two"]}, config)

    assert aio.run(twice())["turns"] == ["one", "reply to one", "two", "reply to two"]


def test_another_agents_token_sees_none_of_a_threads_checkpoints(live_console):
    _, owner = live_console.agent()
    _, stranger = live_console.agent()
    config = {"configurable": {"thread_id": "private"}}
    with (
        ConsoleCheckpointSaver(base_url=live_console.base_url, token=owner) as mine,
        ConsoleCheckpointSaver(base_url=live_console.base_url, token=stranger) as other,
    ):
        _graph(mine).invoke({"turns": ["x"]}, config)
        assert other.get_tuple(config) is None
        assert list(other.list(config)) == []
        assert list(other.list(None)) == []
        other.delete_thread("private")  # deleting under another token touches nothing of the owner's
        assert mine.get_tuple(config) is not None


def test_list_pages_through_every_checkpoint_newest_first(live_console, monkeypatch):
    monkeypatch.setattr(client_langgraph, "LIST_PAGE", 2)
    _, token = live_console.agent()
    saver = ConsoleCheckpointSaver(base_url=live_console.base_url, token=token)
    config = {"configurable": {"thread_id": "paged"}}
    graph = _graph(saver)
    for word in ("a", "b", "c"):
        graph.invoke({"turns": [word]}, config)
    ids = [t.config["configurable"]["checkpoint_id"] for t in saver.list(config)]
    assert len(ids) == 9 and ids == sorted(ids, reverse=True)
    assert [t.config["configurable"]["checkpoint_id"] for t in saver.list(config, limit=3)] == ids[:3]
    before = {"configurable": {"checkpoint_id": ids[4]}}
    assert [t.config["configurable"]["checkpoint_id"] for t in saver.list(config, before=before)] == ids[5:]
    saver.close()


def test_a_malformed_checkpoint_is_refused_whole_and_stores_nothing(live_console):
    agent_id, token = live_console.agent()
    body = {
        "thread_id": "bad",
        "checkpoint": {"id": "1", "channel_versions": {"a": 1}},
        "blobs": [
            {"channel": "a", "version": 1, "type": "msgpack", "data": "AAAA"},
            {"channel": "b", "version": 1, "type": "msgpack", "data": "not base64!"},
        ],
    }
    response = httpx.post(
        f"{live_console.base_url}/api/v1/langgraph/checkpoints",
        json=body,
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 422 and response.json()["error"] == "invalid"
    with live_console.app.app_context():
        for model in (LangGraphCheckpoint, LangGraphBlob):
            assert db.session.query(model).filter_by(agent_id=agent_id).count() == 0
