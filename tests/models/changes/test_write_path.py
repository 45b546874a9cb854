"""The one write path (models/changes/write.py): every actor's every write obeys the same rules.

- Scope survives every merge: a merged memory keeps the scope its sources share, a merge never joins two
  users, and a rollback restores each source's scope exactly.
- One table of write entry points, one parametrized test: a locked memory is refused the same way
  through each, with nothing half-written.
- Consent is a person's: a held patch is confirmed only with a recorded acknowledgement from a later
  turn, or by an admin; expiry is audited.
- The retention guard bounds an agent's own deletions outside a session.
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
import sqlalchemy as sa

from jobs.consolidation import consolidate_agent
from jobs.maintenance import dedup_all_agents
from models import AgentMemory, AuditLog, db
from models.changes import patches, retention, write
from models.changes.dedup import dedup_for_agent
from models.changes.patch_tables import ProposedPatch
from models.changes.timemachine import rollback_operation
from models.errors import ConstitutionalLocked, DomainError, ValidationFailed
from models.history.session import set_baseline, start_session
from models.integrations import langgraph_store as store
from models.refinement.toolbox import RefinementToolbox

SCOPE = {"user_id": "u9", "thread_id": "t9", "run_id": "r9", "actor_id": "a9", "role": "user"}
FACT = "Maya takes two sugars in her coffee"


def _headers(agent) -> dict[str, str]:
    token = agent.issue_token()
    db.session.commit()
    return {"Authorization": f"Bearer {token}"}


def _row(memory_id: int) -> dict:
    db.session.expire_all()
    memory = db.session.get(AgentMemory, memory_id)
    return {
        c: getattr(memory, c)
        for c in ("content", "memory_type", "tags", "constitutional", "deleted_at", *SCOPE)
    }


def _scope(memory: AgentMemory) -> dict:
    return {name: getattr(memory, name) for name in SCOPE}


def _session(agent):
    session = start_session(agent.id, "test", model="scripted")
    set_baseline(session, agent.core_tokens, agent.core_count)
    db.session.commit()
    return session


def _active_with(agent_id: int, content: str) -> list[AgentMemory]:
    db.session.expire_all()
    return list(
        db.session.scalars(
            sa.select(AgentMemory).where(
                AgentMemory.agent_id == agent_id,
                AgentMemory.content == content,
                AgentMemory.deleted_at.is_(None),
            )
        )
    )


# ----- scope survives every merge -----


def _merge_by_tool(agent, ids):
    for n in range(10):  # enough core memory that one merge stays within the session's breaker
        write.save(agent.id, f"Unrelated standing fact number {n}", actor="admin:t")
    db.session.refresh(agent)
    out = RefinementToolbox(_session(agent).id).call(
        "consolidate_memories", {"ids": ids, "new_content": FACT}
    )
    assert out["ok"], out
    return out["new_id"]


def _merge_by_write(agent, ids):
    return write.merge(agent.id, ids, FACT, actor="agent", require_type=None).id


def _merge_by_daily_consolidation(agent, ids):
    result = consolidate_agent(agent.id)
    assert result["merged"] == 1, result
    (merged,) = _active_with(agent.id, FACT)
    return merged.id


MERGING_PATHS = {
    "refinement tool": ("core", _merge_by_tool),
    "write.merge": ("semantic", _merge_by_write),
    "daily consolidation": ("semantic", _merge_by_daily_consolidation),
}


@pytest.mark.parametrize("path", MERGING_PATHS)
def test_a_merged_memory_keeps_its_sources_scope_and_is_found_by_the_users_query_and_export(
    path, client, make_agent, redis_conn
):
    memory_type, merge = MERGING_PATHS[path]
    agent = make_agent(role="supervisor")
    first = write.save(agent.id, FACT, actor="agent", memory_type=memory_type, **SCOPE).memory
    twin = write.save(agent.id, FACT.lower() + ".", actor="agent", memory_type=memory_type, **SCOPE).memory

    merged = db.session.get(AgentMemory, merge(agent, [first.id, twin.id]))

    assert _scope(merged) == SCOPE
    headers = _headers(agent)
    found = client.post(
        "/api/v1/memory/query",
        json={"query": "sugars coffee", "filters": {"user_id": "u9"}, "return": "full"},
        headers=headers,
    ).get_json()
    assert merged.id in [m["id"] for m in found["results"]], found
    lines = [
        json.loads(line)
        for line in client.get("/api/v1/export?user_id=u9", headers=headers).data.splitlines()
    ]
    exported = {line["memory"]["id"]: line["deleted"] for line in lines if line["type"] == "memory"}
    assert exported == {first.id: True, twin.id: True, merged.id: False}


def test_a_rollback_of_a_merge_restores_each_sources_scope_exactly(make_agent):
    agent = make_agent()
    a = write.save(agent.id, FACT, actor="agent", **SCOPE).memory
    b = write.save(agent.id, FACT + " daily", actor="agent", **{**SCOPE, "thread_id": "t10"}).memory
    before = {m.id: _row(m.id) for m in (a, b)}

    merged = write.merge(agent.id, [a.id, b.id], FACT, actor="agent")

    assert (merged.user_id, merged.thread_id, merged.run_id) == (
        "u9",
        None,
        "r9",
    )  # threads differ: the user's
    record = db.session.scalar(sa.select(AuditLog).where(AuditLog.action == "consolidate"))
    assert record.data["scope_dropped"] == {"thread_id": ["t9", "t10"]}
    rollback_operation(record.op_id, actor="admin:1")
    assert {m.id: _row(m.id) for m in (a, b)} == before
    assert _row(merged.id)["deleted_at"] is not None


def test_two_users_identical_facts_are_never_merged_by_any_path(make_agent, redis_conn):
    agent = make_agent()
    mine = write.save(agent.id, FACT, actor="agent", memory_type="semantic", user_id="u1").memory
    theirs = write.save(agent.id, FACT, actor="agent", memory_type="semantic", user_id="u2").memory
    unscoped = write.save(agent.id, FACT, actor="agent", memory_type="semantic").memory
    core_a = write.save(agent.id, FACT, actor="agent", user_id="u1").memory
    core_b = write.save(agent.id, FACT, actor="agent", user_id="u2").memory

    with pytest.raises(ValidationFailed) as refused:
        write.merge(agent.id, [mine.id, theirs.id], FACT, actor="agent", require_type=None)
    assert refused.value.details["ids"] == [mine.id, theirs.id] and "different users" in refused.value.message
    with pytest.raises(ValidationFailed):
        write.merge(agent.id, [mine.id, unscoped.id], FACT, actor="agent", require_type=None)
    out = RefinementToolbox(_session(agent).id).call(
        "consolidate_memories", {"ids": [core_a.id, core_b.id], "new_content": FACT}
    )
    assert out["ok"] is False and out["error"] == "invalid"
    assert consolidate_agent(agent.id).get("merged", 0) == 0
    assert dedup_for_agent(agent.id) == []
    assert len(_active_with(agent.id, FACT)) == 5


def test_dedup_removes_twins_only_within_one_scope(make_agent):
    agent = make_agent()
    keep = write.save(agent.id, FACT, actor="agent", **SCOPE).memory
    twin = write.save(agent.id, FACT, actor="agent", **SCOPE).memory
    other_thread = write.save(agent.id, FACT, actor="agent", **{**SCOPE, "thread_id": "t10"}).memory

    assert dedup_for_agent(agent.id) == [twin.id]
    assert {m.id for m in _active_with(agent.id, FACT)} == {keep.id, other_thread.id}
    dedup_all_agents()
    assert {m.id for m in _active_with(agent.id, FACT)} == {keep.id, other_thread.id}


# ----- one table of entry points: a locked memory is refused alike through each -----


def _api(method):
    def run(ctx, memory):
        body = {"content": "The user is rewritten."} if method == "PATCH" else None
        response = ctx["client"].open(
            f"/api/v1/memory/{memory.id}", method=method, json=body, headers=ctx["headers"]
        )
        return response.status_code, response.get_json()["error"]

    return run


def _store(op):
    def run(ctx, memory):
        item = store.StoreItem(
            agent_id=memory.agent_id, namespace="notes", key="k", memory_id=memory.id, value_format="text"
        )
        db.session.add(item)
        db.session.commit()
        allow = lambda categories: None  # noqa: E731 (every category allowed here)
        try:
            if op == "put":
                store.put_item(
                    memory.agent_id, ["notes"], "k", {"content": "Rewritten."}, category=None,
                    memory_type="core", check_category=allow,
                )  # fmt: skip
            else:
                store.delete_item(memory.agent_id, ["notes"], "k", check_category=allow)
        except ConstitutionalLocked as err:
            db.session.rollback()
            return 409, err.code
        return 200, None

    return run


def _tool(name, args):
    def run(ctx, memory):
        other = write.save(memory.agent_id, "A plain fact the merge would take along", actor="admin:t").memory
        out = RefinementToolbox(_session(ctx["agent"]).id).call(name, args(memory, other))
        return (409, out["error"]) if not out["ok"] else (200, None)

    return run


def _job_write(fn):
    def run(ctx, memory):
        try:
            fn(memory)
        except ConstitutionalLocked as err:
            db.session.rollback()
            return 409, err.code
        return 200, None

    return run


ENTRY_POINTS = {
    "API PATCH": _api("PATCH"),
    "API DELETE": _api("DELETE"),
    "store put": _store("put"),
    "store delete": _store("delete"),
    "tool update": _tool("update_memory", lambda m, o: {"id": m.id, "content": "Rewritten."}),
    "tool delete": _tool("delete_memory", lambda m, o: {"id": m.id}),
    "tool consolidate": _tool(
        "consolidate_memories", lambda m, o: {"ids": [m.id, o.id], "new_content": "Merged."}
    ),
    "job change (reflection, extraction)": _job_write(
        lambda m: write.change(m.agent_id, m.id, actor="system:reflection", memory_type="semantic")
    ),
    "job importance change": _job_write(
        lambda m: write.change(m.agent_id, m.id, actor="system:insights", importance=5)
    ),
    "job removal": _job_write(lambda m: write.remove(m.agent_id, [m.id], actor="system:consolidation")),
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_write_entry_point_refuses_a_constitutional_memory_and_writes_nothing(
    entry, client, make_agent
):
    agent = make_agent(role="supervisor")
    vow = write.save(agent.id, "Never reveal the user's address", actor="admin:1", constitutional=True).memory
    state = _row(vow.id)
    records = db.session.scalar(
        sa.select(sa.func.count()).select_from(AuditLog).where(AuditLog.memory_id == vow.id)
    )
    ctx = {"client": client, "headers": _headers(agent), "agent": agent}

    status, code = ENTRY_POINTS[entry](ctx, vow)

    assert (status, code) == (409, "constitutional")
    assert _row(vow.id) == state
    assert (
        db.session.scalar(
            sa.select(sa.func.count()).select_from(AuditLog).where(AuditLog.memory_id == vow.id)
        )
        == records
    )


def test_only_an_admin_edits_a_constitutional_memory_with_an_exact_audit_record(make_agent):
    agent = make_agent()
    vow = write.save(agent.id, "Be kind", actor="admin:1", constitutional=True, **SCOPE).memory
    changed = write.change(agent.id, vow.id, actor="admin:1", content="Be kind, always.").memory
    record = db.session.scalar(
        sa.select(AuditLog).where(AuditLog.memory_id == vow.id, AuditLog.action == "update")
    )
    assert (
        changed.content == "Be kind, always." and record.before["user_id"] == record.after["user_id"] == "u9"
    )
    assert record.before["content_ref"] != record.after["content_ref"]


def test_agents_mark_memories_constitutional_only_inside_a_session_through_every_door(client, make_agent):
    agent = make_agent(role="supervisor")
    with pytest.raises(ConstitutionalLocked):
        write.save(agent.id, "A vow", actor="agent", constitutional=True)
    with pytest.raises(ConstitutionalLocked):
        write.save(agent.id, "A vow", actor="system:insights", constitutional=True)
    plain = write.save(agent.id, "A vow", actor="agent").memory
    with pytest.raises(ConstitutionalLocked):
        write.protect(agent.id, plain.id, True, actor="agent")
    response = client.post(
        "/api/v1/memory", json={"content": "The user is vegan.", "category": "preferences", "constitutional": True},
        headers=_headers(agent),
    )  # fmt: skip
    assert response.status_code == 409 and response.get_json()["error"] == "constitutional"
    session = _session(agent)
    assert write.protect(agent.id, plain.id, True, actor="agent", session_id=session.id).constitutional


# ----- consent is a person's -----


def _held_name(client, headers, turn="turn-1"):
    response = client.post(
        "/api/v1/memory",
        json={
            "content": "The user goes by Sam.",
            "category": "preferences",
            "field": "preferred_name",
            "turn_id": turn,
        },
        headers=headers,
    )
    assert response.status_code == 202
    return response.get_json()["patch"]["id"]


def test_a_held_patch_cannot_be_confirmed_by_the_turn_that_proposed_it(client, make_agent):
    agent = make_agent(role="supervisor")
    headers = _headers(agent)
    patch_id = _held_name(client, headers)
    confirm = f"/api/v1/patches/{patch_id}/confirm"

    no_turn = client.post(confirm, json={"source": "chat_ack"}, headers=headers)
    same = client.post(confirm, json={"source": "chat_ack", "user_turn": "turn-1"}, headers=headers)
    assert no_turn.status_code == 422
    assert same.status_code == 409 and same.get_json()["error"] == "consent_same_turn"
    assert db.session.get(ProposedPatch, patch_id).status == "pending" and not _active_with(
        agent.id, "The user goes by Sam."
    )

    later = client.post(confirm, json={"source": "chat_ack", "user_turn": "turn-2"}, headers=headers)
    assert later.status_code == 200 and later.get_json()["patch"]["status"] == "confirmed"
    record = db.session.scalar(sa.select(AuditLog).where(AuditLog.action == "consent_confirmed"))
    assert (
        record.data["acknowledgement"]["user_turn"] == "turn-2"
        and record.data["acknowledgement"]["by"] == "agent"
    )
    db.session.expire_all()
    assert db.session.get(ProposedPatch, patch_id).acknowledgement["user_turn"] == "turn-2"


def test_an_admin_confirms_or_declines_a_held_patch_on_the_record(client, make_agent):
    agent = make_agent(role="supervisor")
    headers = _headers(agent)
    first, second = _held_name(client, headers, "t-a"), None
    response = client.post(
        "/api/v1/memory",
        json={
            "content": "The user lives in Lyon.",
            "category": "preferences",
            "field": "city",
            "turn_id": "t-b",
        },
        headers=headers,
    )
    second = response.get_json()["patch"]["id"]

    patches.confirm(agent.id, first, actor="admin:7")
    patches.reject(agent.id, second, actor="admin:7")

    db.session.expire_all()
    decided = {p.id: (p.status, p.decided_by) for p in db.session.scalars(sa.select(ProposedPatch))}
    assert decided == {first: ("confirmed", "console"), second: ("rejected", "console")}
    assert db.session.get(ProposedPatch, first).acknowledgement["by"] == "admin:7"
    assert len(_active_with(agent.id, "The user goes by Sam.")) == 1
    with pytest.raises(ValidationFailed):
        patches.confirm(agent.id, second, actor="system:insights")


def test_held_patches_expire_after_seven_days_with_an_audit_record(client, make_agent):
    agent = make_agent(role="supervisor")
    patch_id = _held_name(client, _headers(agent))
    created = db.session.get(ProposedPatch, patch_id).created_at

    assert patches.expire_patches(now=created + timedelta(days=6)) == 0
    assert patches.expire_patches(now=created + timedelta(days=7, seconds=1)) == 1

    db.session.expire_all()
    patch = db.session.get(ProposedPatch, patch_id)
    assert (patch.status, patch.changes) == ("expired", None)
    record = db.session.scalar(sa.select(AuditLog).where(AuditLog.action == "consent_expired"))
    assert record.data["patch_id"] == patch_id and "content" not in json.dumps(record.data)


# ----- the retention guard -----


def test_an_agents_own_deletions_stop_at_its_retention_threshold_until_an_admin_lifts_the_guard(
    client, make_agent
):
    agent = make_agent(role="supervisor")
    ids = [
        write.save(agent.id, f"Core fact number {n} about the user", actor="admin:1").memory.id
        for n in range(40)
    ]
    headers = _headers(agent)

    statuses = [client.delete(f"/api/v1/memory/{i}", headers=headers) for i in ids]

    deleted = [r for r in statuses if r.status_code == 200]
    refused = [r for r in statuses if r.status_code == 409]
    assert len(deleted) == 8 and len(refused) == 32  # 80 % of 40 kept
    assert (
        refused[0].get_json()["error"] == "retention_guard"
        and "retention threshold" in refused[0].get_json()["message"]
    )
    db.session.expire_all()
    assert agent.core_count == 32 and retention.status(agent.id)["engaged"]

    session = _session(agent)  # a session is bound by its own breaker, not by the guard
    assert write.remove(agent.id, [ids[10]], actor="agent", session_id=session.id)
    assert write.remove(agent.id, [ids[11]], actor="system:ttl")  # jobs: their own caps

    retention.lift(agent.id, actor="admin:1")
    assert client.delete(f"/api/v1/memory/{ids[12]}", headers=headers).status_code == 200
    with pytest.raises(ValidationFailed):
        retention.lift(agent.id, actor="agent")


def test_the_retention_guard_can_be_switched_off(client, make_agent, app):
    app.config["RETENTION_GUARD_WINDOW_HOURS"] = 0
    agent = make_agent(role="supervisor")
    ids = [write.save(agent.id, f"Core fact {n}", actor="admin:1").memory.id for n in range(10)]
    headers = _headers(agent)
    assert all(client.delete(f"/api/v1/memory/{i}", headers=headers).status_code == 200 for i in ids)


# ----- the same table, succeeding: whole audit chains, scope kept, quota and writing rules alike -----


def _scoped(agent, n: int = 12) -> list[int]:
    """Core memories of one scope, enough that a session's breaker stays quiet for one operation."""
    return [
        write.save(agent.id, f"Standing fact {n} about the user", actor="admin:t", **SCOPE).memory.id
        for n in range(n)
    ]


