"""The circuit breaker fails closed, and counts only what its own session removed.

A scripted model (tests/scripted_llm.py) over real HTTP runs the session in this process, while the agent
writes through its real API (gunicorn, tests/gunicorn_server.py) between two of the model's turns.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
import sqlalchemy as sa

from jobs.refinement import run_refinement
from models import AgentMemory, AuditLog, RefinementSession, db, utcnow
from models.changes.mutations import create_memory
from models.refinement.toolbox import TERMINATED_MESSAGE, RefinementToolbox
from tests import scripted_llm as s
from tests.audit_chain import assert_audit_chains
from tests.browser.support import make_admin, signed_in
from tests.gunicorn_server import TIMEOUT, serve


@pytest.fixture
def port(app, redis_url) -> Iterator[int]:
    with serve(app.config["SQLALCHEMY_DATABASE_URI"], redis_url) as port:
        yield port


@pytest.fixture
def agent(app, make_agent, llm, monkeypatch, redis_conn):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    agent = make_agent(model_id="scripted-model", base_url=llm.url, core_token_budget=100)
    agent.token = agent.issue_token()
    db.session.commit()
    return agent


def seed(agent, n: int) -> list[int]:
    """n core `profile` memories of the same length (the same token estimate each), oldest first."""
    start = utcnow() - timedelta(days=100)
    ids = [
        create_memory(
            agent.id, f"Fact {i:02d} about the garden shed", actor="admin:seed", category="profile",
            created_at=start + timedelta(days=i),
        ).id
        for i in range(n)
    ]  # fmt: skip
    db.session.commit()  # this process holds no transaction while the server works
    return ids


def rows(agent_id: int) -> dict[int, dict]:
    """Every column of every memory of the agent, as committed."""
    table = AgentMemory.__table__
    with db.engine.connect() as conn:
        found = conn.execute(sa.select(table).where(table.c.agent_id == agent_id)).mappings()
        return {r["id"]: dict(r) for r in found}


def api(port: int, token: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        conn.close()


def after(action: Callable[[dict], None], step: s.Step) -> s.Step:
    """A turn that first lets the agent act through its API (the model is thinking meanwhile)."""

    def run(request: dict) -> s.Reply:
        action(request)
        return step(request)

    return run


def last_tool_results(request: dict) -> list[dict]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def test_a_tripped_breaker_ends_the_session_terminated_even_when_a_later_change_depends_on_it(
    app, agent, llm, port
):
    ids = seed(agent, 8)
    before = rows(agent.id)
    seen: dict = {}

    def agent_edits_the_merged_memory(request: dict) -> None:
        (merged,) = last_tool_results(request)
        seen["merged"] = merged["new_id"]
        status, body = api(port, agent.token, "PATCH", f"/api/v1/memory/{merged['new_id']}",
                           {"content": "Facts 00 and 01 about the shed, as the user put it"})  # fmt: skip
        assert status == 200, body

    llm.script = [
        s.consent(),
        s.tools(("consolidate_memories", {"ids": ids[:2], "new_content": "Facts 00 and 01 about the shed"})),
        after(
            agent_edits_the_merged_memory,
            s.tools(
                ("delete_memory", {"ids": ids[2:]}),  # 6 of the 8: trips the breaker
                ("update_memory", {"id": ids[2], "content": "Fact 02, rewritten after the trip"}),
            ),
        ),
    ]

    result = run_refinement(agent.id, "test", force=True)

    merged = seen["merged"]
    session = db.session.get(RefinementSession, result["session_id"])
    assert result["status"] == session.status == "terminated"
    assert session.stats["breaker_trips"] == 1 and "circuit breaker" in session.error
    assert session.breaker_outcome == "partly_rolled_back"
    # The consolidation is left in place, named: the agent's own edit of the merged memory depends on it.
    (consolidation,) = {
        r.op_id for r in db.session.scalars(sa.select(AuditLog).where(AuditLog.action == "consolidate"))
    }
    assert session.left_in_place == {"op_ids": [consolidation], "memory_ids": sorted([*ids[:2], merged])}
    assert result["left_in_place"] == session.left_in_place
    now = rows(agent.id)
    assert now[merged]["content"] == "Facts 00 and 01 about the shed, as the user put it"
    assert now[merged]["deleted_at"] is None
    assert all(now[i]["deleted_at"] is not None for i in ids[:2])
    # The deletion is undone exactly, every column; the call after the trip changed nothing.
    assert {i: now[i] for i in ids[2:]} == {i: before[i] for i in ids[2:]}
    assert not db.session.scalar(
        sa.select(AuditLog).where(AuditLog.memory_id == ids[2], AuditLog.action == "update")
    )
    # Every later call gets the termination error and changes nothing.
    later = RefinementToolbox(session.id).call("delete_memory", {"id": ids[3]})
    assert later == {"ok": False, "error": "terminated", "message": TERMINATED_MESSAGE}
    assert rows(agent.id) == now
    assert_audit_chains(agent.id)
    # An admin sees it said and named, on the agent's session list and on the session's page.
    make_admin()
    web = signed_in(app)
    for page in (f"/agents/{agent.id}/sessions", f"/sessions/{session.id}"):
        html = web.get(page).text
        assert "terminated — partly rolled back" in html, page
        assert f"operation {consolidation[:8]}" in html and f"#{merged}" in html, page


def test_the_agents_own_api_deletes_during_a_session_do_not_trip_its_breaker(app, agent, llm, port):
    agent.min_retention = 0.5
    db.session.commit()
    ids = seed(agent, 10)

    def agent_deletes_four(request: dict) -> None:
        for memory_id in ids[6:]:
            status, body = api(port, agent.token, "DELETE", f"/api/v1/memory/{memory_id}")
            assert status == 200, body

    llm.script = [
        s.consent(),
        # 4 of 10 by the agent, then 2 by the session: the agent keeps 4/10, below its 50%, but the
        # session removed 2/10 of what it started with.
        after(agent_deletes_four, s.tools(("delete_memory", {"ids": ids[:2]}))),
        s.complete("Removed two stale facts"),
    ]

    result = run_refinement(agent.id, "test", force=True)

    assert result["status"] == "completed", result["error"]
    assert "breaker_trips" not in result["stats"]
    assert all(row["deleted_at"] is not None for i, row in rows(agent.id).items() if i in ids[:2] + ids[6:])


def test_a_session_that_removes_too_much_itself_still_trips_with_the_agent_writing_meanwhile(
    app, agent, llm, port
):
    ids = seed(agent, 10)

    def agent_writes(request: dict) -> None:
        status, body = api(port, agent.token, "POST", "/api/v1/memory",
                           {"content": "A new fact about the greenhouse", "category": "profile"})  # fmt: skip
        assert status == 201, body

    before = rows(agent.id)
    llm.script = [s.consent(), after(agent_writes, s.tools(("delete_memory", {"ids": ids[:3]})))]

    result = run_refinement(agent.id, "test", force=True)

    assert result["status"] == "terminated"  # 7/10 of its own start: below 80%, whatever the agent added
    now = rows(agent.id)
    assert {i: now[i] for i in ids} == {i: before[i] for i in ids}
    assert len(now) == len(before) + 1  # the agent's own write stands


def test_an_operation_under_a_left_one_is_left_too_and_every_other_is_undone_exactly(app, make_agent):
    """The breaker's rollback leaves what a later change depends on, and what that depends on in turn:
    two session updates of one memory, then the agent's own, leave both; the rest is undone exactly."""
    from models.agents.agent import core_totals
    from models.changes.mutations import update_memory

    agent = make_agent()
    ids = seed(agent, 10)
    before = rows(agent.id)
    tokens, count = core_totals(agent.id)
    session = RefinementSession(
        agent_id=agent.id, trigger="test", status="running", tokens_before=tokens, count_before=count
    )
    db.session.add(session)
    db.session.commit()
    toolbox = RefinementToolbox(session.id)
    assert toolbox.call("update_memory", {"id": ids[0], "content": "Fact 00, first pass"})["ok"]
    assert toolbox.call("update_memory", {"id": ids[0], "content": "Fact 00, second pass"})["ok"]
    assert toolbox.call("update_memory", {"id": ids[1], "content": "Fact 01, tightened"})["ok"]
    update_memory(agent.id, ids[0], actor="agent", content="Fact 00, as the user said it")
    db.session.commit()
    assert toolbox.call("delete_memory", {"ids": ids[2:5]})["error"] == "terminated"

    session = db.session.get(RefinementSession, session.id)
    updates = db.session.scalars(
        sa.select(AuditLog.op_id)
        .where(AuditLog.session_id == session.id, AuditLog.memory_id == ids[0])
        .order_by(AuditLog.id)
    ).all()
    assert session.status == "terminated" and session.left_in_place == {
        "op_ids": updates,
        "memory_ids": [ids[0]],
    }
    now = rows(agent.id)
    assert now[ids[0]]["content"] == "Fact 00, as the user said it"
    assert {i: now[i] for i in ids[1:]} == {i: before[i] for i in ids[1:]}
    assert_audit_chains(agent.id)


