"""`memconsole checkpoints import`: a LangGraph SQLite (and, on PostgreSQL runs, PostgreSQL) saver's
threads become an agent's checkpoints, read back and compared; a second run copies nothing; a file or
database that is not LangGraph's is refused with a one-line error and left untouched."""

from __future__ import annotations

import json
import operator
import sqlite3
from typing import Annotated, TypedDict

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from sqlalchemy import func, select

from models import LangGraphCheckpoint, LangGraphWrite, db
from tests.conftest import DB_KIND, scratch_database


class State(TypedDict):
    turns: Annotated[list[str], operator.add]


def _run_graph(saver, threads=("t1", "t2")) -> int:
    def reply(state: State) -> dict:
        return {"turns": [f"reply to {state['turns'][-1]}"]}

    builder = StateGraph(State)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    graph = builder.compile(checkpointer=saver)
    for thread in threads:
        graph.invoke({"turns": [thread]}, {"configurable": {"thread_id": thread}})
    return len(list(saver.list(None)))


def _count(model, agent_id: int) -> int:
    return db.session.scalar(select(func.count()).select_from(model).where(model.agent_id == agent_id))


def _import(runner, *args: str) -> tuple[int, dict]:
    result = runner.invoke(args=["checkpoints", "import", *args])
    return result.exit_code, (
        json.loads(result.output) if result.exit_code == 0 else {"error": result.output}
    )


def test_checkpoints_import_copies_a_sqlite_savers_threads_into_the_agent_once(runner, make_agent, tmp_path):
    agent = make_agent()
    path = tmp_path / "langgraph.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as source:
        total = _run_graph(source)

    code, first = _import(runner, "--agent", agent.name, "--sqlite", str(path))
    assert code == 0, first
    assert first["threads"] == 2 and first["checkpoints_copied"] == total == first["verified"]
    assert first["mismatched"] == [] and first["writes_copied"] > 0
    assert _count(LangGraphCheckpoint, agent.id) == total
    writes = _count(LangGraphWrite, agent.id)

    code, second = _import(runner, "--agent", str(agent.id), "--sqlite", str(path))
    assert code == 0 and second["checkpoints_copied"] == 0 and second["checkpoints_present"] == total
    assert _count(LangGraphCheckpoint, agent.id) == total and _count(LangGraphWrite, agent.id) == writes


def test_checkpoints_import_takes_only_the_threads_named(runner, make_agent, tmp_path):
    agent = make_agent()
    path = tmp_path / "langgraph.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as source:
        _run_graph(source, threads=("keep", "leave"))
    code, report = _import(runner, "--agent", agent.name, "--sqlite", str(path), "--thread", "keep")
    assert code == 0 and report["threads"] == 1
    threads = db.session.scalars(
        select(LangGraphCheckpoint.thread_id).where(LangGraphCheckpoint.agent_id == agent.id).distinct()
    ).all()
    assert threads == ["keep"]


def test_checkpoints_import_refuses_a_file_that_is_not_langgraphs_and_leaves_it_alone(
    runner, make_agent, tmp_path
):
    agent = make_agent()
    path = tmp_path / "notes.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    result = runner.invoke(args=["checkpoints", "import", "--agent", agent.name, "--sqlite", str(path)])
    assert result.exit_code == 1 and "holds no LangGraph checkpoints" in result.output
    with sqlite3.connect(path) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == [
            "notes"
        ]
    assert _count(LangGraphCheckpoint, agent.id) == 0


def test_checkpoints_import_refuses_a_file_that_is_not_sqlite(runner, make_agent, tmp_path):
    agent = make_agent()
    path = tmp_path / "notes.txt"
    path.write_text("not a database at all, just some words to fill a page " * 40)
    result = runner.invoke(args=["checkpoints", "import", "--agent", agent.name, "--sqlite", str(path)])
    assert result.exit_code == 1 and "holds no LangGraph checkpoints" in result.output


def test_checkpoints_import_needs_exactly_one_source(runner, make_agent, tmp_path):
    agent = make_agent()
    result = runner.invoke(args=["checkpoints", "import", "--agent", agent.name])
    assert result.exit_code == 1 and "exactly one source" in result.output


@pytest.mark.skipif(
    DB_KIND != "postgresql", reason="a PostgreSQL source needs the PostgreSQL server of that run"
)
def test_checkpoints_import_copies_a_postgres_savers_threads(runner, make_agent):
    from langgraph.checkpoint.postgres import PostgresSaver

    agent = make_agent()
    with scratch_database("lgsource") as url:
        plain = url.replace("postgresql+psycopg://", "postgresql://", 1)
        with PostgresSaver.from_conn_string(plain) as source:
            source.setup()
            total = _run_graph(source)
        code, report = _import(runner, "--agent", agent.name, "--postgres", url)
        assert code == 0, report
        assert report["checkpoints_copied"] == total == report["verified"] and report["threads"] == 2
        assert _count(LangGraphCheckpoint, agent.id) == total


@pytest.mark.skipif(
    DB_KIND != "postgresql", reason="a PostgreSQL source needs the PostgreSQL server of that run"
)
def test_checkpoints_import_names_a_postgres_error_without_the_url(runner, make_agent):
    agent = make_agent()
    with scratch_database("lgempty") as url:
        secret = url.replace("postgres@", "postgres:hunter2@", 1)
        result = runner.invoke(args=["checkpoints", "import", "--agent", agent.name, "--postgres", secret])
    assert result.exit_code == 1 and "UndefinedTable" in result.output and "hunter2" not in result.output