def _ok_api(ctx, ids):
    client, headers = ctx["client"], ctx["headers"]
    assert (
        client.post(
            "/api/v1/memory",
            json={
                "content": "The user bakes bread.",
                "category": "preferences",
                "memory_type": "core",
                **SCOPE,
            },
            headers=headers,
        ).status_code
        == 201
    )
    assert (
        client.patch(
            f"/api/v1/memory/{ids[0]}", json={"content": "The user bakes rye bread."}, headers=headers
        ).status_code
        == 200
    )
    assert client.delete(f"/api/v1/memory/{ids[1]}", headers=headers).status_code == 200
    assert client.post(f"/api/v1/memory/{ids[1]}/restore", headers=headers).status_code == 200


def _ok_tools(ctx, ids):
    toolbox = RefinementToolbox(_session(ctx["agent"]).id)
    for name, args in (
        ("update_memory", {"id": ids[0], "content": "Standing fact, tightened"}),
        ("consolidate_memories", {"ids": [ids[1], ids[2]], "new_content": "Two standing facts, together"}),
        ("protect_memory", {"id": ids[3]}),
    ):
        out = toolbox.call(name, args)
        assert out["ok"], out


def _ok_jobs(ctx, ids):
    from models.changes.ttl import expire_memory

    write.change(
        ctx["agent"].id, ids[0], actor="system:extraction", content="Standing fact, updated by a job"
    )
    write.save(ctx["agent"].id, "Standing fact 1 about the user", actor="system:extraction", **SCOPE)
    assert dedup_for_agent(ctx["agent"].id)
    fading = write.save(
        ctx["agent"].id, "The user visited Lyon once.", actor="admin:t", memory_type="episodic", **SCOPE
    )
    expire_memory(ctx["agent"].id, fading.memory.id)
    write.restore(ctx["agent"].id, fading.memory.id, actor="admin:1")


