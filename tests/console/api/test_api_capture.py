"""The optional capture endpoints (docs/spec/003-memory-system.md §12-13): off by default, validated, and writing only through the
one mutation path (procedures at once, extracted facts from a worker)."""

from __future__ import annotations

import json

import sqlalchemy as sa
from rq import SimpleWorker

from infra.queues import get_rq
from models import AgentMemory, AuditLog, db
from tests import scripted_llm as s
from tests.api_support import bearer, table_state

TURN = "We went through the launch plan in detail, owners, dates and the open risks. " * 6


def test_procedures_are_off_by_default_then_saved_as_numbered_steps_for_roles_that_hold_them(
    app, client, make_agent
):
    planner = make_agent(role="planner")
    headers = bearer(planner)
    stylist = bearer(make_agent(role="stylist"))
    body = {"title": "Deploy the API", "steps": ["Run the tests", "Tag the release.", "Watch the error rate"]}

    before = table_state()
    off = client.post("/api/v1/memory/procedure", json=body, headers=headers)
    assert off.status_code == 404 and off.get_json()["error"] == "feature_disabled"
    assert "PROCEDURAL_MEMORY" in off.get_json()["message"]
    assert table_state() == before

    app.config["PROCEDURAL_MEMORY"] = True
    for bad in (
        {**body, "steps": []},
        {**body, "steps": ["x"] * 13},
        {**body, "steps": ["x" * 201]},
        {**body, "steps": ["  "]},
        {**body, "title": " "},
        {**body, "steps": "Run the tests"},
        {**body, "extra": 1},
    ):
        response = client.post("/api/v1/memory/procedure", json=bad, headers=headers)
        assert response.status_code == 422, bad
    refused = client.post("/api/v1/memory/procedure", json=body, headers=stylist)
    assert refused.status_code == 403  # `procedural` is not in a stylist's allowlist
    assert table_state() == before

    saved = client.post("/api/v1/memory/procedure", json={**body, "user_id": "u1"}, headers=headers)

    assert saved.status_code == 201
    memory = saved.get_json()["memory"]
    assert (
        memory["content"]
        == "Deploy the API:\n1. Run the tests.\n2. Tag the release.\n3. Watch the error rate."
    )
    assert (memory["memory_type"], memory["category"], memory["user_id"]) == (
        "procedural",
        "procedural",
        "u1",
    )
    record = db.session.scalar(sa.select(AuditLog).where(AuditLog.memory_id == memory["id"]))
    assert (record.action, record.actor) == ("create", "agent")
    found = client.post(
        "/api/v1/memory/query", json={"query": "deploy", "categories": ["procedural"]}, headers=headers
    )
    assert [r["id"] for r in found.get_json()["results"]] == [memory["id"]]


def test_a_long_turn_is_queued_and_a_worker_writes_its_new_facts_within_the_caps(
    app, client, make_agent, llm, monkeypatch
):
    monkeypatch.setitem(app.config, "OPENAI_API_KEY", "test-key")
    agent = make_agent(role="planner", model_id="scripted-model", base_url=llm.url)
    headers = bearer(agent)
    queue = get_rq().queue("llm")
    queue.empty()

    off = client.post("/api/v1/memory/extract", json={"turn": TURN}, headers=headers)
    assert off.status_code == 404 and off.get_json()["error"] == "feature_disabled"
    app.config["MULTI_FACT_EXTRACTION"] = True
    short = client.post("/api/v1/memory/extract", json={"turn": "too short"}, headers=headers)
    assert short.status_code == 422 and queue.count == 0

    queued = client.post("/api/v1/memory/extract", json={"turn": TURN, "thread_id": "t1"}, headers=headers)

    assert queued.status_code == 202 and queue.count == 1
    assert (
        db.session.scalar(sa.select(sa.func.count()).select_from(AgentMemory)) == 0
    )  # nothing on the request
    facts = [
        {"text": "The launch owner is Maya", "category": "tasks", "importance": 3},
        {"text": "The launch risk review is on Friday", "category": "knowledge", "importance": 2},
        {"text": "The launch date is 3 March", "category": "goals", "importance": 4},
        {"text": "The launch needs legal sign-off", "category": "tasks", "importance": 3},
    ]
    llm.script = [s.text(json.dumps({"facts": facts}))]

    SimpleWorker([queue], connection=queue.connection).work(burst=True)

    job = queue.fetch_job(queued.get_json()["job_id"])
    assert job.return_value()["status"] == "ok"
    db.session.expire_all()
    rows = db.session.scalars(sa.select(AgentMemory).order_by(AgentMemory.id)).all()
    assert [(r.content, r.category, r.thread_id) for r in rows] == [
        ("The launch owner is Maya", "tasks", "t1"),
        ("The launch risk review is on Friday", None, "t1"),  # `knowledge` is outside a planner's allowlist
        ("The launch date is 3 March", "goals", "t1"),
    ]  # three writes per turn at most
    assert {r.actor for r in db.session.scalars(sa.select(AuditLog).where(AuditLog.action == "create"))} == {
        "system:extraction"
    }
    assert TURN not in json.dumps(job.return_value())  # the job's result carries ids, never the turn
