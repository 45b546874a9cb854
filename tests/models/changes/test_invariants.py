"""The named tests of docs/reference/invariants.md invariants 1, 2, 8 and 10 for the guarded core."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError

from models import (
    Agent,
    AgentMemory,
    AuditContent,
    AuditLog,
    ConstitutionalLocked,
    ImmutableMemory,
    NotFound,
    RefinementSession,
    ValidationFailed,
    db,
    utcnow,
)
from models.changes.dedup import dedup_for_agent
from models.changes.mutations import (
    consolidate_memories,
    create_memory,
    restore_memory,
    set_constitutional,
    soft_delete_memories,
    update_memory,
)
from models.changes.ttl import expire_memory, purge_memory
from tests.conftest import DB_KIND

# ----- helpers -----


def _row_state(memory_id: int) -> dict | None:
    """Every column of a memory row, read fresh from the database."""
    db.session.expire_all()
    row = db.session.get(AgentMemory, memory_id)
    if row is None:
        return None
    return {c.key: getattr(row, c.key) for c in sa.inspect(AgentMemory).column_attrs}


def _counts() -> tuple[int, int, int]:
    return (
        db.session.scalar(sa.select(sa.func.count()).select_from(AgentMemory)),
        db.session.scalar(sa.select(sa.func.count()).select_from(AuditLog)),
        db.session.scalar(sa.select(sa.func.count()).select_from(AuditContent)),
    )


@pytest.fixture
def failing_audit_inserts():
    """Make every INSERT into audit_logs fail inside the database, the way a full disk or a lost
    connection would; removed again after the test."""
    if DB_KIND == "sqlite":
        create = [
            "CREATE TRIGGER test_audit_insert_fails BEFORE INSERT ON audit_logs "
            "BEGIN SELECT RAISE(ABORT, 'audit write failed'); END"
        ]
        drop = ["DROP TRIGGER test_audit_insert_fails"]
    else:
        create = [
            "CREATE FUNCTION test_audit_insert_fails() RETURNS trigger AS $$ "
            "BEGIN RAISE EXCEPTION 'audit write failed'; END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER test_audit_insert_fails BEFORE INSERT ON audit_logs "
            "FOR EACH ROW EXECUTE FUNCTION test_audit_insert_fails()",
        ]
        drop = [
            "DROP TRIGGER test_audit_insert_fails ON audit_logs",
            "DROP FUNCTION test_audit_insert_fails()",
        ]
    for statement in create:
        db.session.execute(sa.text(statement))
    db.session.commit()
    yield
    db.session.rollback()
    for statement in drop:
        db.session.execute(sa.text(statement))
    db.session.commit()


# ----- invariant 1: audited in the same transaction -----


def test_every_mutation_writes_a_full_before_and_after_snapshot(make_agent):
    agent = make_agent()
    memory = create_memory(agent.id, "Prefers tea", actor="admin:1", tags=["drink"])
    update_memory(agent.id, memory.id, actor="admin:1", content="Prefers green tea")
    soft_delete_memories(agent.id, [memory.id], actor="admin:1")
    restore_memory(agent.id, memory.id, actor="admin:1")

    records = db.session.scalars(
        sa.select(AuditLog).where(AuditLog.memory_id == memory.id).order_by(AuditLog.id)
    ).all()
    assert [r.action for r in records] == ["create", "update", "delete", "restore"]
    assert all(r.actor == "admin:1" and r.agent_id == agent.id and r.created_at for r in records)
    assert records[0].before is None
    for earlier, later in zip(records, records[1:], strict=False):
        assert later.before == earlier.after  # an unbroken chain of full snapshots
    texts = {db.session.get(AuditContent, r.after["content_ref"]).content for r in records}
    assert texts == {"Prefers tea", "Prefers green tea"}
    assert records[2].after["deleted_at"] is not None and records[3].after["deleted_at"] is None
    assert records[1].after["tags"] == ["drink"] and records[1].after["token_estimate"] == 5


@pytest.mark.parametrize(
    "operation",
    ["create", "update", "delete", "restore", "consolidate", "protect", "unprotect", "dedup"],
)
def test_failed_audit_write_leaves_memory_unchanged(make_agent, operation, request):
    agent = make_agent()
    first = create_memory(agent.id, "Walks at dawn", actor="admin:1")
    second = create_memory(agent.id, "walks at dawn", actor="admin:1")
    deleted = create_memory(agent.id, "Reads poetry", actor="admin:1")
    soft_delete_memories(agent.id, [deleted.id], actor="admin:1")
    locked = create_memory(agent.id, "Never lies", actor="admin:1", constitutional=True)
    ids = [first.id, second.id, deleted.id, locked.id]
    before_rows = {i: _row_state(i) for i in ids}
    before_counts = _counts()

    request.getfixturevalue("failing_audit_inserts")
    calls = {
        "create": lambda: create_memory(agent.id, "New thing", actor="admin:1"),
        "update": lambda: update_memory(agent.id, first.id, actor="admin:1", content="Runs at dawn"),
        "delete": lambda: soft_delete_memories(agent.id, [first.id, second.id], actor="admin:1"),
        "restore": lambda: restore_memory(agent.id, deleted.id, actor="admin:1"),
        "consolidate": lambda: consolidate_memories(
            agent.id, [first.id, second.id], "Walks at dawn.", actor="admin:1"
        ),
        "protect": lambda: set_constitutional(agent.id, first.id, True, actor="admin:1"),
        "unprotect": lambda: set_constitutional(agent.id, locked.id, False, actor="admin:1"),
        "dedup": lambda: dedup_for_agent(agent.id),
    }
    with pytest.raises(DBAPIError):
        calls[operation]()

    assert _counts() == before_counts
    assert {i: _row_state(i) for i in ids} == before_rows


def test_consolidation_audit_links_sources_and_result_in_one_operation(make_agent):
    agent = make_agent()
    a = create_memory(agent.id, "Likes jazz", actor="admin:1", created_at=utcnow() - timedelta(days=30))
    b = create_memory(agent.id, "Likes jazz music", actor="admin:1", created_at=utcnow() - timedelta(days=3))
    merged = consolidate_memories(agent.id, [a.id, b.id], "Likes jazz music", actor="admin:1")

    records = db.session.scalars(sa.select(AuditLog).where(AuditLog.op_id == _op_of(merged.id))).all()
    by_memory = {r.memory_id: r for r in records}
    assert by_memory[merged.id].action == "consolidate"
    assert by_memory[merged.id].data["merged_from"] == [a.id, b.id]
    assert by_memory[a.id].data["merged_into"] == merged.id == by_memory[b.id].data["merged_into"]
    assert merged.created_at == a.created_at  # the earliest origin date survives
    assert _row_state(a.id)["deleted_at"] is not None and _row_state(b.id)["deleted_at"] is not None


def _op_of(memory_id: int) -> str:
    return db.session.scalar(
        sa.select(AuditLog.op_id).where(AuditLog.memory_id == memory_id).order_by(AuditLog.id)
    )


# ----- invariant 2: constitutional is a lock -----


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE agent_memories SET deleted_at = CURRENT_TIMESTAMP WHERE id = :id",
        "UPDATE agent_memories SET deleted_at = CURRENT_TIMESTAMP, constitutional = false WHERE id = :id",
        "UPDATE agent_memories SET purge_at = CURRENT_TIMESTAMP WHERE id = :id",
        "DELETE FROM agent_memories WHERE id = :id",
    ],
)
def test_constitutional_memory_survives_raw_sql_delete(make_agent, statement):
    agent = make_agent()
    memory = create_memory(agent.id, "I keep my promises", actor="admin:1", constitutional=True)
    state = _row_state(memory.id)
    with pytest.raises(DBAPIError, match="constitutional"):
        db.session.execute(sa.text(statement), {"id": memory.id})
        db.session.commit()
    db.session.rollback()
    assert _row_state(memory.id) == state


def test_agent_paths_cannot_delete_consolidate_or_purge_constitutional(make_agent):
    agent = make_agent()
    locked = create_memory(agent.id, "Core vow", actor="admin:1", constitutional=True)
    other = create_memory(agent.id, "Core vow, restated", actor="admin:1")
    session = RefinementSession(agent_id=agent.id, trigger="test", status="running")
    db.session.add(session)
    db.session.commit()
    state = _row_state(locked.id)
    counts = _counts()

    for actor in ("agent", "system:dedup", "admin:1"):
        with pytest.raises(ConstitutionalLocked):
            soft_delete_memories(agent.id, [locked.id], actor=actor, session_id=session.id)
        with pytest.raises(ConstitutionalLocked):
            consolidate_memories(
                agent.id, [locked.id, other.id], "Merged", actor=actor, session_id=session.id
            )
    with pytest.raises(ConstitutionalLocked):
        expire_memory(agent.id, locked.id)
    with pytest.raises(ConstitutionalLocked):
        set_constitutional(agent.id, locked.id, False, actor="agent", session_id=session.id)
    with pytest.raises(ConstitutionalLocked):
        update_memory(agent.id, locked.id, actor="agent", content="Tightened outside a session")
    assert _row_state(locked.id) == state and _counts() == counts


def test_constitutional_flag_rules(make_agent):
    agent = make_agent()
    memory = create_memory(agent.id, "Be kind", actor="admin:1")
    session = RefinementSession(agent_id=agent.id, trigger="test", status="running")
    db.session.add(session)
    db.session.commit()

    with pytest.raises(ConstitutionalLocked):  # agents protect only inside a refinement session
        set_constitutional(agent.id, memory.id, True, actor="agent")
    with pytest.raises(ConstitutionalLocked):
        create_memory(agent.id, "Sneaky vow", actor="agent", constitutional=True)
    with pytest.raises(ConstitutionalLocked):  # jobs act for the agent: no locks from them either
        create_memory(agent.id, "Job-made vow", actor="system:tom", constitutional=True)
    set_constitutional(agent.id, memory.id, True, actor="agent", session_id=session.id)
    # Constitutional means frozen for agents and jobs, inside a refinement session too.
    for actor in ("agent", "system:consolidation"):
        for change in ({"content": "Be kind."}, {"memory_type": "semantic"}, {"tags": ["x"]}):
            with pytest.raises(ConstitutionalLocked):
                update_memory(agent.id, memory.id, actor=actor, session_id=session.id, **change)
    # An admin may edit it, audited; empty content is refused for everyone.
    update_memory(agent.id, memory.id, actor="admin:7", content="Be kind.")
    with pytest.raises(ValidationFailed):
        update_memory(agent.id, memory.id, actor="admin:7", content="   ")
    # Only an admin clears the flag, audited with the admin's id; then it may be deleted.
    set_constitutional(agent.id, memory.id, False, actor="admin:7")
    last = db.session.scalar(sa.select(AuditLog).order_by(AuditLog.id.desc()).limit(1))
    assert (last.action, last.actor) == ("unprotect", "admin:7")
    soft_delete_memories(agent.id, [memory.id], actor="admin:7")


def test_immutable_tagged_memories_refuse_agent_changes(make_agent):
    agent = make_agent()
    voice = create_memory(agent.id, "Her laugh at the lake", actor="admin:1", tags=["Voice"])
    twin = create_memory(agent.id, "Her laugh at the lake", actor="admin:1")
    state = _row_state(voice.id)
    with pytest.raises(ImmutableMemory):
        update_memory(agent.id, voice.id, actor="agent", content="A laugh")
    with pytest.raises(ImmutableMemory):
        soft_delete_memories(agent.id, [voice.id], actor="agent")
    with pytest.raises(ImmutableMemory):
        consolidate_memories(agent.id, [voice.id, twin.id], "A laugh", actor="agent")
    assert _row_state(voice.id) == state


def test_audit_log_is_append_only_in_the_database(make_agent):
    agent = make_agent()
    create_memory(agent.id, "Something", actor="admin:1")
    for statement in ("UPDATE audit_logs SET actor = 'forged'", "DELETE FROM audit_logs"):
        with pytest.raises(DBAPIError, match="append-only"):
            db.session.execute(sa.text(statement))
            db.session.commit()
        db.session.rollback()
    with pytest.raises(DBAPIError):
        db.session.execute(sa.text("UPDATE audit_contents SET content = 'forged'"))
        db.session.commit()
    db.session.rollback()
    assert db.session.scalar(sa.select(AuditLog.actor)) == "admin:1"


# ----- content-blind dedup -----


def test_dedup_is_content_blind_keeps_earliest_and_skips_constitutional(make_agent):
    agent = make_agent()
    now = utcnow()
    keeper = create_memory(agent.id, "Likes tea", actor="admin:1", created_at=now - timedelta(days=9))
    later = create_memory(agent.id, "  likes TEA ", actor="admin:1", created_at=now - timedelta(days=2))
    locked = create_memory(agent.id, "LIKES TEA", actor="admin:1", constitutional=True, created_at=now)
    journal = create_memory(agent.id, "likes tea", actor="admin:1", memory_type="journal")
    distinct = create_memory(agent.id, "Likes coffee", actor="admin:1")
    voice = create_memory(agent.id, "Likes tea!", actor="admin:1", tags=["voice"])
    voice_twin = create_memory(agent.id, "likes tea!", actor="admin:1", tags=["voice"])
    db.session.expire_all()

    removed = dedup_for_agent(agent.id)
    assert removed == [later.id]
    assert all(
        _row_state(i)["deleted_at"] is None
        for i in (keeper.id, locked.id, journal.id, distinct.id, voice.id, voice_twin.id)
    )
    record = db.session.scalar(sa.select(AuditLog).where(AuditLog.action == "dedup"))
    assert record.actor == "system:dedup" and record.memory_id == later.id
    assert dedup_for_agent(agent.id) == []  # idempotent


def test_set_based_dedup_writes_the_same_snapshots_events_and_thread_changes_as_one_by_one(make_agent):
    from models import ChangeLogEntry, OpEvent

    agent = make_agent()
    now = utcnow()
    scope = {"thread_id": "t1", "user_id": "u1"}  # twins only within one scope
    keeper = create_memory(
        agent.id, "Likes tea", actor="admin:1", created_at=now - timedelta(days=3), **scope
    )
    twins = [create_memory(agent.id, "likes tea", actor="admin:1", importance=4, **scope) for n in range(3)]
    before = {t.id: _row_state(t.id) for t in twins}
    db.session.expire_all()

    removed = dedup_for_agent(agent.id)

    assert removed == [t.id for t in twins] and _row_state(keeper.id)["deleted_at"] is None
    records = db.session.scalars(
        sa.select(AuditLog).where(AuditLog.action == "dedup").order_by(AuditLog.id)
    ).all()
    assert [r.memory_id for r in records] == removed and len({r.op_id for r in records}) == 1
    for record in records:
        row = _row_state(record.memory_id)
        assert row["deleted_at"] is not None
        assert {k: v for k, v in record.before.items() if k != "content_ref"} == {
            k: (v.isoformat() if hasattr(v, "isoformat") else v)
            for k, v in before[record.memory_id].items()
            if k in record.before
        }
        assert record.after == {
            **record.before,
            "deleted_at": row["deleted_at"].isoformat(),
            "updated_at": row["updated_at"].isoformat(),
        }
        content = db.session.get(AuditContent, record.before["content_ref"])
        assert content.memory_id == record.memory_id and content.sha256  # the twin's own filed text
    changes = db.session.execute(
        sa.select(ChangeLogEntry.thread_id, ChangeLogEntry.memory_id, ChangeLogEntry.event)
        .where(ChangeLogEntry.event == "deleted")
        .order_by(ChangeLogEntry.id)
    ).all()
    assert changes == [("t1", t.id, "deleted") for t in twins]
    ops = db.session.execute(
        sa.select(OpEvent.memory_id, OpEvent.user_id).where(
            OpEvent.memory_id.in_(removed), OpEvent.op == "delete"
        )
    ).all()
    assert sorted(ops) == sorted((t.id, "u1") for t in twins)


def test_dedup_never_loads_memory_content(make_agent):
    agent = make_agent()
    for text in ("Alpha", "alpha", "ALPHA ", "Beta"):
        create_memory(agent.id, text, actor="admin:1")
    db.session.expire_all()
    seen: list[str] = []

    def watch(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)

    sa.event.listen(db.engine, "before_cursor_execute", watch)
    try:
        assert len(dedup_for_agent(agent.id)) == 2
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", watch)
    reads = [s for s in seen if s.lstrip().upper().startswith("SELECT") and "agent_memories" in s]
    assert reads and not any("agent_memories.content," in s or "agent_memories.content " in s for s in reads)


# ----- invariant 8: soft-deleted never leaks -----


def test_soft_deleted_memories_never_reach_prompt_scopes_or_token_counts(make_agent):
    agent = make_agent(core_token_budget=100)
    now = utcnow()
    kept = create_memory(agent.id, "Kept core memory", actor="admin:1", created_at=now - timedelta(days=40))
    gone = create_memory(agent.id, "Deleted core memory " * 30, actor="admin:1")
    fresh_journal = create_memory(agent.id, "Today's journal", actor="admin:1", memory_type="journal")
    old_journal = create_memory(
        agent.id, "Old journal", actor="admin:1", memory_type="journal", created_at=now - timedelta(days=8)
    )
    gone_journal = create_memory(agent.id, "Deleted journal", actor="admin:1", memory_type="journal")
    assert agent.needs_refinement
    soft_delete_memories(agent.id, [gone.id, gone_journal.id], actor="admin:1")

    prompt_ids = db.session.scalars(AgentMemory.for_prompt(agent.id)).all()
    assert [m.id for m in prompt_ids] == [
        kept.id,
        fresh_journal.id,
    ]  # oldest first, no deleted, no stale journal
    assert old_journal.id not in [m.id for m in prompt_ids]
    assert agent.core_token_usage == kept.token_estimate
    assert not agent.needs_refinement
    assert agent.id not in Agent.over_budget_ids()
    active_ids = {m.id for m in db.session.scalars(AgentMemory.active(agent.id))}
    deleted_ids = {m.id for m in db.session.scalars(AgentMemory.deleted(agent.id))}
    assert active_ids.isdisjoint(deleted_ids) and deleted_ids == {gone.id, gone_journal.id}
    assert {m.id for m in db.session.scalars(AgentMemory.non_constitutional(agent.id))} == active_ids


def test_deleted_memories_cannot_be_changed_by_tools(make_agent):
    agent = make_agent()
    a = create_memory(agent.id, "One", actor="admin:1")
    b = create_memory(agent.id, "Two", actor="admin:1")
    soft_delete_memories(agent.id, [a.id], actor="admin:1")
    with pytest.raises(NotFound):
        update_memory(agent.id, a.id, actor="agent", content="Revived")
    with pytest.raises(NotFound):
        consolidate_memories(agent.id, [a.id, b.id], "Both", actor="agent")


# ----- invariant 10: bad input, a clear error, nothing changed -----


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda a, m: create_memory(a, "", actor="admin:1"), "empty"),
        (lambda a, m: create_memory(a, "x" * 10_001, actor="admin:1"), "10,000"),
        (lambda a, m: create_memory(a, 42, actor="admin:1"), "string"),
        (lambda a, m: create_memory(a, "ok", actor="admin:1", memory_type="dream"), "memory_type"),
        (lambda a, m: create_memory(a, "ok", actor="admin:1", importance=6), "importance"),
        (lambda a, m: create_memory(a, "ok", actor="admin:1", tags="notalist"), "tags"),
        (lambda a, m: create_memory(a, "ok", actor="root"), "actor"),
        (lambda a, m: create_memory(a + 999, "ok", actor="admin:1"), "not found"),
        (lambda a, m: update_memory(a, m, actor="admin:1", content="\x00"), "NUL"),
        (lambda a, m: update_memory(a, m, actor="admin:1", colour="red"), "unknown"),
        (lambda a, m: update_memory(a, "1; DROP TABLE agents", actor="admin:1", content="x"), "integer"),
        (lambda a, m: update_memory(a, m + 999, actor="admin:1", content="x"), "not found"),
        (lambda a, m: soft_delete_memories(a, [], actor="admin:1"), "non-empty"),
        (lambda a, m: soft_delete_memories(a, [m, m], actor="admin:1"), "duplicates"),
        (lambda a, m: consolidate_memories(a, [m], "x", actor="admin:1"), "at least 2"),
        (lambda a, m: consolidate_memories(a, [m, m + 999], "x", actor="admin:1"), "not found"),
        (lambda a, m: restore_memory(a, m, actor="admin:1"), "not deleted"),
        (lambda a, m: purge_memory(a, m), "not deleted"),
    ],
)
def test_bad_input_gets_a_clear_error_and_changes_nothing(make_agent, call, message):
    agent = make_agent()
    memory = create_memory(agent.id, "Original", actor="admin:1")
    state, counts = _row_state(memory.id), _counts()
    with pytest.raises((ValidationFailed, NotFound)) as err:
        call(agent.id, memory.id)
    assert message.lower() in str(err.value).lower()
    assert "Original" not in str(err.value)  # errors never quote memory content
    db.session.rollback()
    assert _row_state(memory.id) == state and _counts() == counts


def test_other_agents_memories_look_missing(make_agent):
    owner, intruder = make_agent(), make_agent()
    memory = create_memory(owner.id, "Private", actor="admin:1")
    state = _row_state(memory.id)
    with pytest.raises(NotFound) as err:
        update_memory(intruder.id, memory.id, actor="agent", content="Mine now")
    assert str(err.value) == f"memory #{memory.id} not found"
    with pytest.raises(NotFound):
        soft_delete_memories(intruder.id, [memory.id], actor="agent")
    assert _row_state(memory.id) == state


def test_ttl_purge_redacts_history_but_keeps_a_tombstone(make_agent):
    agent = make_agent()
    memory = create_memory(agent.id, "Episodic note", actor="admin:1", memory_type="episodic")
    core = create_memory(agent.id, "Core note", actor="admin:1")
    with pytest.raises(ValidationFailed, match="core"):
        expire_memory(agent.id, core.id)
    expire_memory(agent.id, memory.id, grace=timedelta(seconds=-1))
    audit_ids = db.session.scalars(sa.select(AuditLog.id).where(AuditLog.memory_id == memory.id)).all()
    purge_memory(agent.id, memory.id)

    assert _row_state(memory.id) is None
    texts = db.session.scalars(
        sa.select(AuditContent.content).where(AuditContent.memory_id == memory.id)
    ).all()
    assert texts and all(t is None for t in texts)
    record = db.session.scalar(sa.select(AuditLog).where(AuditLog.action == "purge"))
    assert record.data["tombstone"]["token_estimate"] == 4 and record.data["content_redacted"] is True
    # Earlier audit rows are untouched (still there, same ids): only the side table was redacted.
    assert set(audit_ids) < set(
        db.session.scalars(sa.select(AuditLog.id).where(AuditLog.memory_id == memory.id))
    )


def _aggregate(agent_id: int) -> tuple[int, int]:
    db.session.expire_all()
    tokens, count = db.session.execute(
        sa.select(sa.func.coalesce(sa.func.sum(AgentMemory.token_estimate), 0), sa.func.count()).where(
            AgentMemory.agent_id == agent_id,
            AgentMemory.memory_type == "core",
            AgentMemory.deleted_at.is_(None),
        )
    ).one()
    return int(tokens), int(count)


def _active(agent_id: int) -> int:
    return db.session.scalar(
        sa.select(sa.func.count()).where(AgentMemory.agent_id == agent_id, AgentMemory.deleted_at.is_(None))
    )


def test_maintained_core_totals_and_memory_count_follow_every_write_path_including_raw_and_bulk_sql(
    make_agent,
):
    """agents.core_tokens / core_count (migration 0005) are what the breaker and the scans read, and
    agents.memory_count (0021) what the storage quota reads: they must equal the aggregate after any
    write, whoever makes it."""
    from models.agents.agent import core_totals
    from models.agents.quotas import memory_count
    from models.changes.timemachine import rollback_operation

    agent, other = make_agent(), make_agent()

    def check() -> None:
        for a in (agent, other):
            assert core_totals(a.id) == _aggregate(a.id)
            assert memory_count(a.id) == _active(a.id)

    a = create_memory(agent.id, "Core fact one", actor="admin:1")
    b = create_memory(agent.id, "Core fact two, a little longer than the first", actor="admin:1")
    c = create_memory(agent.id, "An episodic note", actor="admin:1", memory_type="episodic")
    assert core_totals(agent.id) == (a.token_estimate + b.token_estimate, 2)
    check()
    update_memory(agent.id, a.id, actor="admin:1", content="Core fact one, now rewritten to be rather longer")
    check()
    update_memory(agent.id, c.id, actor="admin:1", memory_type="core")  # becomes core
    check()
    update_memory(agent.id, b.id, actor="admin:1", memory_type="semantic")  # stops being core
    check()
    (deleted,) = soft_delete_memories(agent.id, [a.id], actor="admin:1")
    check()
    restore_memory(agent.id, a.id, actor="admin:1")
    check()
    merged = consolidate_memories(agent.id, [a.id, c.id], "Core facts, merged", actor="admin:1")
    check()
    op = db.session.scalar(sa.select(AuditLog.op_id).where(AuditLog.memory_id == merged.id))
    rollback_operation(op, actor="admin:1")
    check()
    dedup_for_agent(agent.id)
    check()
    # Raw and bulk SQL, bypassing the ORM: the triggers still keep count.
    table = AgentMemory.__table__
    db.session.execute(
        table.insert(),
        [
            {
                "agent_id": agent.id,
                "memory_type": "core",
                "content": f"bulk {n}",
                "content_hash": f"h{n}",
                "token_estimate": 3 + n,
                "tags": [],
                "pinned": False,
                "constitutional": False,
                "created_at": utcnow(),
                "updated_at": utcnow(),
            }
            for n in range(5)
        ]
        + [
            {
                "agent_id": other.id,
                "memory_type": "core",
                "content": "other",
                "content_hash": "o",
                "token_estimate": 7,
                "tags": [],
                "pinned": False,
                "constitutional": False,
                "created_at": utcnow(),
                "updated_at": utcnow(),
            }
        ],
    )
    check()
    db.session.execute(
        table.update().where(table.c.content.like("bulk %")).values(token_estimate=table.c.token_estimate * 2)
    )
    check()
    with pytest.raises(sa.exc.IntegrityError), db.session.begin_nested():  # no memory ever changes owner
        db.session.execute(table.update().where(table.c.content == "bulk 0").values(agent_id=other.id))
    check()
    db.session.execute(table.delete().where(table.c.content.in_(["bulk 1", "bulk 2"])))
    check()
    db.session.execute(table.update().where(table.c.id == b.id).values(deleted_at=utcnow()))  # not core
    check()
    db.session.rollback()  # a rolled-back transaction leaves the totals as they were
    check()
    assert core_totals(other.id) == (0, 0)
    assert memory_count(other.id) == 0


def _block_version(agent_id: int) -> int:
    return db.session.scalar(sa.select(Agent.block_version).where(Agent.id == agent_id))


_T = AgentMemory.__table__
_SHOWN_CHANGES = {
    "content": {"content": "Rewritten by raw SQL."},
    "memory_type": {"memory_type": "semantic"},
    "origin date": {"created_at": utcnow() - timedelta(days=1)},
    "tokens": {"token_estimate": 99},
    "tags": {"tags": ["raw"]},
    "category": {"category": "goals"},
    "soft delete": {"deleted_at": utcnow()},
}


@pytest.mark.parametrize("change", [*_SHOWN_CHANGES, "insert", "delete", "lock"])
def test_block_version_is_new_after_every_raw_write_the_context_block_could_show(make_agent, change):
    """GET /api/v1/context keeps a block's digest under agents.block_version (migration 0024): a write
    the block could show that left the version as it was would keep answering 304 to an old block."""
    agent, other = make_agent(), make_agent()
    memory = create_memory(agent.id, "A core fact.", actor="admin:1")
    db.session.commit()
    before, others = _block_version(agent.id), _block_version(other.id)
    if change == "insert":
        row = {"agent_id": agent.id, "memory_type": "core", "content": "raw", "content_hash": "r",
               "token_estimate": 1, "tags": [], "pinned": False, "constitutional": False,
               "created_at": utcnow(), "updated_at": utcnow()}  # fmt: skip
        db.session.execute(_T.insert(), [row])
    elif change == "delete":
        db.session.execute(_T.delete().where(_T.c.id == memory.id))
    elif change == "lock":
        db.session.execute(_T.update().where(_T.c.id == memory.id).values(constitutional=True))
    else:
        db.session.execute(_T.update().where(_T.c.id == memory.id).values(**_SHOWN_CHANGES[change]))
    db.session.commit()
    assert _block_version(agent.id) != before, change
    assert _block_version(other.id) == others, "another agent's block is not touched"


def test_block_version_stays_through_writes_the_context_block_does_not_show(make_agent):
    agent = make_agent()
    memory = create_memory(agent.id, "A core fact.", actor="admin:1")
    db.session.commit()
    before = _block_version(agent.id)
    update_memory(agent.id, memory.id, actor="admin:1", importance=5)
    db.session.execute(_T.update().where(_T.c.id == memory.id).values(last_accessed_at=utcnow(), pinned=True))
    db.session.execute(_T.update().where(_T.c.id == memory.id).values(content=_T.c.content))  # same text
    db.session.commit()
    assert _block_version(agent.id) == before


def test_batched_dedup_keeps_one_op_per_agent_so_each_agent_rolls_back_alone(make_agent):
    from models.changes.dedup import dedup_for_agents
    from models.changes.timemachine import rollback_operation

    a, b = make_agent(), make_agent()
    now = utcnow()
    vow = create_memory(
        a.id, "Never lies", actor="admin:1", constitutional=True, created_at=now - timedelta(days=5)
    )
    twin_of_vow = create_memory(a.id, "never lies", actor="admin:1")  # the constitutional one is the keeper
    b_keeper = create_memory(b.id, "Likes tea", actor="admin:1", created_at=now - timedelta(days=1))
    b_twin = create_memory(b.id, "LIKES TEA", actor="admin:1")
    create_memory(b.id, "likes tea", actor="admin:1", memory_type="journal")  # not core: never compared

    removed = dedup_for_agents([a.id, b.id, a.id])

    assert removed == {a.id: [twin_of_vow.id], b.id: [b_twin.id]}
    assert _row_state(vow.id)["deleted_at"] is None and _row_state(b_keeper.id)["deleted_at"] is None
    ops = dict(
        db.session.execute(
            sa.select(AuditLog.agent_id, AuditLog.op_id).where(AuditLog.action == "dedup")
        ).all()
    )
    assert set(ops) == {a.id, b.id} and ops[a.id] != ops[b.id]
    rollback_operation(ops[a.id], actor="admin:1")
    assert _row_state(twin_of_vow.id)["deleted_at"] is None  # a's dedup undone...
    assert _row_state(b_twin.id)["deleted_at"] is not None  # ...b's untouched
    assert dedup_for_agents([b.id]) == {} and dedup_for_agents([]) == {}