@contextmanager
def refused_breaker_rollbacks() -> Iterator[None]:
    """The database refuses the circuit breaker's audit records inside the block (PostgreSQL's test
    database is shared by the whole run: the trigger is dropped again in any case)."""
    if db.engine.dialect.name == "sqlite":
        create = [
            "CREATE TRIGGER test_breaker_refused BEFORE INSERT ON audit_logs "
            "WHEN NEW.actor = 'system:circuit-breaker' BEGIN SELECT RAISE(ABORT, 'refused'); END"
        ]
        drop = ["DROP TRIGGER test_breaker_refused"]
    else:
        create = [
            "CREATE FUNCTION test_breaker_refused() RETURNS trigger AS $$ BEGIN "
            "IF NEW.actor = 'system:circuit-breaker' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; "
            "END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER test_breaker_refused BEFORE INSERT ON audit_logs "
            "FOR EACH ROW EXECUTE FUNCTION test_breaker_refused()",
        ]
        drop = ["DROP TRIGGER test_breaker_refused ON audit_logs", "DROP FUNCTION test_breaker_refused()"]
    for statement in create:
        db.session.execute(sa.text(statement))
    db.session.commit()
    try:
        yield
    finally:
        db.session.rollback()
        for statement in drop:
            db.session.execute(sa.text(statement))
        db.session.commit()