def _ok_rollbacks(ctx, ids):
    from models.changes.timemachine import rollback_agent, rollback_session

    agent = ctx["agent"]
    mark = db.session.scalar(sa.select(sa.func.max(AuditLog.created_at)))
    session = _session(agent)
    out = RefinementToolbox(session.id).call("delete_memory", {"id": ids[0]})
    assert out["ok"], out
    op = write.change(agent.id, ids[1], actor="admin:1", content="Standing fact, edited by hand").memory
    assert op is not None
    rollback_session(session.id, actor="admin:1")
    record = db.session.scalar(
        sa.select(AuditLog).where(AuditLog.memory_id == ids[1]).order_by(AuditLog.id.desc())
    )
    rollback_operation(record.op_id, actor="admin:1")
    rollback_agent(agent.id, mark, actor="admin:1")


SUCCEEDING = {
    "agent API": _ok_api,
    "refinement tools": _ok_tools,
    "jobs": _ok_jobs,
    "Time Machine": _ok_rollbacks,
}


@pytest.mark.parametrize("entry", SUCCEEDING)
def test_every_write_entry_point_leaves_whole_audit_chains_and_keeps_scope(entry, client, make_agent):
    from tests.audit_chain import assert_audit_chains

    agent = make_agent(role="supervisor")
    ids = _scoped(agent)
    SUCCEEDING[entry]({"client": client, "headers": _headers(agent), "agent": agent}, ids)

    db.session.expire_all()
    chains = assert_audit_chains(agent.id)
    assert set(ids) <= set(chains)
    scopes = {
        m.id: _scope(m)
        for m in db.session.scalars(sa.select(AgentMemory).where(AgentMemory.agent_id == agent.id))
    }
    assert all(scope == SCOPE for scope in scopes.values()), scopes


