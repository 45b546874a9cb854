"""Moving a LangGraph deployment in: import_checkpoints copies an in-memory or SQLite saver's threads
into ConsoleCheckpointSaver against a running console; the graph resumes where it stopped, a second
run copies nothing, an interrupted run is finished by running it again."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from memconsole_client.langgraph import ConsoleCheckpointSaver
from memconsole_client.langgraph_import import aimport_checkpoints, import_checkpoints
from tests.integrations import aio


class State(TypedDict):
    turns: Annotated[list[str], operator.add]


def _graph(saver):
    """draft -> ask (waits for a person's answer) -> finish."""

    def draft(state: State) -> dict:
        return {"turns": [f"draft of {state['turns'][-1]}"]}

    def ask(state: State) -> dict:
        answer = interrupt("approve?")
        return {"turns": [f"approved: {answer}"]}

    def finish(state: State) -> dict:
        return {"turns": ["done"]}

    builder = StateGraph(State)
    builder.add_node("draft", draft)
    builder.add_node("ask", ask)
    builder.add_node("finish", finish)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "ask")
    builder.add_edge("ask", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=saver)


def _ids(saver, thread_id: str) -> list[str]:
    return [
        t.config["configurable"]["checkpoint_id"]
        for t in saver.list({"configurable": {"thread_id": thread_id}})
    ]


@pytest.fixture
def target(live_console):
    _, token = live_console.agent()
    saver = ConsoleCheckpointSaver(base_url=live_console.base_url, token=token)
    yield saver
    saver.close()


def test_a_graph_stopped_at_an_interrupt_resumes_on_the_console_after_import(target):
    source = InMemorySaver()
    config = {"configurable": {"thread_id": "support-7"}}
    stopped = _graph(source).invoke({"turns": ["refund"]}, config)
    assert stopped["turns"] == ["refund", "draft of refund"] and "__interrupt__" in stopped

    report = import_checkpoints(source, target)

    assert report.ok and report.threads == 1
    assert report.checkpoints_copied == len(_ids(source, "support-7")) == report.verified
    assert report.writes_copied > 0  # the interrupt and the draft's writes are pending writes
    assert _ids(target, "support-7") == _ids(source, "support-7")
    graph = _graph(target)
    assert graph.get_state(config).next == ("ask",)
    resumed = graph.invoke(Command(resume="yes"), config)
    assert resumed["turns"] == ["refund", "draft of refund", "approved: yes", "done"]


def test_running_the_import_again_copies_nothing_twice(target):
    source = InMemorySaver()
    graph = _graph(source)
    for thread in ("a", "b"):
        graph.invoke({"turns": [thread]}, {"configurable": {"thread_id": thread}})
    first = import_checkpoints(source, target)
    second = import_checkpoints(source, target)
    assert first.checkpoints_copied > 0 and first.threads == 2
    assert second.checkpoints_copied == 0 and second.writes_copied == 0
    assert second.checkpoints_present == first.checkpoints_copied == second.verified
    assert _ids(target, "a") == _ids(source, "a")