def test_a_tripped_breaker_ends_the_session_terminated_even_when_its_rollback_fails(app, make_agent):
    """The database refuses the breaker's rollback (its audit records): nothing can be undone, and the
    session still ends terminated, every operation named as left in place, every later call refused."""
    from models.agents.agent import core_totals

    agent = make_agent()
    ids = seed(agent, 10)
    tokens, count = core_totals(agent.id)
    session = RefinementSession(
        agent_id=agent.id, trigger="test", status="running", tokens_before=tokens, count_before=count
    )
    db.session.add(session)
    db.session.commit()
    toolbox = RefinementToolbox(session.id)
    assert toolbox.call("delete_memory", {"id": ids[0]})["ok"]
    with refused_breaker_rollbacks():
        assert toolbox.call("delete_memory", {"ids": ids[1:4]})["error"] == "terminated"

    session = db.session.get(RefinementSession, session.id)
    assert session.status == "terminated" and session.stats["breaker_trips"] == 1
    assert session.left_in_place["memory_ids"] == ids[:4] and len(session.left_in_place["op_ids"]) == 2
    assert session.left_in_place["error"] and session.breaker_outcome == "not_rolled_back"
    assert "the rollback failed" in session.error
    assert toolbox.call("update_memory", {"id": ids[5], "content": "Fact 05, later"})["error"] == "terminated"
    assert rows(agent.id)[ids[5]]["content"] == "Fact 05 about the garden shed"
