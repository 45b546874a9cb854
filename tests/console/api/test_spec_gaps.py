"""The rest of the spec: restore, core memories in the agent API, events read, honest offline
mode and a configurable schedule."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from infra.batching import flush_all
from models import AgentMemory, AuditLog, ChangeLogEntry, OpEvent, db, utcnow
from models.changes.mutations import create_memory, soft_delete_memories
from models.changes.ttl import expire_memory
from tests.api_support import bearer, table_state
from tests.browser.support import make_admin, post, signed_in


@pytest.fixture(autouse=True)
def _no_background_flush(app):
    app.config["API_FLUSH_SECONDS"] = 3600


@pytest.fixture
def supervisor(make_agent):
    agent = make_agent(role="supervisor")
    return agent, bearer(agent)


def _query(client, headers, **body):
    response = client.post("/api/v1/memory/query", json=body, headers=headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def _restore(client, headers, memory_id):
    return client.post(f"/api/v1/memory/{memory_id}/restore", headers=headers)


# ----- 1: restore -----


def test_agent_restores_its_soft_deleted_memory_audited_and_in_the_thread_delta(client, supervisor):
    agent, headers = supervisor
    saved = client.post(
        "/api/v1/memory",
        json={"content": "The user keeps bees on the roof.", "category": "preferences", "thread_id": "t1"},
        headers=headers,
    ).get_json()
    memory_id = saved["memory"]["id"]
    assert client.delete(f"/api/v1/memory/{memory_id}", headers=headers).status_code == 200

    response = _restore(client, headers, memory_id)

    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["memory"]["id"] == memory_id and body["rev"] == 3
    assert client.get(f"/api/v1/memory/{memory_id}", headers=headers).status_code == 200
    record = db.session.scalar(
        sa.select(AuditLog).where(AuditLog.memory_id == memory_id).order_by(AuditLog.id.desc())
    )
    assert (record.action, record.actor) == ("restore", "agent")
    assert record.before["deleted_at"] and record.after["deleted_at"] is None
    events = [
        e["event"]
        for e in client.get(f"/api/v1/memory/{memory_id}/history", headers=headers).get_json()["events"]
    ]
    assert events[0] == "RESTORE"
    assert db.session.scalar(sa.select(ChangeLogEntry.event).where(ChangeLogEntry.rev == 3)) == "restored"
    assert "bees" in _query(client, headers, query="bees")["results"][0]["text"]


def test_restore_refuses_past_the_purge_date_locked_active_and_foreign_memories(
    client, supervisor, make_agent
):
    agent, headers = supervisor
    expired = create_memory(agent.id, "The user went to a jazz night.", actor="agent", memory_type="episodic",
                            category="event", importance=1)  # fmt: skip
    expire_memory(agent.id, expired.id, now=utcnow() - timedelta(days=31))  # purge_at is yesterday
    voice = create_memory(
        agent.id, "A voice note about the garden.", actor="admin:1", category="event", tags=["voice"]
    )
    soft_delete_memories(agent.id, [voice.id], actor="admin:1")
    active = create_memory(agent.id, "The user likes tea.", actor="agent", category="preferences")
    other = make_agent(role="supervisor")
    theirs = create_memory(other.id, "Another agent's memory.", actor="agent", category="preferences")
    soft_delete_memories(other.id, [theirs.id], actor="agent")
    outside = create_memory(agent.id, "The user's tone is dry.", actor="agent", category="tone")
    soft_delete_memories(agent.id, [outside.id], actor="agent")
    before = table_state()

    cases = {
        expired.id: (409, "purge_due"),
        voice.id: (409, "immutable"),
        active.id: (422, "invalid"),
        theirs.id: (404, "not_found"),
        outside.id: (403, "category_not_allowed"),
        999_999: (404, "not_found"),
    }
    for memory_id, (status, code) in cases.items():
        response = _restore(client, headers, memory_id)
        assert (response.status_code, response.get_json()["error"]) == (status, code), memory_id
    assert table_state() == before
    # An admin may bring back the voice-tagged memory the agent may not.
    from models.changes import write

    assert write.restore(agent.id, voice.id, actor="admin:1").deleted_at is None


def test_restore_is_in_the_openapi_document(client):
    paths = client.get("/api/v1/openapi.json").get_json()["paths"]
    operation = paths["/memory/{memory_id}/restore"]["post"]
    assert {"200", "403", "404", "409"} <= set(operation["responses"])


def test_console_restore_button_restores_through_the_same_path_audited_as_the_admin(
    app, make_agent, redis_conn
):
    admin = make_admin()
    web = signed_in(app)
    agent = make_agent()
    memory = create_memory(agent.id, "The user keeps a diary.", actor="agent")
    soft_delete_memories(agent.id, [memory.id], actor="agent")
    page = web.get(f"/agents/{agent.id}/memories?state=deleted").text
    assert f"/agents/{agent.id}/memories/{memory.id}/restore" in page and "diary" not in page

    refused = web.post(f"/agents/{agent.id}/memories/{memory.id}/restore", headers={"HX-Request": "true"})
    assert refused.status_code == 400  # no CSRF token: nothing happens
    assert db.session.get(AgentMemory, memory.id).deleted_at is not None

    response = post(web, f"/agents/{agent.id}/memories/{memory.id}/restore")
    assert response.status_code == 200 and "diary" not in response.text
    db.session.expire_all()
    assert db.session.get(AgentMemory, memory.id).deleted_at is None
    record = db.session.scalar(
        sa.select(AuditLog).where(AuditLog.memory_id == memory.id).order_by(AuditLog.id.desc())
    )
    assert (record.action, record.actor) == ("restore", f"admin:{admin.id}")
    again = post(web, f"/agents/{agent.id}/memories/{memory.id}/restore")
    assert again.status_code == 409 and "is not deleted" in again.text


# ----- 2: an agent's own uncategorised (core) memories -----


def test_an_agent_reads_and_manages_its_own_uncategorised_core_memories(client, supervisor):
    agent, headers = supervisor
    core = create_memory(agent.id, "I am a careful assistant who checks facts twice.", actor="admin:1",
                         thread_id="t1")  # fmt: skip
    assert client.get(f"/api/v1/memory/{core.id}", headers=headers).get_json()["category"] is None

    results = _query(client, headers, query="careful facts")["results"]
    assert results == [{"id": core.id, "category": None, "text": f"[uncategorized] {core.content}"}]
    assert (
        _query(client, headers, query="careful", categories=["uncategorized"])["results"][0]["id"] == core.id
    )
    assert _query(client, headers, query="careful", filters={"category": "uncategorized"})["results"]
    assert _query(client, headers, query="careful", categories=["preferences"])["results"] == []

    patched = client.patch(
        f"/api/v1/memory/{core.id}", json={"content": "I am a careful assistant."}, headers=headers
    )
    assert patched.status_code == 200, patched.get_json()
    history = client.get(f"/api/v1/memory/{core.id}/history", headers=headers).get_json()["events"]
    assert [e["event"] for e in history] == ["UPDATE", "ADD"]
    delta = _query(client, headers, query="careful", thread_id="t1", since_rev=0)["delta"]
    assert delta["bullets"][-1] == "- ↑updated: [uncategorized] I am a careful assistant."
    assert client.delete(f"/api/v1/memory/{core.id}", headers=headers).status_code == 200
    assert _restore(client, headers, core.id).status_code == 200


def test_allowlists_still_govern_categorised_memories_and_no_agent_reaches_anothers_core(
    client, supervisor, make_agent
):
    agent, headers = supervisor
    tone = create_memory(agent.id, "The user's tone is dry.", actor="admin:1", category="tone")
    other = make_agent(role="supervisor")
    theirs = create_memory(other.id, "I am the other agent's identity.", actor="admin:1")
    assert client.get(f"/api/v1/memory/{tone.id}", headers=headers).status_code == 403
    assert (
        client.patch(f"/api/v1/memory/{tone.id}", json={"importance": 2}, headers=headers).status_code == 403
    )
    # Moving an uncategorised memory into a category still needs that category.
    mine = create_memory(agent.id, "I like short answers.", actor="admin:1")
    moved = client.patch(f"/api/v1/memory/{mine.id}", json={"category": "tone"}, headers=headers)
    assert moved.status_code == 403 and moved.get_json()["categories"] == ["tone"]
    # Nor can the rule be used to save around the allowlist: a write names an allowed category.
    assert client.post("/api/v1/memory", json={"content": "x y z."}, headers=headers).status_code == 422
    before = table_state()
    for method, path in (
        ("GET", ""),
        ("PATCH", ""),
        ("DELETE", ""),
        ("GET", "/history"),
        ("POST", "/restore"),
    ):
        body = {"importance": 2} if method == "PATCH" else None
        response = client.open(f"/api/v1/memory/{theirs.id}{path}", method=method, json=body, headers=headers)
        assert response.status_code == 404, (method, path)
    assert "identity" not in str(_query(client, headers, query="identity other agent"))
    assert table_state() == before
    flush_all()


# ----- 5: events read; the classify, context, episodic nodes; link as an event and a history entry -----


def test_agent_endpoint_counts_events_by_node_and_op_over_24_hours_and_7_days(client, supervisor):
    agent, headers = supervisor
    saved = client.post(
        "/api/v1/memory",
        json={
            "content": "The user discussed the garden plan.",
            "memory_type": "episodic",
            "category": "event",
        },
        headers=headers,
    )
    assert saved.status_code == 201, saved.get_json()
    refused = client.post(
        "/api/v1/memory",
        json={"content": "I think you like tea.", "category": "preferences"},
        headers=headers,
    )
    assert refused.status_code == 422
    held = client.post(
        "/api/v1/memory",
        json={
            "content": "The user wants to be called Ana.",
            "category": "profile",
            "field": "preferred_name",
        },
        headers=headers,
    )
    assert held.status_code == 202
    _query(client, headers, query="garden")
    _query(client, headers, query="garden", thread_id="t1", since_rev=0)
    flush_all()
    old = OpEvent(agent_id=agent.id, node="worker", op="merge", status="ok", ts=utcnow() - timedelta(days=3))
    ancient = OpEvent(
        agent_id=agent.id, node="worker", op="merge", status="ok", ts=utcnow() - timedelta(days=9)
    )
    db.session.add_all([old, ancient])
    db.session.commit()

    counts = {
        (e["node"], e["op"]): (e["last_24h"], e["last_7d"])
        for e in client.get("/api/v1/agent", headers=headers).get_json()["events"]
    }

    assert counts == {
        ("episodic", "classify"): (1, 1),  # the episodic write, classified ok
        ("episodic", "create"): (1, 1),
        ("hotpath", "classify"): (2, 2),  # refused by the writing rules (error), held for consent (skipped)
        ("hotpath", "create"): (1, 1),  # the held write, skipped
        ("hotpath", "search"): (1, 1),
        ("context", "search"): (1, 1),  # the query that asked for the delta header
        ("worker", "merge"): (0, 1),
    }
    statuses = db.session.execute(
        sa.select(OpEvent.node, OpEvent.status).where(OpEvent.op == "classify").order_by(OpEvent.id)
    ).all()
    assert [tuple(s) for s in statuses] == [("episodic", "ok"), ("hotpath", "error"), ("hotpath", "skipped")]


def test_jobs_page_shows_event_counts_without_content(app, make_agent, redis_conn):
    make_admin()
    web = signed_in(app)
    agent = make_agent()
    create_memory(agent.id, "The user hums while cooking.", actor="agent", category="event")
    page = web.get("/jobs").text
    assert 'data-event="hotpath/create"' in page and "hums" not in page
    row = page.split('data-event="hotpath/create"')[1].split("</tr>")[0]
    assert row.count(">1<") == 2  # one in the last 24 hours, one in the last 7 days


def test_a_link_is_an_event_and_a_history_entry_on_both_memories(client, supervisor):
    from jobs.relations import link_related

    agent, headers = supervisor
    first = create_memory(agent.id, "Maya prefers green tea in the morning before work", actor="agent",
                          memory_type="semantic", category="preferences")  # fmt: skip
    second = create_memory(agent.id, "Maya prefers green tea in the morning before the standup", actor="agent",
                           memory_type="semantic", category="preferences")  # fmt: skip
    assert link_related(agent.id, [first.id, second.id]) == 1
    for mine, other in ((first, second), (second, first)):
        events = client.get(f"/api/v1/memory/{mine.id}/history", headers=headers).get_json()["events"]
        assert events[0]["event"] == "LINK" and events[0]["actor"] == "system:relations"
        assert events[0]["meta"]["linked"][0][0] == other.id and events[0]["old"] is None is events[0]["new"]
    links = db.session.execute(sa.select(OpEvent.node, OpEvent.memory_id).where(OpEvent.op == "link")).all()
    assert sorted(tuple(r) for r in links) == [("worker", first.id), ("worker", second.id)]
    assert db.session.scalar(sa.select(sa.func.count()).select_from(ChangeLogEntry)) == 0  # not a change
    # In the console's timeline a link is listed under the memory but offers no rollback: it changed no row.
    from models.readmodels.timeline import timeline

    ops = timeline(agent_id=agent.id, memory_id=first.id).ops
    assert [op.touches_memories for op in ops if op.records[0].action == "link"] == [False]


# ----- 7: honest offline mode -----


def test_a_model_without_an_endpoint_fails_the_session_naming_the_setting_and_changes_nothing(
    app, make_agent, redis_conn, monkeypatch, runner
):
    from jobs.llm import ModelNotConfigured
    from jobs.refinement import run_refinement
    from models import RefinementSession

    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.setitem(app.config, name, None)
    agent = make_agent(model_id="vendor/some-model", core_token_budget=100)
    for text in (
        "The user likes the green tea.",
        "The user likes green tea.",
    ):  # the offline rule merges these
        create_memory(agent.id, text, actor="admin:1")
    for i in range(8):  # enough others that one merge stays above the 80% retention floor
        create_memory(agent.id, f"The user owns {i + 2} different bicycles in the shed.", actor="admin:1")
    before = table_state()

    with pytest.raises(ModelNotConfigured, match="OPENAI_BASE_URL"):
        run_refinement(agent.id, "test", force=True)

    session = db.session.scalars(
        sa.select(RefinementSession).where(RefinementSession.agent_id == agent.id)
    ).one()
    assert (session.status, session.model) == ("failed", "vendor/some-model")
    assert "OPENAI_BASE_URL" in session.error and "base_url" in session.error
    after = table_state()
    assert after["agent_memories"] == before["agent_memories"]
    cli = runner.invoke(args=["refine", agent.name, "--now"])
    assert cli.exit_code != 0 and "OPENAI_BASE_URL" in cli.output

    app.config["LLM_OFFLINE"] = True  # offline only when asked for
    result = run_refinement(agent.id, "test", force=True)
    assert (result["status"], result["model"], result["stats"]["consolidations"]) == (
        "completed",
        "offline",
        1,
    )


def test_offline_consent_is_recorded_as_policy_and_a_models_as_the_agents(app, make_agent, redis_conn, llm):
    from jobs.refinement import run_refinement
    from tests import scripted_llm as s

    offline = make_agent()
    create_memory(offline.id, "The user likes green tea.", actor="admin:1")
    run_refinement(offline.id, "test", force=True)
    online = make_agent(model_id="scripted-model", base_url=llm.url)
    create_memory(online.id, "The user likes green tea.", actor="admin:1")
    llm.script = [s.consent(True), s.complete("Nothing to merge.")]
    assert run_refinement(online.id, "test", force=True)["status"] == "completed"

    decided = dict(
        db.session.execute(
            sa.select(AuditLog.agent_id, AuditLog.data).where(AuditLog.action == "refinement_consent")
        ).all()
    )
    assert decided == {
        offline.id: {"consent": True, "decided_by": "policy"},
        online.id: {"consent": True, "decided_by": "agent"},
    }


def test_the_offline_same_fact_rule_merges_only_what_the_readme_says():
    """docs/how-to/model-endpoint.md: the same words after normalising, articles aside, with the same numbers,
    dates, names and negations. A near-identical wording with one other word (92% of the words in order) is
    not the same fact."""
    from jobs.samefact import same_fact

    assert same_fact("The user’s dog can't swim & hates rain.", "the users dog cannot swim and hates rain")
    assert same_fact(
        "User walks the dog around the park every morning.", "The user walks a dog around park every morning"
    )
    for near_miss in (
        "The user walks the dog around the park every morning before school.",  # one word in 12 differs
        "The user walks the dog around the park every evening before work.",
        "The user walks the dog around the park every morning before work, not at night.",
        "Sam walks the dog around the park every morning before work.",
    ):
        assert not same_fact("The user walks the dog around the park every morning before work.", near_miss)