def test_an_interrupted_import_is_finished_by_running_it_again(target, monkeypatch):
    source = InMemorySaver()
    config = {"configurable": {"thread_id": "long"}}
    graph = _graph(source)
    graph.invoke({"turns": ["x"]}, config)
    graph.invoke(Command(resume="ok"), config)
    total = len(_ids(source, "long"))
    calls = {"n": 0}
    real_put = target.put

    def failing_put(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 2:
            raise ConnectionError("network went away")
        return real_put(*args, **kwargs)

    monkeypatch.setattr(target, "put", failing_put)
    with pytest.raises(ConnectionError):
        import_checkpoints(source, target)
    monkeypatch.setattr(target, "put", real_put)
    assert len(_ids(target, "long")) == 2

    report = import_checkpoints(source, target)
    assert report.ok and report.checkpoints_present == 2 and report.checkpoints_copied == total - 2
    assert _ids(target, "long") == _ids(source, "long")
    assert (
        target.get_tuple(config).checkpoint["channel_values"]
        == source.get_tuple(config).checkpoint["channel_values"]
    )


def test_pending_writes_the_source_gained_after_an_import_are_added_by_the_next(target):
    source = InMemorySaver()
    config = {"configurable": {"thread_id": "grows"}}
    _graph(source).invoke({"turns": ["x"]}, config)
    import_checkpoints(source, target)
    latest = source.get_tuple(config).config
    source.put_writes(latest, [("turns", ["late write"])], "task-late")

    report = import_checkpoints(source, target)

    assert report.ok and report.checkpoints_copied == 0 and report.writes_copied == 1
    assert ("task-late", "turns", ["late write"]) in target.get_tuple(config).pending_writes


def test_a_sqlite_savers_chosen_threads_are_copied_and_resume(target, tmp_path):
    with SqliteSaver.from_conn_string(str(tmp_path / "old.sqlite")) as source:
        graph = _graph(source)
        for thread in ("t1", "t2", "t3"):
            config = {"configurable": {"thread_id": thread}}
            graph.invoke({"turns": [thread]}, config)
            if thread != "t3":
                graph.invoke(Command(resume=thread), config)
        report = import_checkpoints(source, target, thread_ids=["t1", "t3"])
        assert report.ok and report.threads == 2
        assert _ids(target, "t2") == []
        for thread in ("t1", "t3"):
            assert _ids(target, thread) == _ids(source, thread)
        resumed = _graph(target).invoke(Command(resume="later"), {"configurable": {"thread_id": "t3"}})
        assert resumed["turns"] == ["t3", "draft of t3", "approved: later", "done"]


def test_a_subgraphs_namespaced_checkpoints_are_copied_and_the_parent_resumes(target):
    def child_step(state: State) -> dict:
        answer = interrupt("child asks")
        return {"turns": [f"child got {answer}"]}

    child = StateGraph(State)
    child.add_node("child_step", child_step)
    child.add_edge(START, "child_step")
    child.add_edge("child_step", END)

    def parent(saver):
        builder = StateGraph(State)
        builder.add_node("inner", child.compile())
        builder.add_edge(START, "inner")
        builder.add_edge("inner", END)
        return builder.compile(checkpointer=saver)

    source = InMemorySaver()
    config = {"configurable": {"thread_id": "nested"}}
    parent(source).invoke({"turns": ["start"]}, config)
    namespaces = {t.config["configurable"]["checkpoint_ns"] for t in source.list(None)}
    assert len(namespaces) == 2  # the parent's "" and the subgraph's own

    report = import_checkpoints(source, target)

    assert report.ok and report.checkpoints_copied == len(list(source.list(None)))
    assert {t.config["configurable"]["checkpoint_ns"] for t in target.list(None)} == namespaces
    resumed = parent(target).invoke(Command(resume="ok"), config)
    # The same as resuming on the source (the subgraph's whole state comes back through the reducer).
    assert resumed == parent(source).invoke(Command(resume="ok"), config)
    assert resumed["turns"][-1] == "child got ok"


def test_an_async_only_savers_threads_are_copied_with_aimport_checkpoints(live_console, tmp_path):
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    _, token = live_console.agent()
    path = str(tmp_path / "async.sqlite")
    with SqliteSaver.from_conn_string(path) as writer:
        _graph(writer).invoke({"turns": ["async"]}, {"configurable": {"thread_id": "a1"}})

    async def run():
        async with (
            AsyncSqliteSaver.from_conn_string(path) as source,
            ConsoleCheckpointSaver(base_url=live_console.base_url, token=token) as target,
        ):
            first = await aimport_checkpoints(source, target)
            again = await aimport_checkpoints(source, target, thread_ids=["a1"])
            resumed = await _graph(target).ainvoke(
                Command(resume="fine"), {"configurable": {"thread_id": "a1"}}
            )
            return first, again, len([t async for t in source.alist(None)]), resumed

    first, again, total, resumed = aio.run(run())
    assert first.ok and first.checkpoints_copied == total == first.verified
    assert again.checkpoints_copied == 0 and again.checkpoints_present == total
    assert resumed["turns"] == ["async", "draft of async", "approved: fine", "done"]