def _create_by(door: str, ctx) -> tuple[int, str]:
    agent = ctx["agent"]
    body = {"content": ctx["content"], "category": "preferences", "memory_type": ctx["type"]}
    if door == "API":
        response = ctx["client"].post("/api/v1/memory", json=body, headers=ctx["headers"])
        return response.status_code, response.get_json().get("error", "")
    try:
        if door == "store":
            store.put_item(
                agent.id, ["notes"], "k", {"content": ctx["content"]}, category="preferences",
                memory_type=ctx["type"], check_category=lambda categories: None,
            )  # fmt: skip
        elif door == "job":
            write.save(agent.id, ctx["content"], actor="system:extraction", memory_type=ctx["type"])
        else:
            write.save(agent.id, ctx["content"], actor="agent", memory_type=ctx["type"])
    except DomainError as err:
        db.session.rollback()
        return err.http_status, err.code
    return 201, ""


CREATING_DOORS = ("API", "store", "job", "write.save")


@pytest.mark.parametrize("door", CREATING_DOORS)
def test_every_creating_entry_point_applies_the_writing_rules_and_the_quota_alike(
    door, client, make_agent, app
):
    agent = make_agent(role="supervisor")
    ctx = {"client": client, "headers": _headers(agent), "agent": agent}
    count = lambda: db.session.scalar(  # noqa: E731
        sa.select(sa.func.count()).select_from(AgentMemory).where(AgentMemory.agent_id == agent.id)
    )

    first_person = _create_by(door, {**ctx, "content": "I like my tea strong.", "type": "semantic"})
    assert first_person == (422, "writing_rule") and count() == 0

    app.config["MAX_MEMORIES_PER_AGENT"] = 1
    write.save(agent.id, "The user already holds one memory.", actor="admin:1")
    over = _create_by(door, {**ctx, "content": "The user likes strong tea.", "type": "semantic"})
    assert over == (409, "quota_exceeded") and count() == 1


def test_dedup_takes_its_agents_rows_before_their_memories_as_every_writer_does(make_agent):
    """The lock order of rows.py (the agent, then its memories) for the set-based dedup too: on PostgreSQL
    a dedup and an API writer of the same agent queue instead of deadlocking in the counter trigger."""
    from tests.conftest import DB_KIND
    from tests.sql_statements import statements_sent

    if DB_KIND != "postgresql":
        pytest.skip("row locks are PostgreSQL's (SQLite's writer lock serialises every writer)")
    agent = make_agent()
    write.save(agent.id, FACT, actor="agent")
    write.save(agent.id, FACT, actor="agent")
    with statements_sent("FOR") as sent:
        assert len(dedup_for_agent(agent.id)) == 1
    locks = [
        statement for statement, _ in sent if "FOR UPDATE" in statement or "FOR NO KEY UPDATE" in statement
    ]
    assert "FROM agents" in locks[0] and "FOR NO KEY UPDATE" in locks[0]
    assert "agent_memories" in locks[1]


# ----- a write answers with what it wrote -----


def test_a_write_returns_the_memory_as_it_left_it_though_another_writer_commits_next(app, make_agent):
    """The objects the write path returns hold the values their own transaction wrote: read after the
    commit (as an API answer is), they do not reload the row a later writer has changed meanwhile."""
    agent_id = make_agent().id
    saved = write.save(agent_id, "Waters the ferns on Sundays", actor="agent").memory
    changed = write.change(agent_id, saved.id, actor="agent", content="Waters the ferns on Saturdays").memory
    (deleted,) = write.remove(agent_id, [saved.id], actor="agent", reason="test")

    def another_writer() -> None:  # its own app context: its own session, as another request's
        with app.app_context():
            write.restore(agent_id, saved.id, actor="agent")
            write.change(agent_id, saved.id, actor="agent", content="Waters the ferns on Fridays")
            db.session.remove()

    thread = threading.Thread(target=another_writer)
    thread.start()
    thread.join(timeout=30)
    assert (saved.content, saved.deleted_at) == ("Waters the ferns on Sundays", None)
    assert (changed.content, changed.deleted_at) == ("Waters the ferns on Saturdays", None)
    assert deleted.deleted_at is not None
    assert _row(saved.id)["content"] == "Waters the ferns on Fridays"  # the later writer's, in the table


def test_a_writes_answer_names_the_revision_it_produced_not_a_later_writers(app, make_agent):
    """A client takes a write's `rev` as its cursor for the thread's delta: the revision of a change
    committed after the write, by someone else, would hide that change from the client for good."""
    from console.api.convert import memory_rev

    agent_id = make_agent().id
    saved = write.save(agent_id, "Waters the ferns on Sundays", actor="agent", thread_id="t-ferns").memory
    changed = write.change(agent_id, saved.id, actor="agent", content="Waters the ferns on Saturdays").memory

    def another_writer() -> None:
        with app.app_context():
            write.change(agent_id, saved.id, actor="agent", content="Waters the ferns on Fridays")
            db.session.remove()

    thread = threading.Thread(target=another_writer)
    thread.start()
    thread.join(timeout=30)
    assert memory_rev(agent_id, changed) == 2  # the create was 1, the later writer's change 3
    db.session.remove()  # a new request: it wrote nothing, so the thread's newest revision of the memory
    assert memory_rev(agent_id, changed) == 3
